"""The pass manager: verification after each pass, --check-semantics, stop/start,
timing, and deliberately broken passes caught and named."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from nanotile.diagnostics import CompileError
from nanotile.ir.core import Module
from nanotile.ir.rewrite import all_ops
from nanotile.loader import load_file
from nanotile.passes.base import Pass, PassContext
from nanotile.passes.manager import RunOptions, run_pipeline, select_steps, timing_report
from nanotile.passes.registry import parse_pipeline

from .support import EXAMPLES, needs_interp


@dataclass(frozen=True)
class AddBecomesSub(Pass):
    """Broken on purpose: turns every addf into subf (stays in its language)."""

    name = "broken-add"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        for op in all_ops(module):
            if op.name == "addf":
                op.name = "subf"
        return True


@dataclass(frozen=True)
class ClaimsCanonKeepsAssume(Pass):
    """Broken on purpose: declares tile-canon as its output but leaves assume ops."""

    name = "broken-canon"
    output = "tile-canon"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        return False


@dataclass(frozen=True)
class MovesFirstOpLast(Pass):
    """Broken on purpose: moves the first op of each kernel before its terminator."""

    name = "broken-order"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        for entry in module.entries():
            ops = entry.regions[0].block.ops
            ops.insert(len(ops) - 1, ops.pop(0))
        return True


@dataclass(frozen=True)
class NeedsCanon(Pass):
    """Reads tile-canon only."""

    name = "needs-canon"
    input = "tile-canon"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        return False


def rms_norm() -> Module:
    """examples/rms_norm: its addf ops (the row sum, + eps) decide what it computes."""
    return load_file(str(EXAMPLES / "rms_norm.tileirbc"))


def test_language_checker_names_the_broken_pass_and_the_op():
    with pytest.raises(CompileError) as info:
        run_pipeline(rms_norm(), parse_pipeline("cse") + [ClaimsCanonKeepsAssume()])
    message = info.value.diagnostics[0].message
    assert "after pass 'broken-canon' (output language tile-canon)" in message
    assert "op 'assume' is not part of language 'tile-canon'" in message


def test_structural_invariant_names_the_broken_pass():
    with pytest.raises(CompileError) as info:
        run_pipeline(rms_norm(), [MovesFirstOpLast()])
    text = info.value.format()
    assert "after pass 'broken-order'" in text and "used before it is defined" in text


def test_no_verify_lets_it_through():
    run_pipeline(rms_norm(), [ClaimsCanonKeepsAssume()], RunOptions(verify=False))


@dataclass(frozen=True)
class ChangesNothing(Pass):
    """Leaves the module as it is and says so."""

    name = "changes-nothing"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        return False


def test_a_pass_that_changed_nothing_is_not_checked_again():
    """As in MLIR: a module the pass left unchanged was checked already (as the input,
    or after the pass that last changed it); a pass that changes it is checked."""
    options = RunOptions(time_passes=True)
    run_pipeline(rms_norm(), [ChangesNothing(), ChangesNothing(), AddBecomesSub(),
                                ChangesNothing()], options)
    checks = [name for name, _ in options.timings if name == "(verify)"]
    assert len(checks) == 2  # the input, and after broken-add


def test_input_language_is_checked():
    with pytest.raises(CompileError, match="pass 'needs-canon' reads language 'tile-canon', "
                                           "but the module is in 'tile'"):
        run_pipeline(rms_norm(), [NeedsCanon()], RunOptions(input_language="tile"))
    with pytest.raises(CompileError, match="the input is not in language tile-canon: "
                                           "op 'assume'"):
        run_pipeline(rms_norm(), [NeedsCanon()])
    run_pipeline(rms_norm(), parse_pipeline("assume-to-facts,cse") + [NeedsCanon()])


@needs_interp
def test_check_semantics_names_the_first_pass_that_changes_a_result():
    steps = parse_pipeline("assume-to-facts,cse") + [AddBecomesSub()] + parse_pipeline("dce")
    with pytest.raises(CompileError) as info:
        run_pipeline(rms_norm(), steps, RunOptions(check_semantics=True))
    message = info.value.diagnostics[0].message
    assert message.startswith("pass 'broken-add' changed what the program computes")
    assert "@rms_norm" in message and "array argument #2" in message


@needs_interp
def test_check_semantics_is_quiet_for_correct_passes_and_blind_without_the_flag():
    run_pipeline(rms_norm(), [AddBecomesSub()])  # nothing checks meaning by default
    run_pipeline(rms_norm(), parse_pipeline("cse,dce"), RunOptions(check_semantics=True))


def test_stop_and_start_after_select_steps():
    steps = parse_pipeline("assume-to-facts,cse,dce,fold-constants")
    todo, first, language = select_steps(steps, RunOptions(start_after="assume-to-facts",
                                                           stop_after="dce"))
    assert [s.name for s in todo] == ["cse", "dce"]
    assert first == 1 and language == "tile-canon"
    with pytest.raises(CompileError, match="--stop-after=licm: no pass of that name"):
        select_steps(steps, RunOptions(stop_after="licm"))


def test_stop_after_really_stops():
    module = rms_norm()
    run_pipeline(module, parse_pipeline("cse,assume-to-facts,dce"),
                 RunOptions(stop_after="cse"))
    assert any(op.name == "assume" for op in module.walk())


def test_time_passes_table_has_every_pass_and_a_total():
    options = RunOptions(time_passes=True)
    run_pipeline(rms_norm(), parse_pipeline("cse,dce"), options)
    report = timing_report(options.timings)
    assert "Execution time report" in report
    for name in ("cse", "dce", "(verify)", "Total"):
        assert name in report
    total = float(report.split("Total Execution Time:")[1].split()[0])
    assert total >= 0


def test_input_is_checked_against_the_language_resumed_from():
    steps = parse_pipeline("assume-to-facts,cse")
    with pytest.raises(CompileError, match="the input is not in language tile-canon: op "
                                           "'assume' is not part"):
        run_pipeline(rms_norm(), steps, RunOptions(start_after="assume-to-facts"))
    module = rms_norm()
    run_pipeline(module, steps[:1])
    run_pipeline(module, steps, RunOptions(start_after="assume-to-facts"))


@dataclass(frozen=True)
class WrongResultType(Pass):
    """Broken on purpose: gives addf a result type its operands do not have."""

    name = "broken-type"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        from nanotile.ir.types import F16, TileType

        for op in all_ops(module):
            if op.name == "addf":
                op.results[0].type = TileType(op.results[0].type.shape, F16)
        return True


def test_dialect_verifier_runs_after_each_pass_and_points_at_the_op():
    pytest.importorskip("nanotile.verify")
    with pytest.raises(CompileError) as info:
        run_pipeline(load_file(str(EXAMPLES / "rms_norm.mlir")),
                     parse_pipeline("cse") + [WrongResultType()])
    (diag,) = [d for d in info.value.diagnostics if "addf" in d.message]
    assert diag.message.startswith("after pass 'broken-type' (output language tile)")
    assert "'cuda_tile.addf' op failed to verify" in diag.message
    # where the op is: its line and column in the text it was read from
    line = (EXAMPLES / "rms_norm.mlir").read_text().splitlines()[diag.line - 1]
    assert line[diag.column - 1:].startswith("addf ")


def test_stop_before_start_is_a_user_error():
    steps = parse_pipeline("assume-to-facts,cse,dce")
    with pytest.raises(CompileError, match="--stop-after=assume-to-facts comes before"):
        select_steps(steps, RunOptions(start_after="cse", stop_after="assume-to-facts"))
