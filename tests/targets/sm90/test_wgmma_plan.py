"""sm90/wgmma_plan.py: which mmaf run on wgmma, over which warpgroup grid; and the option
of assign-layouts that asks it (mma=wgmma), refused where the target has no wgmma."""

from __future__ import annotations

import pytest

from nanotile.diagnostics import CompileError
from nanotile.ir.parser import parse_text
from nanotile.passes.base import PassContext
from nanotile.passes.registry import parse_pipeline
from nanotile.targets.sm90.wgmma_plan import plan, warpgroup_grid

from ..test_mma import mma_kernel


def _mmaf(m, n, k, et="f16", acc="f32", batch=0):
    module = parse_text(mma_kernel(batch, m, n, k, et, acc), "<k>")
    return next(op for op in module.items[0].walk() if op.name in ("mmaf", "mmai"))


@pytest.mark.parametrize("m,n,k,warps,grid,n_instr", [
    (64, 8, 16, 4, (1, 1), 8),
    (128, 128, 32, 4, (1, 1), 128),   # cuTile's matmul_f16: two 64-row blocks
    (128, 512, 64, 4, (1, 1), 256),   # two column blocks of n=256
    (256, 64, 16, 8, (2, 1), 64),     # rows split first
    (64, 64, 16, 8, (1, 2), 32),      # 64 rows: the columns are split
    (256, 256, 64, 16, (4, 1), 256),
    (64, 64, 128, 4, (1, 1), 64),     # 256-byte rows: two swizzle atoms side by side
])
def test_plan_fits(m, n, k, warps, grid, n_instr):
    p = plan(_mmaf(m, n, k), warps)
    assert p is not None and p.warpgroups == grid and p.n == n_instr
    assert p.instruction == f"wgmma.mma_async.sync.aligned.m64n{n_instr}k16.f32.f16.f16"


@pytest.mark.parametrize("m,n,k,warps,et,acc,batch", [
    (32, 32, 16, 4, "f16", "f32", 0),     # fewer than 64 rows
    (64, 64, 16, 2, "f16", "f32", 0),     # not a whole warpgroup
    (64, 64, 8, 4, "f16", "f32", 0),      # 16-byte rows: no swizzle atom, no K step
    (64, 64, 16, 4, "tf32", "f32", 0),    # tf32 (wgmma has it: not planned yet)
    (64, 64, 32, 4, "i8", "i32", 0),      # mmai
    (64, 64, 32, 4, "f8E4M3FN", "f32", 0),
    (64, 64, 16, 4, "f16", "f32", 2),     # batched
    (64, 8, 16, 8, "f16", "f32", 0),      # 8 columns cannot feed 2 warpgroups
])
def test_plan_declines(m, n, k, warps, et, acc, batch):
    assert plan(_mmaf(m, n, k, et, acc, batch), warps) is None


def test_warpgroup_grid():
    assert warpgroup_grid(128, 128, 1) == (1, 1)
    assert warpgroup_grid(128, 128, 2) == (2, 1)
    assert warpgroup_grid(192, 128, 2) == (1, 2)
    assert warpgroup_grid(64, 8, 2) is None


def test_mma_wgmma_is_refused_without_wgmma():
    module = parse_text(mma_kernel(0, 64, 64, 16, "f16", "f32"), "<k>")
    steps = parse_pipeline("lower-views,resolve-tokens,assign-layouts{gpu=sm_100 mma=wgmma}")
    with pytest.raises(CompileError, match="sm_100 has no wgmma"):
        for step in steps:
            step.apply(module, PassContext())
    with pytest.raises(CompileError, match="must be sync, wgmma or tcgen05"):
        parse_pipeline("assign-layouts{gpu=sm_90 mma=bogus}")[0].apply(module, PassContext())
