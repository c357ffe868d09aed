"""A bug inside a pass or the back end: a located "internal error" for the user, the
original exception for tests (chained as __cause__, or raised as is with the knob)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from nanotile import knobs
from nanotile.diagnostics import CompileError
from nanotile.ir.core import Module
from nanotile.ir.parser import parse_text
from nanotile.passes.base import Pass, PassContext
from nanotile.passes.manager import run_pipeline

KERNEL = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<f32>>) {
    %c = constant <f32: 1.0> : tile<f32>
    %d = negf %c : tile<f32>
    %t = store_ptr_tko weak %p, %d : tile<ptr<f32>>, tile<f32> -> token
    return
  }
}
"""


@dataclass(frozen=True)
class CrashesOnNegf(Pass):
    """Broken on purpose: a Python exception while looking at a negf."""

    name = "crash-on-negf"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        for op in module.walk():
            if op.name == "negf":
                return {}[op.name]  # KeyError
        return False


def test_a_crashing_pass_is_a_located_error_with_the_cause_chained(monkeypatch):
    monkeypatch.delenv(knobs.RAISE_INTERNAL_ERRORS, raising=False)
    module = parse_text(KERNEL, "k.mlir")
    with pytest.raises(CompileError) as info:
        run_pipeline(module, [CrashesOnNegf()])
    diag = info.value.diagnostics[0]
    assert (diag.filename, diag.line, diag.column) == ("k.mlir", 4, 10)
    assert diag.message == ("internal error in pass 'crash-on-negf' at 'cuda_tile.negf' "
                            "(KeyError: 'negf')")
    assert isinstance(info.value.__cause__, KeyError)


def test_the_knob_lets_the_original_exception_through(monkeypatch):
    monkeypatch.setenv(knobs.RAISE_INTERNAL_ERRORS, "1")
    with pytest.raises(KeyError):
        run_pipeline(parse_text(KERNEL, "k.mlir"), [CrashesOnNegf()])


def test_compile_to_ptx_keeps_a_located_message_and_the_cause(monkeypatch):
    from nanotile.targets import compile as compile_module
    from nanotile.targets.ptx import select_rules

    def broken(selection, op):
        raise ZeroDivisionError("deliberately")

    monkeypatch.delenv(knobs.RAISE_INTERNAL_ERRORS, raising=False)
    monkeypatch.setitem(select_rules.RULES, "store_ptr_tko", broken)
    with pytest.raises(CompileError) as info:
        compile_module.compile_to_ptx(parse_text(KERNEL, "k.mlir"), "sm_90")
    diag = info.value.diagnostics[0]
    assert (diag.filename, diag.line) == ("k.mlir", 5)
    assert "internal error" in diag.message and "ZeroDivisionError: deliberately" \
        in diag.message and "'cuda_tile.store_ptr_tko'" in diag.message
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    monkeypatch.setenv(knobs.RAISE_INTERNAL_ERRORS, "1")
    with pytest.raises(ZeroDivisionError):
        compile_module.compile_to_ptx(parse_text(KERNEL, "k.mlir"), "sm_90")


@pytest.mark.parametrize("value, on", [("1", True), ("yes", True), ("0", False),
                                       ("", False), ("off", False)])
def test_knob_values(monkeypatch, value, on):
    monkeypatch.setenv(knobs.RAISE_INTERNAL_ERRORS, value)
    assert knobs.raise_internal_errors() is on
