"""Lab 6 (labs/06-ptx-optimisation): the grader catches dead-code passes that break kernels
(deleting stores, liveness that stops at block ends, guarded writes taken as certain),
pays a safe but timid pass only part of the points, and its yardsticks are right: the
hand-written kernels each have dead code nanotile's pass removes, and the kernels marked
exact store in the emulator what the interpreter computes."""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType, SimpleNamespace
from typing import ClassVar

import numpy as np
import pytest

from nanotile import labkit
from nanotile.targets.ptx.ir import Instr, PtxKernel
from nanotile.targets.ptx.passes.flow import is_pure, kernel_cfg, live_out
from nanotile.targets.ptx.passes.kernel_pass import KernelPass


@pytest.fixture
def grader() -> ModuleType:
    lab = next(lab for lab in labkit.find_labs(labkit.default_labs_folder())
               if lab.number == 6)
    return lab.grader


@dataclass(frozen=True)
class SketchyDeadCode(KernelPass):
    """One round of dead-code elimination, wrong or timid as asked: ``ends`` is what is
    live at the end of a block ("liveness": the real thing, "nothing", "everything");
    ``guards_kill``: a guarded write ends the life of the value before it; ``stores``:
    stores count as dead too."""

    name: ClassVar[str] = "ptx-dead-code"
    ends: str = "liveness"
    guards_kill: bool = False
    stores: bool = False

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        cfg = kernel_cfg(kernel)
        everything = {r for item in kernel.body if isinstance(item, Instr)
                      for r in item.written + item.read}
        ends = {"liveness": live_out(cfg, kernel.body), "nothing": [set()] * len(cfg.blocks),
                "everything": [everything] * len(cfg.blocks)}[self.ends]
        dead: set[int] = set()
        for block, end in zip(cfg.blocks, ends):
            live = set(end)
            for i in range(block.end - 1, block.start - 1, -1):
                item = kernel.body[i]
                if not isinstance(item, Instr):
                    continue
                removable = is_pure(item) or (self.stores and item.root == "st")
                if removable and not live & set(item.written):
                    dead.add(i)
                    continue
                if item.pred is None or self.guards_kill:
                    live -= set(item.written)
                live |= set(item.read)
        kernel.body = [item for i, item in enumerate(kernel.body) if i not in dead]
        return bool(dead)


def hand_written(grader, *names: str) -> list:
    return [grader.Kernel(name, hand_written=True) for name in names]


def test_a_pass_that_deletes_stores_loses_everything(grader):
    student = SimpleNamespace(PASS=SketchyDeadCode(stores=True))
    score = grader._removals(hand_written(grader, "chain", "branches"),
                             "warp_instructions")(student)
    assert score.fraction == 0 and "0/2 kernels right" in score.message
    assert "chain.ptx: WRONG results" in score.message


def test_liveness_that_stops_at_block_ends_is_caught(grader):
    student = SimpleNamespace(PASS=SketchyDeadCode(ends="nothing"))
    assert grader.outcome(student, hand_written(grader, "chain")[0]).right
    for kernel in hand_written(grader, "loop", "branches", "exits"):
        assert not grader.outcome(student, kernel).right, kernel.name


def test_a_guarded_write_taken_as_certain_is_caught(grader):
    student = SimpleNamespace(PASS=SketchyDeadCode(guards_kill=True))
    result = grader.outcome(student, hand_written(grader, "guarded")[0])
    assert not result.right and "WRONG results" in result.problem


def test_a_wrong_kernel_costs_what_a_right_one_earns(grader):
    student = SimpleNamespace(PASS=SketchyDeadCode(guards_kill=True))
    score = grader._removals(hand_written(grader, "guarded", "chain", "branches"),
                             "warp_instructions")(student)
    assert score.fraction == pytest.approx(1 / 3)
    assert "- 1 for the wrong kernels" in score.message


def test_a_timid_pass_is_right_but_earns_part_of_the_points(grader):
    student = SimpleNamespace(PASS=SketchyDeadCode(ends="everything"))
    kernels = hand_written(grader, "chain", "loop") + [grader.Kernel("axpy", "sm_90")]
    score = grader._removals(kernels, "warp_instructions")(student)
    assert "3/3 kernels right" in score.message and 0 < score.fraction < 0.5


def test_nanotiles_pass_removes_something_from_every_hand_written_kernel(grader):
    reference = grader.solution(True)
    for kernel in grader.HAND_WRITTEN:
        result = grader.outcome(reference, kernel)
        assert result.right
        assert result.nanotile.warp_instructions < result.unoptimised.warp_instructions


def test_exact_kernels_store_what_the_interpreter_computes(grader):
    for name, source in grader.SOURCES.items():
        kernel = grader.Kernel(name, "sm_90")
        unoptimised = grader._baseline(kernel)[1].stored
        same = all(np.array_equal(a.view(np.uint8), b.view(np.uint8))
                   for a, b in zip(unoptimised, grader._interpreted(kernel)))
        assert same == source.exact, name


def test_without_ptxas_the_part_follows_the_emulator(grader, monkeypatch):
    import nanotile.targets.compile

    monkeypatch.setattr(nanotile.targets.compile, "ptxas_path", lambda: None)
    grader.HAND_WRITTEN = hand_written(grader, "guarded", "chain")
    grader.COMPILED = []
    score = grader.check_ptxas(SimpleNamespace(PASS=SketchyDeadCode(guards_kill=True)))
    assert score.fraction == 0.5 and "ptxas is not installed" in score.message


def test_using_nanotiles_liveness_is_refused(grader, tmp_path):
    copied = tmp_path / "dead_code.py"
    copied.write_text("from nanotile.targets.ptx.passes.flow import live_out\n")
    grader.STARTER = copied
    with pytest.raises(ImportError, match="live_out"):
        grader.solution(False)
