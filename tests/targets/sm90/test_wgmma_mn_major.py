"""wgmma with B read MN-major (rows along N, trans-b = 1: LBO from one 128-byte atom to the
next along N) on every shape, whatever layout B's registers come from: assign-layouts
runs with a plan that always takes B MN-major where the instruction's columns are whole
atoms (the default plan takes it only when B's registers do not run along K), and the
kernel's emulated results equal the interpreter's bit for bit on small integers."""

from __future__ import annotations

import copy
import io
from dataclasses import dataclass

import numpy as np
import pytest

from nanotile.interp import run
from nanotile.ir.parser import parse_text
from nanotile.passes.base import PassContext
from nanotile.passes.manager import PipelineRun, RunOptions
from nanotile.passes.pipelines import default_pipeline
from nanotile.passes.registry import parse_pipeline
from nanotile.ptxemu import run_ptx
from nanotile.targets.compile import assemble, ptxas_path
from nanotile.targets.ptx.assign_layouts import Assignment, cta_warps
from nanotile.targets.sm90 import wgmma_plan
from nanotile.targets.target import WARPS

from ..test_mma import mma_kernel


@dataclass(frozen=True)
class AlwaysMnMajor(wgmma_plan.WgmmaPlan):
    def operand(self, i, t, source=None):
        return super().operand(i, t, None)


def planner(op, warps):
    p = wgmma_plan.plan(op, warps)
    return None if p is None else AlwaysMnMajor(p.element, p.warpgroups, p.n, p.b_mn_major)


def compile_mn_major(text: str) -> str:
    module = parse_text(text, "<k>")
    steps = parse_pipeline(default_pipeline("sm_90"))
    at = [s.name for s in steps].index("assign-layouts")
    PipelineRun(RunOptions(verify=False), io.StringIO()).run(module, steps[:at])
    for entry in module.entries():
        warps = cta_warps(entry, "sm_90")
        Assignment(entry, warps, "8.4", PassContext(), planner).run()
        entry.attributes[WARPS] = warps
    PipelineRun(RunOptions(verify=True), io.StringIO()).run(module, steps[at + 1:])
    return module.ptx.render()


@pytest.mark.parametrize("m,n,k,warps", [(64, 64, 32, 4), (128, 256, 64, 4), (64, 128, 16, 4),
                                         (64, 512, 32, 4), (128, 256, 32, 8)])
def test_mn_major_b_matches_interpreter(m, n, k, warps):
    text = mma_kernel(0, m, n, k, "f16", "f32", warps)
    ptx = compile_mn_major(text)
    assert "wgmma.mma_async" in ptx and all(
        line.rstrip().endswith("0, 1;") for line in ptx.splitlines() if "wgmma.mma_async" in line)
    if ptxas_path() is not None:
        assemble(ptx, "sm_90")
    rng = np.random.default_rng(m + n + k)
    arrays = [rng.integers(-8, 8, (m, k)).astype(np.float16),
              rng.integers(-8, 8, (k, n)).astype(np.float16),
              rng.integers(-100, 100, (m, n)).astype(np.float32),
              np.zeros((m, n), np.float32)]
    want, got = copy.deepcopy(arrays), copy.deepcopy(arrays)
    run(parse_text(text, "<k>"), "k", (1,), *want)
    run_ptx(ptx, "k", grid=(1,), args=got)
    np.testing.assert_array_equal(got[-1], want[-1])
