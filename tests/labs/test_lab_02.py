"""Lab 2 (tile-level passes): the golden kernels test the passes (they hold after the
project's pass and fail without it), the student's pass really takes the project's place
in the pipeline, and the grader catches passes that are wrong in the usual ways
(hoisting a load, merging across branches, ignoring attributes or commutativity, lying
about a change), and golden test files that test nothing."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

import nanotile
from nanotile import labkit
from nanotile.ir.core import Module, Operation
from nanotile.ir.rewrite import all_ops, erase, insert_before
from nanotile.passes import loop_invariant_code_motion as project_licm
from nanotile.passes.base import PassContext
from nanotile.passes.cse import CommonSubexpressionElimination
from nanotile.passes.loop_invariant_code_motion import LoopInvariantCodeMotion
from nanotile.passes.registry import PASSES

LAB = next(lab for lab in labkit.find_labs(labkit.default_labs_folder()) if lab.number == 2)
LICM, CSE = "loop-invariant-code-motion", "cse"


@pytest.fixture(scope="module")
def grader() -> ModuleType:
    return LAB.grader


@pytest.fixture(scope="module")
def reference(grader: ModuleType) -> SimpleNamespace:
    return grader.solution(True)


def score(grader: ModuleType, letter: str, solution: SimpleNamespace) -> labkit.Score:
    """Part ``letter`` graded as `nanotile lab check` grades it (exceptions cost it)."""
    part = next(p for p in grader.PARTS if p.name.startswith(f"{letter}."))
    result = labkit._grade_part(part, solution)
    return labkit.Score(result.earned / part.points, result.message)


def with_pass(reference: SimpleNamespace, name: str, pass_: object) -> SimpleNamespace:
    return SimpleNamespace(passes={**reference.passes, name: pass_}, golden=reference.golden)


def test_golden_kernels_hold_with_the_project_pass_and_fail_without(grader) -> None:
    for golden in grader.kernels.KERNELS:
        module = nanotile.parse(golden.text)
        entry = module.entries()[0]
        assert not all(check.holds(entry) for check in golden.checks), golden.name
        PASSES[golden.pass_name]().apply(module, PassContext.from_module(module))
        entry = module.entries()[0]
        assert [c.says for c in golden.checks if not c.holds(entry)] == [], golden.name


def test_effect_kernels_are_ones_the_project_pass_improves(grader) -> None:
    """Part D and E measure something: most of their kernels qualify."""
    for name, measure in ((CSE, "ops"), (LICM, "executed")):
        kernels = grader.pipeline_kernels(name)
        measured = [k for _, k in kernels if grader.project_effect(k, name, measure)]
        assert len(measured) >= 5, name


def test_the_students_object_replaces_the_projects_step(grader) -> None:
    mine = CommonSubexpressionElimination(hoist_constants=False)
    steps = grader.pipeline_with({CSE: mine})
    assert [s for s in steps if s.name == CSE] == [mine]
    assert any(s is mine for s in steps)
    assert PASSES[CSE] is CommonSubexpressionElimination  # the registry is left alone


@dataclass(frozen=True)
class HoistsLoads(LoopInvariantCodeMotion):
    """The project's pass, except that a load counts as movable."""

    def apply(self, module: Module, ctx: PassContext) -> bool:
        moved = False
        for loop in reversed([op for op in all_ops(module) if op.name == "for"]):
            inside = project_licm.defined_inside(loop)
            for op in list(loop.regions[0].block.ops):
                movable = project_licm.movable(op) or op.name == "load_ptr_tko"
                if not movable or any(v in inside for v in op.operands):
                    continue
                erase(op)
                insert_before(loop, op)
                inside.difference_update(op.results)
                moved = True
        return moved


def test_hoisting_a_load_is_caught(grader, reference) -> None:
    solution = with_pass(reference, LICM, HoistsLoads())
    golden = score(grader, "A", solution)
    assert golden.fraction < 1 and "@memory" in golden.message
    meaning = score(grader, "C", solution)
    assert meaning.fraction < 1 and "changed what the program computes" in meaning.message


@dataclass(frozen=True)
class SaysNothingChanged(LoopInvariantCodeMotion):
    def apply(self, module: Module, ctx: PassContext) -> bool:
        super().apply(module, ctx)
        return False


def test_a_pass_hiding_its_changes_is_caught(grader, reference) -> None:
    result = score(grader, "A", with_pass(reference, LICM, SaysNothingChanged()))
    assert result.fraction == 0 and "returned False" in result.message


