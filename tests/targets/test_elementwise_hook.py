"""The ``elementwise`` hook of target.SELECT_HOOKS: a Target's own rule for one register of
an elementwise op is asked before the shared rules of select_arith (labs/05-lowering puts a
student's rules there). A rule that declines leaves the shared lowering as it was."""

from __future__ import annotations

import dataclasses
import io
from types import MappingProxyType

import numpy as np

from nanotile.ir.parser import parse_text
from nanotile.passes.base import PassContext
from nanotile.passes.manager import PipelineRun, RunOptions
from nanotile.passes.pipelines import default_pipeline
from nanotile.passes.registry import parse_pipeline
from nanotile.ptxemu import run_ptx
from nanotile.targets.compile import compile_to_ptx
from nanotile.targets.ptx.select_instructions import select_program
from nanotile.targets.target import get_target

from .test_ptx_ops import kernel

TEXT = kernel([((128,), "i32"), ((128,), "i32")], ((128,), "i32"),
              "%y = addi %x0, %x1 : tile<128xi32>")


def _compile_for(target) -> str:
    """The default sm_90 pipeline, with instruction selection done for ``target``."""
    steps = parse_pipeline(default_pipeline("sm_90"))
    cut = [s.name for s in steps].index("select-instructions")
    module = parse_text(TEXT, "<hook>")
    PipelineRun(RunOptions(verify=False), io.StringIO()).run(module, steps[:cut])
    module.ptx = select_program(module, target)
    for step in steps[cut + 1:]:
        step.apply(module, PassContext())
    return module.ptx.render()


def _with_rule(rule):
    base = get_target("sm_90")
    return dataclasses.replace(base, select_overrides=MappingProxyType({"elementwise": rule}))


def test_the_targets_rule_lowers_the_op():
    def subtract(lw, op, ins, out) -> bool:
        if op.name != "addi":
            return False
        lw.fn.emit(f"sub.s32 {out}, {ins[0]}, {ins[1]}")
        return True

    ptx = _compile_for(_with_rule(subtract))
    a = np.arange(128, dtype=np.int32) * 3
    b = np.arange(128, dtype=np.int32)
    out = np.zeros(128, np.int32)
    run_ptx(ptx, "k", grid=(1,), args=[a, b, out])
    np.testing.assert_array_equal(out, a - b)


def test_a_rule_that_declines_changes_nothing():
    asked = []

    def decline(lw, op, ins, out) -> bool:
        asked.append(op.name)
        return False

    assert _compile_for(_with_rule(decline)) == compile_to_ptx(parse_text(TEXT, "<hook>"),
                                                               "sm_90")
    assert "addi" in asked
