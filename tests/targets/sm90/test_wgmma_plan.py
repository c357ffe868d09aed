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
    (64, 64, 32, 4, "i8", "i32", 0),      # mmai (wgmma has s8/u8: not planned)
    (64, 64, 16, 4, "f16", "f32", 2),     # batched
    (64, 64, 16, 4, "tf32", "f32", 2),    # batched tf32
    (64, 64, 4, 4, "tf32", "f32", 0),     # tf32 rows of 16 bytes: no k8 step
    (64, 64, 16, 4, "tf32", "f16", 0),    # tf32 -> f16: no such instruction
    (64, 64, 16, 4, "f8E4M3FN", "f32", 0),  # f8 rows of 16 bytes: no k32 step
    (64, 64, 8, 4, "f8E5M2", "f32", 0),   # 8-byte rows
    (32, 64, 32, 4, "f8E4M3FN", "f32", 0),  # fewer than 64 rows
    (64, 8, 16, 8, "f16", "f32", 0),      # 8 columns cannot feed 2 warpgroups
])
def test_plan_declines(m, n, k, warps, et, acc, batch):
    assert plan(_mmaf(m, n, k, et, acc, batch), warps) is None


@pytest.mark.parametrize("m,n,k,warps,et,acc,instr,width", [
    # tf32: m64nNk8, 32 bytes of a row per K step; both operands K-major
    (64, 64, 8, 4, "tf32", "f32", "m64n64k8.f32.tf32.tf32", 32),
    (64, 64, 16, 4, "tf32", "f32", "m64n64k8.f32.tf32.tf32", 64),
    (128, 256, 32, 4, "tf32", "f32", "m64n256k8.f32.tf32.tf32", 128),
    (256, 128, 64, 8, "tf32", "f32", "m64n128k8.f32.tf32.tf32", 128),  # two atoms a row
    # f8: m64nNk32, f32 or f16 accumulators
    (64, 32, 32, 4, "f8E4M3FN", "f32", "m64n32k32.f32.e4m3.e4m3", 32),
    (64, 64, 64, 4, "f8E5M2", "f32", "m64n64k32.f32.e5m2.e5m2", 64),
    (128, 256, 128, 4, "f8E4M3FN", "f16", "m64n256k32.f32.e4m3.e4m3", 128),
    (64, 128, 256, 8, "f8E4M3FN", "f32", "m64n64k32.f32.e4m3.e4m3", 128),
])
def test_plan_fits_tf32_and_f8(m, n, k, warps, et, acc, instr, width):
    """Each instruction's K is 32 bytes of a row; A and B are read K-major (their rows run
    along K: B's stored transposed, ``order=[0, 1]``), in atoms of ``width`` bytes."""
    p = plan(_mmaf(m, n, k, et, acc), warps)
    assert p is not None and p.instruction == "wgmma.mma_async.sync.aligned." + instr
    assert not p.b_mn_major and p.round_tf32_operands == (et == "tf32")
    from nanotile.ir import types as T

    size = p.element_bytes
    for i, shape in ((0, (m, k)), (1, (k, n))):
        layout = p.operand(i, T.TileType(shape, T.F32))
        assert layout.order == ((0, 1) if i else None)
        atom = layout.block or k
        assert atom * size == width and layout.swizzle[0] * size == 16


def test_plan_mixes_e4m3_and_e5m2():
    """wgmma takes any mix of e4m3 and e5m2 for A and B (not f8 with f16)."""
    text = mma_kernel(0, 64, 64, 32, "f8E4M3FN", "f32")
    lines = text.splitlines()
    for i, line in enumerate(lines):  # B (operand 1) e5m2
        if any(f"%{v}1" in line.split("=")[0] for v in ("q", "b", "p", "x")):
            lines[i] = line.replace("f8E4M3FN", "f8E5M2")
        elif "mmaf" in line:
            lines[i] = line.replace("tile<32x64xf8E4M3FN>", "tile<32x64xf8E5M2>")
    text = "\n".join(lines).replace("%a1: tile<ptr<f8E4M3FN>>", "%a1: tile<ptr<f8E5M2>>")
    op = next(op for op in parse_text(text, "<k>").items[0].walk() if op.name == "mmaf")
    assert op.operands[1].type.element.name == "f8E5M2"
    p = plan(op, 4)
    assert p.instruction == "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e5m2"
    # A f16, B e5m2: no such instruction
    mixed = text.replace("%a0: tile<ptr<f8E4M3FN>>", "%a0: tile<ptr<f16>>")
    mixed = "\n".join(line.replace("f8E4M3FN", "f16") if "%x0" in line.split("=")[0] or
                      any(f"%{v}0 " in line for v in ("q", "b", "p")) else
                      line.replace("tile<64x32xf8E4M3FN>, tile<32x64", "tile<64x32xf16>, tile<32x64")
                      if "mmaf" in line else line for line in mixed.splitlines())
    op = next(op for op in parse_text(mixed, "<k>").items[0].walk() if op.name == "mmaf")
    assert op.operands[0].type.element.name == "f16" and plan(op, 4) is None


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