@dataclass(frozen=True)
class IgnoresAttributes(CommonSubexpressionElimination):
    """Keys ops by name and operands only: divi signed and unsigned look the same."""

    def key(self, op):
        key = super().key(op)
        return None if key is None else (op.name, key[-1])


@dataclass(frozen=True)
class OrderedOperands(CommonSubexpressionElimination):
    def key(self, op):
        key = super().key(op)
        return None if key is None else (*key, tuple(id(v) for v in op.operands))


def merging_pass(shared: Callable[[Operation], bool]) -> CommonSubexpressionElimination:
    """A cse whose table is shared with the regions of the ops ``shared`` accepts
    (the project's: none of reduce and scan, a copy for the others)."""

    @dataclass(frozen=True)
    class Merging(CommonSubexpressionElimination):
        def _visit(self, block, known, mapping):
            for op in list(block.ops):
                op.operands = [mapping.get(v, v) for v in op.operands]
                key = self.key(op)
                if key is not None and key in known:
                    mapping.update(zip(op.results, known[key].results))
                    erase(op)
                    continue
                if key is not None:
                    known[key] = op
                for region in op.regions:
                    for inner in region.blocks:
                        self._visit(inner, known if shared(op) else dict(known), mapping)

    return Merging()


@pytest.mark.parametrize(("wrong", "kernel", "results_change"), [
    (IgnoresAttributes(), "@operands_and_attributes", True),
    (merging_pass(lambda op: True), "@branches", True),  # sibling branches merge
    (merging_pass(lambda op: op.name in ("reduce", "scan")), "@reduce_body", False),
])
def test_unsafe_merges_are_caught(grader, reference, wrong, kernel, results_change) -> None:
    solution = with_pass(reference, CSE, wrong)
    golden = score(grader, "B", solution)
    assert golden.fraction < 1 and kernel in golden.message
    assert (score(grader, "C", solution).fraction < 1) == results_change


def test_forgetting_commutativity_loses_golden_and_effect(grader, reference) -> None:
    solution = with_pass(reference, CSE, OrderedOperands())
    assert "@merge" in score(grader, "B", solution).message
    effect = score(grader, "D", solution)
    assert effect.fraction < 1 and "the project's cse leaves" in effect.message
    assert score(grader, "C", solution).fraction == 1  # safe, only less effective


def test_a_broken_starter_file_costs_only_its_own_pass(grader, reference) -> None:
    solution = with_pass(reference, LICM, SyntaxError("invalid syntax (line 3)"))
    assert score(grader, "A", solution).fraction == 0
    assert score(grader, "B", solution).fraction == 1
    meaning = score(grader, "C", solution)
    assert 0 < meaning.fraction < 1 and "SyntaxError" in meaning.message


def test_a_pass_with_another_name_is_refused(grader, reference) -> None:
    result = score(grader, "B", with_pass(reference, CSE, LoopInvariantCodeMotion()))
    assert result.fraction == 0 and "named 'cse'" in result.message


GOLDEN_HEAD = "// RUN: nanotile-passes %s -p cse | filecheck %s\n"
GOLDEN_KERNEL = """
cuda_tile.module @tests {
  entry @k(%p: tile<ptr<f32>>, %x: tile<f32>) {
    %a = mulf %x, %x : tile<f32>
    %b = mulf %x, %x : tile<f32>
    %s = addf %a, %b : tile<f32>
    %t = store_ptr_tko weak %p, %s : tile<ptr<f32>>, tile<f32> -> token
    return
  }
}
"""


@pytest.mark.parametrize(("checks", "fraction"), [
    ("// CHECK: mulf\n// CHECK-NOT: mulf\n", 1.0),    # tests the merge
    ("// CHECK: mulf\n// CHECK: addf\n", 0.5),         # holds without cse too
    ("// CHECK: mulf\n// CHECK: mulf\n", 0.0),         # wrong: fails with cse
    ("", 0.0),                                         # no checks at all
])
def test_golden_files_are_graded_by_what_they_test(grader, reference, tmp_path: Path,
                                                   checks: str, fraction: float) -> None:
    path = tmp_path / "cse.mlir"
    path.write_text(GOLDEN_HEAD + checks + GOLDEN_KERNEL)
    solution = SimpleNamespace(passes=reference.passes, golden=path)
    assert score(grader, "F", solution).fraction == fraction
