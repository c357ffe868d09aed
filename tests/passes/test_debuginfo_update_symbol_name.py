"""test-debuginfo-update-symbol-name (nanotile/passes/test_debuginfo_update_symbol_name.py):
its refusals, and what it renames. The debug-info part is NVIDIA's
Dialect/CudaTile/debuginfo_update_symbol_names*.mlir (tests/conformance) and the golden
test."""

from __future__ import annotations

import pytest

from nanotile.diagnostics import CompileError
from nanotile.ir.parser import parse_text
from nanotile.passes.base import PassContext
from nanotile.passes.registry import parse_pipeline

KERNELS = """cuda_tile.module @kernels {
  global @table alignment = 4 <i32: [1, 2]> : tile<2xi32>
  entry @first(%p: tile<ptr<i32>>) {
    %g = get_global @table : tile<ptr<i32>>
    return
  }
  entry @second() {
    return
  }
}
"""


def run(options: str):
    module = parse_text(KERNELS, "k.mlir")
    (step,) = parse_pipeline(f"test-debuginfo-update-symbol-name{{{options}}}")
    changed = step.apply(module, PassContext())
    return module, changed


@pytest.mark.parametrize("options, message, line", [
    ("symbol-to-rename=kernels::third new-name=x",
     "could not find symbol op with name '@kernels::@third'", 1),
    ("symbol-to-rename=other::first new-name=x",
     "could not find symbol op with name '@other::@first'", 1),
    ("symbol-to-rename=kernels::first scope=kernels::nope new-name=x",
     "could not find symbol op with name '@kernels::@nope'", 1),
    ("symbol-to-rename=kernels::first scope=kernels::second new-name=x",
     "attempted to update symbol names in a scope that did not enclose the symbol", 3),
])
def test_refusals_are_located(options, message, line):
    with pytest.raises(CompileError) as caught:
        run(options)
    (error,) = caught.value.diagnostics
    assert message in error.message and error.line == line


def test_scope_note_points_at_the_scope():
    with pytest.raises(CompileError) as caught:
        run("symbol-to-rename=kernels::first scope=kernels::second new-name=x")
    (note,) = caught.value.diagnostics[0].notes
    assert note.severity == "note" and note.message == "scope defined here" and note.line == 7


def test_uses_are_renamed_only_when_asked():
    module, _ = run("symbol-to-rename=kernels::table new-name=lut")
    assert module.lookup("lut") is not None
    assert next(op for op in module.walk() if op.name == "get_global") \
        .attributes["name"] == "table"
    module, _ = run("symbol-to-rename=kernels::table new-name=lut update-uses=true")
    assert next(op for op in module.walk() if op.name == "get_global") \
        .attributes["name"] == "lut"


def test_the_module_itself_and_no_symbol():
    module, changed = run("symbol-to-rename=kernels new-name=renamed")
    assert changed and module.name == "renamed"
    module, changed = run("")
    assert not changed and module.lookup("first") is not None
