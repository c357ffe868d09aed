"""sm_100's tensor-memory MMA (tcgen05): the plan (sm100/tcgen05_plan.py), the option of
assign-layouts that asks it (mma=tcgen05; the ``#tmem`` layout itself:
tests/ir/test_tmem_layouts.py), and small kernels written as Tile IR text compiled for
sm_100 and run in the PTX emulator against the interpreter (lower-tcgen05 +
select_tcgen05)."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest

from nanotile.diagnostics import CompileError
from nanotile.interp import run
from nanotile.ir.parser import parse_text
from nanotile.ir.printer import print_module
from nanotile.passes.base import PassContext
from nanotile.passes.registry import parse_pipeline
from nanotile.ptxemu import run_ptx
from nanotile.targets.compile import assemble, compile_to_ptx, ptxas_path
from nanotile.targets.sm100.tcgen05_plan import instruction_descriptor, plan

from ..test_mma import _check, _inputs, mma_kernel


def _mmaf(m, n, k, et="f16", acc="f32", batch=0):
    module = parse_text(mma_kernel(batch, m, n, k, et, acc), "<k>")
    return next(op for op in module.items[0].walk() if op.name in ("mmaf", "mmai"))


# ---------------------------------------------------------------- the plan

@pytest.mark.parametrize("m,n,k,et", [
    (128, 16, 16, "f16"),     # the smallest N
    (128, 128, 32, "f16"),    # cuTile's matmul_f16
    (128, 256, 64, "bf16"),   # the largest N, 128-byte rows
    (128, 64, 128, "f16"),    # 256-byte rows: two swizzle atoms side by side
    (256, 256, 64, "f16"),    # two 128-row blocks: 512 TMEM columns
])
def test_plan_fits(m, n, k, et):
    p = plan(_mmaf(m, n, k, et), 4)
    assert p is not None and p.n == n and p.m == m and p.element == et
    assert p.instruction == "tcgen05.mma.cta_group::1.kind::f16"
    assert str(p.accumulator((m, n))) == f"#tmem<acc, m{m}n{n}>"


@pytest.mark.parametrize("m,n,k,et,kind,rounds", [
    (128, 64, 8, "tf32", "tf32", True),         # one K step of 8: 32-byte rows
    (256, 256, 64, "tf32", "tf32", True),       # the cutile-tests f32 matmul's tile
    (128, 128, 32, "f8E4M3FN", "f8f6f4", False),  # one K step of 32
    (256, 256, 128, "f8E5M2", "f8f6f4", False),  # the batched f8 matmul's tile
])
def test_plan_fits_tf32_and_f8(m, n, k, et, kind, rounds):
    p = plan(_mmaf(m, n, k, et), 4)
    assert p is not None and p.instruction == f"tcgen05.mma.cta_group::1.kind::{kind}"
    assert p.round_tf32_operands == rounds and p.m == m and p.n == n


@pytest.mark.parametrize("m,n,k,warps,et,acc,batch", [
    (32, 64, 16, 4, "f16", "f32", 0),      # 32 rows
    (64, 8, 16, 4, "f16", "f32", 0),       # 64 rows, N = 8 (N % 16 == 0 here)
    (512, 64, 16, 4, "f16", "f32", 0),     # 512 rows
    (128, 64, 16, 8, "f16", "f32", 0),     # 8 warps
    (128, 8, 16, 4, "f16", "f32", 0),      # N = 8 (M = 128 needs N % 16 == 0)
    (128, 512, 16, 4, "f16", "f32", 0),    # N > 256
    (128, 64, 8, 4, "f16", "f32", 0),      # 16-byte rows: no swizzle atom, no K step
    (128, 64, 16, 4, "f16", "f16", 0),     # f16 accumulator
    (128, 64, 4, 4, "tf32", "f32", 0),     # tf32 rows of 16 bytes: no K step of 8
    (128, 64, 16, 4, "f8E4M3FN", "f32", 0),  # f8 rows of 16 bytes: no K step of 32
    (128, 64, 32, 4, "f8E5M2", "f16", 0),  # f8 -> f16: not planned (D in TMEM is f32)
    (128, 64, 32, 4, "i8", "f32", 0),      # i8 into f32: no such kind
    (128, 64, 16, 4, "f16", "f32", 2),     # batched
])
def test_plan_declines(m, n, k, warps, et, acc, batch):
    assert plan(_mmaf(m, n, k, et, acc, batch), warps) is None


def test_instruction_descriptor():
    # tileiras' sm_100 matmul_f16 (M = N = 128, f16, K-major): mov.b32 %r, 136314896
    assert instruction_descriptor("f16", 128, 128) == 136314896 == 0x08200010
    d = instruction_descriptor("bf16", 128, 48)
    assert (d >> 4) & 3 == 1 and (d >> 7) & 7 == 1 and (d >> 10) & 7 == 1
    assert ((d >> 17) & 0x3F) << 3 == 48 and ((d >> 24) & 0x1F) << 4 == 128
    assert not (d >> 15) & 3  # both K-major


@pytest.mark.parametrize("a,b,fa,fb", [("tf32", None, 2, 2), ("f8E4M3FN", None, 0, 0),
                                       ("f8E5M2", None, 1, 1), ("f8E4M3FN", "f8E5M2", 0, 1)])
def test_instruction_descriptor_formats(a, b, fa, fb):
    """The A/B formats of kind::tf32 (TF32 = 2) and kind::f8f6f4 (E4M3 = 0, E5M2 = 1):
    PTX ISA, "Instruction descriptor format for .kind::tf32, .kind::f16, .kind::f8f6f4"."""
    d = instruction_descriptor(a, 128, 256, b)
    assert (d >> 7) & 7 == fa and (d >> 10) & 7 == fb and (d >> 4) & 3 == 1
    assert d >> 24 == 128 >> 4 and (d >> 17) & 0x3F == 256 >> 3


def test_b_landed_by_tma_is_read_mn_major():
    """An f8 or f16 B that a TMA copy lands (select-tma-loads asks with TMA_COPY;
    assign-layouts checks it with the layout the copy got) is read as it lies in global
    memory, rows along N, and the descriptors say so (bit 16); stored from registers it
    stays K-major, and so does a tf32 B."""
    from nanotile.targets.ptx.select_tma_loads import TMA_COPY
    from nanotile.targets.sm100.tcgen05_plan import block_scaled_descriptor

    op = _mmaf(256, 256, 128, "f8E4M3FN")
    p, b = plan(op, 4), op.operands[1].type
    copied = p.operand(1, b, TMA_COPY)
    assert copied.order is None and copied.block == 128 and copied.swizzle is not None
    assert p.operand(1, b, copied) == copied
    assert p.operand(1, b, None).order == (0, 1)  # from registers: K-major
    assert p.operand(0, op.operands[0].type, TMA_COPY).order is None  # A: K-major anyway
    f16 = _mmaf(128, 128, 32, "f16")
    assert plan(f16, 4).operand(1, f16.operands[1].type, TMA_COPY).order is None
    tf32 = _mmaf(128, 64, 32, "tf32")
    assert plan(tf32, 4).operand(1, tf32.operands[1].type, TMA_COPY).order == (0, 1)
    assert (instruction_descriptor("f8E4M3FN", 128, 256, None, True) >> 15) & 3 == 2
    assert (block_scaled_descriptor("f8E4M3FN", 128, 256, 0, 0, None, True) >> 15) & 3 == 2


def test_mma_tcgen05_is_refused_on_sm90():
    module = parse_text(mma_kernel(0, 128, 64, 16, "f16", "f32"), "<k>")
    steps = parse_pipeline("lower-views,resolve-tokens,assign-layouts{gpu=sm_90 mma=tcgen05}")
    with pytest.raises(CompileError, match="sm_90 has no tcgen05"):
        for step in steps:
            step.apply(module, PassContext())


def test_assign_layouts_puts_the_accumulator_in_tmem():
    module = parse_text(mma_kernel(0, 128, 64, 32, "f16", "f32"), "<k>")
    for step in parse_pipeline("lower-views,resolve-tokens,"
                               "assign-layouts{gpu=sm_100 mma=tcgen05}"):
        step.apply(module, PassContext())
    printed = print_module(module)
    assert re.search(r"mmaf .*tile<128x64xf32, #tmem<acc, m128n64>>", printed), printed


# ---------------------------------------------------------------- emulator vs interpreter

# (M, N, K, operand type): one mmaf of a loaded accumulator (not in a loop: stored to
# tensor memory, multiplied, loaded back)
CASES = [
    (128, 16, 16, "f16"),
    (128, 64, 32, "bf16"),
    (128, 128, 64, "f16"),     # 128-byte rows, 4 K steps
    (128, 32, 128, "bf16"),    # two swizzle atoms per row
    (128, 256, 16, "f16"),     # N = 256: two tcgen05.ld/st of 128 registers
    (256, 32, 32, "bf16"),     # two 128-row blocks, the second in columns 32..63
]


# tf32 (kind::tf32, K 8) and f8 (kind::f8f6f4, K 32): 32 bytes of a row per K step
KIND_CASES = [
    (128, 32, 8, "tf32"),        # one K step, 32-byte rows
    (128, 64, 64, "tf32"),       # 256-byte rows: two atoms, 8 K steps (rounded first)
    (256, 32, 32, "tf32"),       # two 128-row blocks
    (128, 16, 32, "f8E4M3FN"),   # one K step, 32-byte rows
    (128, 64, 128, "f8E5M2"),    # 128-byte rows, 4 K steps
    (256, 32, 256, "f8E4M3FN"),  # two atoms a row, two row blocks
]
KIND = {"f16": "f16", "bf16": "f16", "tf32": "tf32", "f8E4M3FN": "f8f6f4", "f8E5M2": "f8f6f4"}
K_STEP = {"f16": 16, "bf16": 16, "tf32": 8, "f8E4M3FN": 32, "f8E5M2": 32}


@pytest.mark.parametrize("m,n,k,et", CASES + KIND_CASES)
def test_tcgen05_matches_interpreter(m, n, k, et):
    text = mma_kernel(0, m, n, k, et, "f32")
    arrays = _inputs(0, m, n, k, et, "f32", np.random.default_rng(m * n + k))
    ptx = _check(text, arrays, "sm_100", 2 ** -20)
    assert "mma.sync" not in ptx and "fma.rn" not in ptx
    assert ptx.count(f"tcgen05.mma.cta_group::1.kind::{KIND[et]}") == \
        m // 128 * k // K_STEP[et]
    assert ("cvt.rn.tf32.f32" in ptx) == (et == "tf32")  # rounded before the stores
    assert ptx.count("tcgen05.alloc") == ptx.count("tcgen05.dealloc") == 1


# mmai of i8 (kind::i8: s32 in TMEM, K steps of 32 bytes), as tileiras' UTCIMMA for a
# 128 x 128 x 64 mmai; A and B signed or unsigned (u8: format 0 in the descriptor)
I8_CASES = [
    (128, 128, 64, "signed signed"),     # tileiras' UTCIMMA kernel's shape: 2 K steps
    (128, 32, 32, "unsigned signed"),    # one K step, 32-byte rows, u8 A
    (256, 64, 128, "signed unsigned"),   # two row blocks, 4 K steps, u8 B
]


@pytest.mark.parametrize("m,n,k,signs", I8_CASES)
def test_tcgen05_i8_is_exact(m, n, k, signs):
    """Random s8/u8 bytes and s32 accumulators (sums wrap as the interpreter's do): the
    emulated kind::i8 equals the interpreter bit for bit; the descriptor's D format is
    s32 (2) and each operand's u8 (0) or s8 (1) as its mmai says."""
    from ..test_mma import _inputs as mma_inputs

    text = mma_kernel(0, m, n, k, "i8", "i32", op="mmai", attrs=signs + " ")
    arrays = mma_inputs(0, m, n, k, "i8", "i32", np.random.default_rng(m + n + k))
    ptx = _check(text, arrays, "sm_100", 0)
    assert ptx.count("tcgen05.mma.cta_group::1.kind::i8") == m // 128 * k // 32
    assert "mma.sync" not in ptx
    (idesc,) = {int(d) for d in re.findall(r"mov\.b32 %r\d+, (\d{8,});", ptx)}
    formats = [0 if s == "unsigned" else 1 for s in signs.split()]
    assert (idesc >> 4) & 3 == 2 and [(idesc >> 7) & 7, (idesc >> 10) & 7] == formats


@pytest.mark.parametrize("m,n,k", [(128, 64, 64), (128, 32, 128), (128, 128, 16),
                                   (256, 64, 32)])
def test_tcgen05_is_exact_on_integers(m, n, k):
    """Small integers in f16: every product and sum is exact, so a wrong descriptor (K
    step, swizzle, stride) or TMEM lane/column changes the result: bit for bit."""
    text = mma_kernel(0, m, n, k, "f16", "f32")
    rng = np.random.default_rng(m + n + k)
    arrays = [rng.integers(-8, 8, (m, k)).astype(np.float16),
              rng.integers(-8, 8, (k, n)).astype(np.float16),
              rng.integers(-100, 100, (m, n)).astype(np.float32),
              np.zeros((m, n), np.float32)]
    assert "tcgen05.mma" in _check(text, arrays, "sm_100", 0)


# M = 64 (one instruction; D in lanes 32 w .. 32 w + 15, read and written with the
# 16x32bx2 forms, the second half N / 2 columns further): f16, bf16, f8, i8
M64_CASES = [
    (64, 64, 32, "f16", 2 ** -20),
    (64, 256, 64, "bf16", 2 ** -20),    # N = 256: 128 registers a thread
    (64, 16, 32, "f8E4M3FN", 2 ** -20),
    (64, 128, 64, "i8", 0),             # mmai, exact
]


@pytest.mark.parametrize("m,n,k,et,tol", M64_CASES)
def test_tcgen05_m64_matches_interpreter(m, n, k, et, tol):
    from ..test_mma import _inputs as mma_inputs

    acc = "i32" if et == "i8" else "f32"
    text = mma_kernel(0, m, n, k, et, acc, op="mmai" if et == "i8" else "mmaf",
                      attrs="signed signed " if et == "i8" else "")
    arrays = mma_inputs(0, m, n, k, et, acc, np.random.default_rng(m * n + k))
    ptx = _check(text, arrays, "sm_100", tol)
    assert ptx.count("tcgen05.mma.cta_group") == k // (16 if et in ("f16", "bf16") else 32)
    assert "mma.sync" not in ptx
    # the accumulator stored and loaded as halves of rows, split N / 2 columns apart
    assert f"16x32bx2.x{n // 2}.b32 [%r" in ptx and f"], {n // 2}, {{" in ptx
    assert re.search(rf"tcgen05\.ld\.sync\.aligned\.16x32bx2\.x{n // 2}\.b32 {{.+}}, \[%r\d+\], "
                     rf"{n // 2};", ptx)
    (idesc,) = {int(d) for d in re.findall(r"mov\.b32 %r\d+, (\d{8,});", ptx)}
    assert ((idesc >> 24) & 0x1F) << 4 == 64 and ((idesc >> 17) & 0x3F) << 3 == n


def test_sm100_keeps_mma_sync_where_tcgen05_does_not_fit():
    text = mma_kernel(0, 32, 64, 32, "f16", "f32")
    arrays = _inputs(0, 32, 64, 32, "f16", "f32", np.random.default_rng(3))
    ptx = _check(text, arrays, "sm_100", 2 ** -20)
    assert "tcgen05" not in ptx and "mma.sync.aligned" in ptx


def loop_kernel(n: int, k: int, et: str = "f16", mmafs: int = 1) -> str:
    """out = C + steps x A @ B (A 128 x k, B k x n, read at the same place each step).
    ``mmafs`` = 2: each step multiplies twice, the second mmaf accumulating on the first's
    result (neither accumulator is what the loop carries from step to step);
    ``mmafs`` = -2: two accumulators carried side by side, added after the loop."""
    tiles = f"tile<128x{k}x{et}>, tile<{k}x{n}x{et}>, tile<128x{n}xf32>"
    acc_t = f"tile<128x{n}xf32>"
    if mmafs == 2:
        step = (f"      %e = mmaf %a, %bb, %acc : {tiles}\n"
                f"      %e2 = mmaf %a, %bb, %e : {tiles}\n      continue %e2 : {acc_t}")
    elif mmafs == -2:
        step = (f"      %e = mmaf %a, %bb, %acc : {tiles}\n"
                f"      %e2 = mmaf %a, %bb, %acc2 : {tiles}\n"
                f"      continue %e, %e2 : {acc_t}, {acc_t}")
    else:
        step = f"      %e = mmaf %a, %bb, %acc : {tiles}\n      continue %e : {acc_t}"
    if mmafs == -2:
        loop = (f"%d1, %d2 = for %s in (%lo to %steps, step %one) : tile<i32> "
                f"iter_values(%acc = %c, %acc2 = %c) -> ({acc_t}, {acc_t}) {{")
        result = f"%d = addf %d1, %d2 : {acc_t}"
    else:
        loop = (f"%d = for %s in (%lo to %steps, step %one) : tile<i32> "
                f"iter_values(%acc = %c) -> ({acc_t}) {{")
        result = ""
    return f"""cuda_tile.module @m {{
  entry @k(%pa: tile<ptr<{et}>>, %pb: tile<ptr<{et}>>, %pc: tile<ptr<f32>>, %steps: tile<i32>) {{
    %ia = iota : tile<{128 * k}xi32>
    %ra = reshape %ia : tile<{128 * k}xi32> -> tile<128x{k}xi32>
    %a0 = reshape %pa : tile<ptr<{et}>> -> tile<1x1xptr<{et}>>
    %a1 = broadcast %a0 : tile<1x1xptr<{et}>> -> tile<128x{k}xptr<{et}>>
    %a2 = offset %a1, %ra : tile<128x{k}xptr<{et}>>, tile<128x{k}xi32> -> tile<128x{k}xptr<{et}>>
    %ib = iota : tile<{k * n}xi32>
    %rb = reshape %ib : tile<{k * n}xi32> -> tile<{k}x{n}xi32>
    %b0 = reshape %pb : tile<ptr<{et}>> -> tile<1x1xptr<{et}>>
    %b1 = broadcast %b0 : tile<1x1xptr<{et}>> -> tile<{k}x{n}xptr<{et}>>
    %b2 = offset %b1, %rb : tile<{k}x{n}xptr<{et}>>, tile<{k}x{n}xi32> -> tile<{k}x{n}xptr<{et}>>
    %ic = iota : tile<{128 * n}xi32>
    %rc = reshape %ic : tile<{128 * n}xi32> -> tile<128x{n}xi32>
    %c0 = reshape %pc : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %c1 = broadcast %c0 : tile<1x1xptr<f32>> -> tile<128x{n}xptr<f32>>
    %c2 = offset %c1, %rc : tile<128x{n}xptr<f32>>, tile<128x{n}xi32> -> tile<128x{n}xptr<f32>>
    %c, %t0 = load_ptr_tko weak %c2 : tile<128x{n}xptr<f32>> -> {acc_t}, token
    %lo = constant <i32: 0> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    {loop}
      %a, %t1 = load_ptr_tko weak %a2 : tile<128x{k}xptr<{et}>> -> tile<128x{k}x{et}>, token
      %bb, %t2 = load_ptr_tko weak %b2 : tile<{k}x{n}xptr<{et}>> -> tile<{k}x{n}x{et}>, token
{step}
    }}
    {result}
    %w = store_ptr_tko weak %c2, %d : tile<128x{n}xptr<f32>>, {acc_t} -> token
    return
  }}
}}
"""


def _run_loop(text: str, arrays: list, steps: int):
    want = copy.deepcopy(arrays)
    run(parse_text(text, "<k>"), "k", (1,), *want, np.int32(steps))
    ptx = compile_to_ptx(parse_text(text, "<k>"), "sm_100")
    if ptxas_path() is not None:
        assemble(ptx, "sm_100")
    got = copy.deepcopy(arrays)
    run_ptx(ptx, "k", grid=(1,), args=[*got, np.int32(steps)])
    np.testing.assert_array_equal(got[2], want[2])
    return ptx


def _integers(n: int, k: int, seed: int):
    rng = np.random.default_rng(seed)
    return [rng.integers(-4, 5, (128, k)).astype(np.float16),
            rng.integers(-4, 5, (k, n)).astype(np.float16),
            rng.integers(-100, 100, (128, n)).astype(np.float32)]


@pytest.mark.parametrize("steps", [0, 1, 3])
def test_k_loop_keeps_the_accumulator_in_tmem(steps):
    """The loop's accumulator is stored to TMEM once before the loop and loaded once
    after it (the loop carries nothing for it), on 0, 1 and 3 trips: bit for bit."""
    ptx = _run_loop(loop_kernel(64, 32), _integers(64, 32, steps), steps)
    assert ptx.count("tcgen05.st.") == 1 and ptx.count("tcgen05.ld.") == 1
    assert ptx.count("tcgen05.mma.") == 2


def test_two_chained_mmafs_in_a_loop():
    """Two mmafs per step, the second on the first's result: neither accumulator is the
    loop's (each stored, multiplied and loaded on its step, in the same 32 columns)."""
    ptx = _run_loop(loop_kernel(32, 16, mmafs=2), _integers(32, 16, 9), 2)
    assert ptx.count("tcgen05.mma.") == 2 and ptx.count("tcgen05.st.") == 2
    assert re.search(r"tcgen05\.alloc\S* \[[^]]+\], 32;", ptx)


def test_two_accumulators_kept_in_tmem():
    """Two accumulators carried by one loop: both kept in TMEM, in columns of their own
    (64 allocated), both loaded after the loop."""
    ptx = _run_loop(loop_kernel(32, 16, mmafs=-2), _integers(32, 16, 10), 3)
    assert ptx.count("tcgen05.mma.") == 2 and ptx.count("tcgen05.ld.") == 2
    assert re.search(r"tcgen05\.alloc\S* \[[^]]+\], 64;", ptx)


# cutile-tests matmuls tileiras runs on tcgen05 (UTCHMMA / UTCQMMA in its sm_100 SASS):
# the f32 matmul (converted to tf32 by ftof: kind::tf32) and the batched f8 matmul
# (reshaped to 2-D: kind::f8f6f4), 256 x 256 tiles (two 128-row blocks, 512 columns)
TCGEN05_KINDS_CUTILE = [
    ("kernels_matmul__matmul_kernel@ctas1__f32x2_f32x2_f32x2_256_256_64", "tf32"),
    ("kernels_matmul__batch_matmul_kernel@ctas1__f8_e4m3fnx3_f8_e4m3fnx3_f32x3_256_256_128",
     "f8f6f4"),
]


@pytest.mark.parametrize("name,kind", TCGEN05_KINDS_CUTILE)
def test_tf32_and_f8_cutile_matmuls_on_tcgen05(name, kind):
    ptx = _emulated_as_interpreted(name)
    assert f"tcgen05.mma.cta_group::1.kind::{kind}" in ptx and "mma.sync" not in ptx


def test_batched_f8_operands_arrive_by_tma():
    """The batched f8 matmul's operands (1 x 256 x 128 and 1 x 128 x 256, reshaped to 2-D)
    come by TMA, as tileiras' (UTMALDG.3D): A in one box of 256 rows, B in two boxes of
    128 columns (MN-major: instruction descriptors with bit 16), boxes of 1 along the
    batch, the three copies issued at each stage of pipeline-k-loops' ring (prologue and
    loop); the emulator (checking mode) agrees with the interpreter."""
    name = TCGEN05_KINDS_CUTILE[1][0]
    ptx = _emulated_as_interpreted(name)
    copies = ptx.count("cp.async.bulk.tensor.3d.shared::cluster.global")
    assert copies >= 3 and copies % 3 == 0 and "mbarrier.try_wait.parity" in ptx
    assert "box=[1,256,128] swizzle=128" in ptx and "box=[1,128,128] swizzle=128" in ptx
    descriptors = {int(d) for d in re.findall(r"mov\.b32 %r\d+, (\d{8,});", ptx)}
    assert descriptors and all((d >> 16) & 1 for d in descriptors)
    assert "ld.global" not in ptx.split("tcgen05.ld")[0]  # no operand through registers


def _emulated_as_interpreted(name: str) -> str:
    """The cutile-tests kernel ``name`` compiled for sm_100 (assembled when ptxas is
    installed) and run in the emulator on the interpreter's inputs: its outputs are the
    interpreter's. Returns the PTX."""
    import nanotile
    from nanotile.compare import first_difference

    from ..corpus_cases import cutile_tests_case

    module, kernel, grid, args = cutile_tests_case(name)
    ptx = compile_to_ptx(copy.deepcopy(module), "sm_100")
    if ptxas_path() is not None:
        assemble(ptx, "sm_100")
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    nanotile.run(module, kernel, grid, *want)
    nanotile.run(module, kernel, grid, *got, device="emulator", gpu_name="sm_100")
    assert first_difference(got, want, "sm_100") is None
    return ptx


# ---------------------------------------------------------------- block-scaled (mmaf_scaled)

def _scaled_op(m, n, k, at="f8E4M3FN", st="f8E8M0FNU", block=32):
    from ..test_ptx_ops import _mma_scaled_text

    module = parse_text(_mma_scaled_text(m, n, k, k // block, at, st, "f32"), "<k>")
    return next(op for op in module.items[0].walk() if op.name == "mmaf_scaled")


def test_plan_fits_mmaf_scaled():
    p = plan(_scaled_op(256, 256, 128), 4)
    assert p is not None and p.scaled and p.kind == "mxf8f6f4"
    assert p.instruction == \
        "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.scale_vec::1X"
    scale = _scaled_op(256, 256, 128).operands[3].type
    assert p.operand(3, scale).swizzle is None  # row-major, gathered from there


@pytest.mark.parametrize("m,n,k,at,st,block", [
    (128, 64, 64, "f4E2M1FN", "f8E8M0FNU", 32),  # f4 data (kind::mxf4): not planned
    (128, 64, 64, "f4E2M1FN", "f8E4M3FN", 16),   # f8E4M3FN scales (nvf4)
    (128, 8, 64, "f8E4M3FN", "f8E8M0FNU", 32),   # N = 8 (M = 128 needs N % 16 == 0)
    (64, 64, 64, "f8E4M3FN", "f8E8M0FNU", 32),   # 64 rows
])
def test_plan_declines_mmaf_scaled(m, n, k, at, st, block):
    assert plan(_scaled_op(m, n, k, at, st, block), 4) is None


def test_block_scaled_descriptor():
    """kind::mxf8f6f4's descriptor (CUTLASS's InstrDescriptorBlockScaled): SFB_ID bits 4-5,
    formats 7-9 / 10-12, N >> 3 at 17, UE8M0 bit 23, M >> 4 at 24, SFA_ID bits 29-30."""
    from nanotile.targets.sm100.tcgen05_plan import block_scaled_descriptor

    d = block_scaled_descriptor("f8E4M3FN", 128, 256, 3, 2, "f8E5M2")
    assert (d >> 29) & 3 == 3 and (d >> 4) & 3 == 2 and (d >> 23) & 1
    assert (d >> 7) & 7 == 0 and (d >> 10) & 7 == 1
    assert (d >> 17) & 0x3F == 256 >> 3 and (d >> 24) & 0x1F == 128 >> 4


def _scaled_arrays(m, n, k, at, seed):
    import ml_dtypes

    rng = np.random.default_rng(seed)
    numpy_type = {"f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E5M2": ml_dtypes.float8_e5m2}[at]

    def data(shape):
        return (rng.standard_normal(shape) * 4).astype(numpy_type).view(np.int8)

    def scales(shape):  # 2^-7 .. 2^7, a different one per block
        return rng.integers(120, 135, shape).astype(np.uint8).view(np.int8)

    kb = k // 32
    return [data((m, k)), data((k, n)), scales((m, kb)), scales((kb, n)),
            rng.standard_normal((m, n)).astype(np.float32)]


@pytest.mark.parametrize("m,n,k,at", [
    (128, 16, 32, "f8E4M3FN"),   # one K block: words of one byte
    (128, 64, 128, "f8E5M2"),    # four K blocks: SFA_ID / SFB_ID 0..3 in one word
    (256, 128, 256, "f8E4M3FN"),  # eight K blocks (two words), two row blocks
])
def test_block_scaled_tcgen05_matches_interpreter(m, n, k, at):
    from ..test_ptx_ops import _mma_scaled_text

    text = _mma_scaled_text(m, n, k, k // 32, at, "f8E8M0FNU", "f32")
    arrays = _scaled_arrays(m, n, k, at, m + n + k)
    want, got = np.zeros((m, n), np.float32), np.zeros((m, n), np.float32)
    run(parse_text(text, "<k>"), "k", (1,), *copy.deepcopy(arrays), want)
    ptx = compile_to_ptx(parse_text(text, "<k>"), "sm_100")
    if ptxas_path() is not None:
        assemble(ptx, "sm_100")
    run_ptx(ptx, "k", grid=(1,), args=[*copy.deepcopy(arrays), got])
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6 * np.abs(want).max())
    assert ptx.count("kind::mxf8f6f4.block_scale.scale_vec::1X") == m // 128 * k // 32
    assert "fma.rn" not in ptx


def test_scale_factors_must_be_duplicated_in_every_lane_quarter():
    """The emulator reads row r's scale at lane r % 32 (+ 32 q), column r / 32, and
    faults when the four lane quarters disagree (the ISA asks for duplicates): a store
    from warp 0 alone would pass on the first quarter only."""
    from nanotile.ptxemu.errors import MemoryFault
    from nanotile.ptxemu.ops_mma import _scale_factors

    tm = np.zeros((128, 512), np.uint32)
    rows = np.arange(128)
    for q in range(4):  # row r's exponent in byte 1: 127 + r % 5 (2^0 .. 2^4)
        tm[32 * q + rows % 32, 8 + rows // 32] = (127 + rows % 5).astype(np.uint32) << 8
    got = _scale_factors(tm, 8, 128, 1, "A")
    np.testing.assert_array_equal(got, 2.0 ** (rows % 5))
    tm[32 * 2 + 3, 8 + 1] = 0  # quarter 2 differs in one word
    with pytest.raises(MemoryFault, match="not duplicated in all four lane quarters"):
        _scale_factors(tm, 8, 128, 1, "A")


# the large block-scaled cutile-tests kernels (256 x 256 x 128 tiles, 32-element blocks):
# the accumulator fills tensor memory, the scale words borrow the other row block's columns
BLOCK_SCALED_CUTILE = [
    "kernels_scaled_matmul__block_scaled_matmul_kernel@ctas2__f8_e4m3fnx2_f8_e8m0fnux4_"
    "f8_e4m3fnx2_f8_e8m0fnux4_f32x2_256_256_128_32",
    "kernels_scaled_matmul__block_scaled_matmul_kernel@ctas2__f8_e4m3fnx2_f8_e8m0fnux4_"
    "f8_e4m3fnx2_f8_e8m0fnux4_f32x2_256_256_128_32.4baeea",
    "kernels_scaled_matmul__block_scaled_matmul_kernel@ctas2__f8_e4m3fnx2_f8_e8m0fnux4_"
    "f8_e4m3fnx2_f8_e8m0fnux4_f32x2_256_256_128_32.a33fb3",
    "samples_BlockScaledMatMul__block_scaled_matmul_kernel@ctassm1002__f8_e4m3fnx2_"
    "f8_e8m0fnux2_f8_e4m3fnx2_f8_e8m0fnux2_f32x2_256_256_128_32",
]


@pytest.mark.parametrize("name", BLOCK_SCALED_CUTILE, ids=lambda n: n[-40:])
def test_block_scaled_cutile_matmuls_on_tcgen05(name):
    ptx = _emulated_as_interpreted(name)
    assert ptx.count("kind::mxf8f6f4.block_scale.scale_vec::1X") == 8  # 2 blocks x 4 K
    assert "fma.rn.f64" not in ptx  # not the FMA loop
    # A (256 x 128, row-major) and B (128 x 256 of a column-major tensor: K-major through
    # the transposed map) arrive by TMA, one box each per stage of pipeline-k-loops' ring
    # (prologue and loop), as tileiras' UTMALDG.2D
    copies = ptx.count("cp.async.bulk.tensor.2d.shared::cluster.global")
    assert copies >= 2 and copies % 2 == 0 and "mbarrier.try_wait.parity" in ptx
    assert "box=[256,128] swizzle=128 transposed" in ptx
