"""Warp-level instructions, divergence and reconvergence, barriers, atomics, memory spaces,
approximate math, tensor-core fragments (mma.sync, ldmatrix) and printf."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nanotile.ptxemu import run_ptx
from nanotile.ptxemu.tensor_core_sums import tensor_core_dot
from tests.ptxemu.ptxkit import assembled, elementwise, kernel

REF = Path(__file__).resolve().parents[2] / ".." / "shared" / "reference" / "ptx-examples"
REGS = """  .reg .pred %p<8>;
  .reg .b16 %h<8>;
  .reg .b32 %r<40>;
  .reg .b64 %rd<16>;
  .reg .f32 %f<16>;
"""


def run_checked(text: str, *args, **kwargs):
    """run_ptx on a kernel NVIDIA's ptxas accepts."""
    return run_ptx(assembled(text), *args, **kwargs)


def assembled_kernel(params: str, body: str) -> str:
    return assembled(kernel(params, body))


def out_kernel(body: str, shared: str = "") -> str:
    """Kernel(out): %r1 = tid, %rd1 = &out[tid] (u32 elements)."""
    return kernel(".param .u64 pout", REGS + shared + """
  ld.param.u64 %rd0, [pout];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd1, %rd0, %rd2;
""" + body + "\n  ret;")


def run_out(text: str, n: int, dtype=np.uint32, grid=(1,)) -> np.ndarray:
    assembled(text)
    out = np.zeros(n * grid[0], dtype)
    run_checked(text, "k", grid=grid, block=(n,), args=[out])
    return out


# ---------------------------------------------------------------- shuffles and votes

def shfl_ref(mode: str, src: np.ndarray, b: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    """PTX ISA pseudocode of shfl.sync, written out per lane."""
    out, ok = src.copy(), np.zeros(32, bool)
    seg = (c >> 8) & 0x1F
    clamp = c & 0x1F
    for lane in range(32):
        max_lane = (lane & seg) | (clamp & ~seg)
        min_lane = lane & seg
        j = {"up": lane - b, "down": lane + b, "bfly": lane ^ b,
             "idx": min_lane | (b & ~seg)}[mode]
        p = j >= max_lane if mode == "up" else j <= max_lane
        out[lane] = src[j if p else lane]
        ok[lane] = p
    return out, ok


@pytest.mark.parametrize("mode,b,c", [("up", 3, 0), ("down", 5, 31), ("bfly", 6, 31),
                                       ("idx", 7, 31), ("down", 2, 0x1807), ("idx", 3, 0x1807)])
def test_shfl_sync_matches_isa_pseudocode(mode: str, b: int, c: int) -> None:
    text = out_kernel(f"""
  mul.lo.u32 %r2, %r1, 10;
  add.u32 %r2, %r2, 100;
  shfl.sync.{mode}.b32 %r3|%p1, %r2, {b}, {c}, -1;
  selp.u32 %r4, 1000000, 0, %p1;
  add.u32 %r3, %r3, %r4;
  st.global.u32 [%rd1], %r3;""")
    got = run_out(text, 32)
    vals, ok = shfl_ref(mode, np.arange(32, dtype=np.uint32) * 10 + 100, b, c)
    np.testing.assert_array_equal(got, vals + ok * 1000000)


def test_vote_and_redux() -> None:
    text = out_kernel("""
  and.b32 %r2, %r1, 5;
  setp.ne.u32 %p1, %r2, 0;
  vote.sync.ballot.b32 %r3, %p1, -1;
  vote.sync.any.pred %p2, %p1, -1;
  vote.sync.all.pred %p3, %p1, -1;
  selp.u32 %r4, 1, 0, %p2;
  selp.u32 %r5, 2, 0, %p3;
  add.u32 %r4, %r4, %r5;
  redux.sync.add.u32 %r6, %r1, -1;
  redux.sync.max.s32 %r7, %r1, -1;
  st.global.u32 [%rd1], %r3;
  st.global.u32 [%rd1+128], %r4;
  st.global.u32 [%rd1+256], %r6;
  st.global.u32 [%rd1+384], %r7;""")
    out = np.zeros(128, np.uint32)
    run_checked(text, "k", block=(32,), args=[out])
    lanes = np.arange(32)
    assert out[0] == sum(1 << i for i in lanes if i & 5)
    assert (out[32:64] == 1).all()
    assert (out[64:96] == lanes.sum()).all() and (out[96:] == 31).all()


# ---------------------------------------------------------------- divergence

def test_divergent_if_else_reconverges_before_warp_collective() -> None:
    """Lanes split three ways; after the join a butterfly shuffle needs every lane."""
    text = out_kernel("""
  and.b32 %r2, %r1, 3;
  setp.eq.u32 %p1, %r2, 0;
  @%p1 bra ZERO;
  setp.eq.u32 %p2, %r2, 1;
  @%p2 bra ONE;
  mov.u32 %r3, 300;
  bra JOIN;
ONE:
  mov.u32 %r3, 200;
  bra JOIN;
ZERO:
  mov.u32 %r3, 100;
JOIN:
  add.u32 %r3, %r3, %r1;
  shfl.sync.bfly.b32 %r4, %r3, 1, 31, -1;
  activemask.b32 %r5;
  add.u32 %r4, %r4, %r5;
  st.global.u32 [%rd1], %r4;""")
    got = run_out(text, 32)
    lanes = np.arange(32)
    val = np.array([100, 200, 300, 300])[lanes & 3] + lanes
    np.testing.assert_array_equal(got, (val[lanes ^ 1] + 0xFFFFFFFF) & 0xFFFFFFFF)


def test_divergent_loop_trip_counts_then_ballot() -> None:
    text = out_kernel("""
  mov.u32 %r2, 0;
  mov.u32 %r3, 0;
LOOP:
  add.u32 %r3, %r3, %r2;
  add.u32 %r2, %r2, 1;
  setp.le.u32 %p1, %r2, %r1;
  @%p1 bra LOOP;
  setp.gt.u32 %p2, %r3, 100;
  vote.sync.ballot.b32 %r4, %p2, -1;
  st.global.u32 [%rd1], %r3;
  st.global.u32 [%rd1+256], %r4;""")
    out = np.zeros(128, np.uint32)
    run_checked(text, "k", block=(64,), args=[out])
    n = np.arange(64)
    tri = n * (n + 1) // 2
    np.testing.assert_array_equal(out[:64], tri)
    for w in range(2):
        want = sum(1 << i for i in range(32) if tri[32 * w + i] > 100)
        assert (out[64 + 32 * w: 96 + 32 * w] == want).all()


def test_early_exit_of_some_lanes() -> None:
    text = out_kernel("""
  st.global.u32 [%rd1], 7;
  setp.lt.u32 %p1, %r1, 10;
  @%p1 ret;
  st.global.u32 [%rd1], 9;
  bar.sync 0;""")
    got = run_out(text, 64)
    assert list(got[:10]) == [7] * 10 and (got[10:] == 9).all()


# ---------------------------------------------------------------- barriers and shared memory

def test_bar_sync_orders_shared_memory_between_warps() -> None:
    text = out_kernel("""
  mov.u32 %r2, smem;
  shl.b32 %r3, %r1, 2;
  add.u32 %r4, %r2, %r3;
  mul.lo.u32 %r5, %r1, %r1;
  st.shared.u32 [%r4], %r5;
  bar.sync 0;
  sub.u32 %r6, 127, %r1;
  shl.b32 %r6, %r6, 2;
  add.u32 %r6, %r2, %r6;
  ld.shared.u32 %r7, [%r6];
  st.global.u32 [%rd1], %r7;""", shared="  .shared .align 4 .b8 smem[512];\n")
    got = run_out(text, 128)
    np.testing.assert_array_equal(got, (127 - np.arange(128)) ** 2)


def test_dynamic_shared_memory_and_generic_addressing() -> None:
    text = out_kernel("""
  mov.u64 %rd3, dyn;
  cvta.shared.u64 %rd4, %rd3;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd4, %rd5;
  st.u32 [%rd6], %r1;
  bar.sync 0;
  xor.b32 %r2, %r1, 1;
  mul.wide.u32 %rd7, %r2, 4;
  add.s64 %rd8, %rd4, %rd7;
  ld.u32 %r3, [%rd8];
  st.global.u32 [%rd1], %r3;""").replace(
        ".visible .entry", ".extern .shared .align 16 .b8 dyn[];\n.visible .entry")
    assembled(text)
    out = np.zeros(64, np.uint32)
    run_checked(text, "k", block=(64,), args=[out], shared_bytes=256)
    np.testing.assert_array_equal(out, np.arange(64) ^ 1)


# ---------------------------------------------------------------- atomics

def test_atomics_on_one_address_serialise() -> None:
    text = assembled_kernel(".param .u64 pout, .param .u64 pctr", REGS + """
  ld.param.u64 %rd0, [pout];
  ld.param.u64 %rd3, [pctr];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd1, %rd0, %rd2;
  atom.global.add.u32 %r2, [%rd3], 1;
  st.global.u32 [%rd1], %r2;
  atom.global.max.s32 %r3, [%rd3+4], %r1;
  atom.global.exch.b32 %r4, [%rd3+8], %r1;
  atom.global.cas.b32 %r5, [%rd3+12], 0, 77;
  atom.global.inc.u32 %r6, [%rd3+16], 9;
  red.global.add.f32 [%rd3+20], 0f3F000000;
  atom.global.add.f32 %f1, [%rd3+24], 0f3F800000;""")
    out = np.zeros(64, np.uint32)
    ctr = np.zeros(8, np.uint32)
    run_checked(text, "k", block=(64,), args=[out, ctr])
    assert sorted(out) == list(range(64))
    assert ctr[0] == 64 and ctr[1] == 63 and ctr[3] == 77
    assert ctr[4] == 64 % 10                              # inc wraps to 0 after 9
    assert ctr[5:7].view(np.float32).tolist() == [32.0, 64.0]


def test_shared_atomic_max() -> None:
    text = out_kernel("""
  mov.u32 %r2, smem;
  st.shared.u32 [%r2], 0;
  bar.sync 0;
  mul.lo.u32 %r3, %r1, 7919;
  rem.u32 %r3, %r3, 1000;
  atom.shared.cta.max.u32 %r4, [%r2], %r3;
  bar.sync 0;
  ld.shared.u32 %r5, [%r2];
  st.global.u32 [%rd1], %r5;""", shared="  .shared .align 4 .b8 smem[4];\n")
    got = run_out(text, 96)
    assert (got == max(i * 7919 % 1000 for i in range(96))).all()


# ---------------------------------------------------------------- vector access, local, const

def test_vector_loads_stores_and_local_memory() -> None:
    text = assembled_kernel(".param .u64 pin, .param .u64 pout", REGS + """
  .local .align 16 .b8 buf[32];
  ld.param.u64 %rd0, [pin];
  ld.param.u64 %rd1, [pout];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 16;
  add.s64 %rd3, %rd0, %rd2;
  ld.global.nc.v4.u32 {%r2, %r3, %r4, %r5}, [%rd3];
  mov.u64 %rd4, buf;
  st.local.v4.u32 [%rd4+16], {%r5, %r4, %r3, %r2};
  add.u32 %r6, %r1, 1000;
  st.local.u32 [%rd4], %r6;
  ld.local.v2.u32 {%r7, %r8}, [%rd4+16];
  ld.local.u32 %r9, [%rd4];
  add.s64 %rd5, %rd1, %rd2;
  st.global.v4.u32 [%rd5], {%r7, %r8, %r9, %r2};""")
    src = np.arange(4 * 40, dtype=np.uint32)
    out = np.zeros_like(src)
    run_checked(text, "k", block=(40,), args=[src, out])
    s = src.reshape(40, 4)
    want = np.stack([s[:, 3], s[:, 2], np.arange(40) + 1000, s[:, 0]], axis=1)
    np.testing.assert_array_equal(out.reshape(40, 4), want)


def test_const_and_global_variables() -> None:
    text = kernel(".param .u64 pout", REGS + """
  ld.param.u64 %rd0, [pout];
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 3;
  mul.wide.u32 %rd2, %r2, 4;
  mov.u64 %rd3, table;
  add.s64 %rd4, %rd3, %rd2;
  ld.const.u32 %r3, [%rd4];
  ld.global.u32 %r4, [counter];
  add.u32 %r3, %r3, %r4;
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd0, %rd5;
  st.global.u32 [%rd6], %r3;""").replace(
        ".visible .entry", ".const .align 4 .u32 table[4] = {10, 20, 30, 40};\n"
        ".global .align 4 .u32 counter = 5;\n.visible .entry")
    assembled(text)
    out = np.zeros(8, np.uint32)
    run_checked(text, "k", block=(8,), args=[out])
    assert list(out) == [15, 25, 35, 45] * 2


# ---------------------------------------------------------------- approximate math

def ulp_error(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    spacing = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - exact) / spacing


def test_approximate_math_within_documented_error() -> None:
    rng = np.random.default_rng(5)
    x = rng.uniform(-20, 20, 256).astype(np.float32)
    pos = np.abs(x) + np.float32(0.01)
    x64, p64 = x.astype(np.float64), pos.astype(np.float64)
    got = elementwise("ex2.approx.ftz.f32 {d}, {a};", ["f32"], "f32", x)
    assert (ulp_error(got, np.exp2(x64)) <= 2).all()
    got = elementwise("lg2.approx.f32 {d}, {a};", ["f32"], "f32", pos)
    assert (np.abs(got - np.log2(p64)) <= 2 ** -22 * np.maximum(1, np.abs(np.log2(p64)))).all()
    got = elementwise("rsqrt.approx.f32 {d}, {a};", ["f32"], "f32", pos)
    assert (np.abs(got / (1 / np.sqrt(p64)) - 1) <= 2 ** -22).all()
    got = elementwise("rcp.approx.ftz.f32 {d}, {a};", ["f32"], "f32", x)
    assert (ulp_error(got, 1 / x64) <= 1).all()
    got = elementwise("rcp.rn.f32 {d}, {a};", ["f32"], "f32", x)
    np.testing.assert_array_equal(got, (1 / x64).astype(np.float32))
    got = elementwise("sqrt.rn.f32 {d}, {a};", ["f32"], "f32", pos)
    np.testing.assert_array_equal(got, np.sqrt(p64).astype(np.float32))
    s = rng.uniform(-np.pi, np.pi, 128).astype(np.float32)
    assert (np.abs(elementwise("sin.approx.f32 {d}, {a};", ["f32"], "f32", s)
                   - np.sin(s.astype(np.float64))) <= 2 ** -20.5).all()
    assert (np.abs(elementwise("cos.approx.f32 {d}, {a};", ["f32"], "f32", s)
                   - np.cos(s.astype(np.float64))) <= 2 ** -20.5).all()
    t = elementwise("tanh.approx.f32 {d}, {a};", ["f32"], "f32", x / 4)
    ref = np.tanh(x64 / 4)
    assert (np.abs(t - ref) <= 2 ** -10.987 * np.abs(ref) + 1e-30).all()


def test_approximate_math_special_values() -> None:
    sp = np.array([-np.inf, np.inf, 0.0, -0.0, np.nan], np.float32)
    got = elementwise("ex2.approx.f32 {d}, {a};", ["f32"], "f32", sp)
    assert list(got[:4]) == [0.0, np.inf, 1.0, 1.0] and np.isnan(got[4])
    got = elementwise("lg2.approx.f32 {d}, {a};", ["f32"], "f32", sp)
    assert np.isnan(got[0]) and list(got[1:4]) == [np.inf, -np.inf, -np.inf]
    got = elementwise("rcp.approx.f32 {d}, {a};", ["f32"], "f32", sp)
    assert list(got[:4]) == [-0.0, 0.0, np.inf, -np.inf]
    got = elementwise("ex2.approx.ftz.f32 {d}, {a};", ["f32"], "f32",
                      np.array([-130.0], np.float32))
    assert got[0] == 0.0                                  # subnormal result flushed


# ---------------------------------------------------------------- tensor-core fragments

@pytest.mark.skipif(not REF.is_dir(), reason="reference PTX examples not found")
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_mma_sync_m16n8k16_reference_snippet(dtype: str) -> None:
    """NVIDIA-assembled snippet 02: D = A(16x16, row) @ B(16x8, col) with the PTX ISA's
    fragment layout; it runs the f16 then the bf16 mma on the same registers."""
    import ml_dtypes
    text = (REF / "02_mma_sync_m16n8k16.ptx").read_text()
    rng = np.random.default_rng(3)
    A = rng.integers(-4, 5, (16, 16)).astype(np.float16)
    Bt = rng.integers(-4, 5, (8, 16)).astype(np.float16)
    D = np.zeros((16, 8), np.float32)
    run_checked(text, "mma_m16n8k16_f16_f32", block=(32,), args=[A, Bt, D])
    # the tensor cores' sums (tensor_core_sums, measured on an H200; its own tests): the
    # f16 integers are exact, but the second mma reinterprets their bits as bf16 (values
    # of far apart exponents, which the tensor cores truncate) and accumulates onto the
    # first
    f16 = tensor_core_dot(A.astype(np.float64)[:, None, :], Bt.astype(np.float64)[None],
                          np.zeros((16, 8)), "f16")
    Ab = A.view(np.uint16).view(ml_dtypes.bfloat16).astype(np.float64)
    Bb = Bt.view(np.uint16).view(ml_dtypes.bfloat16).astype(np.float64)
    np.testing.assert_array_equal(
        D, tensor_core_dot(Ab[:, None, :], Bb[None], f16.astype(np.float64), "bf16"))
    del dtype


def test_ldmatrix_fragments_and_transpose() -> None:
    text = assembled_kernel(".param .u64 pin, .param .u64 pout", REGS + """
  .shared .align 16 .b8 sm[512];
  ld.param.u64 %rd0, [pin];
  ld.param.u64 %rd1, [pout];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, sm;
  shl.b32 %r3, %r1, 4;
  add.u32 %r4, %r2, %r3;
  mul.wide.u32 %rd2, %r3, 1;
  add.s64 %rd3, %rd0, %rd2;
  cp.async.cg.shared.global [%r4], [%rd3], 16;
  cp.async.commit_group;
  cp.async.wait_group 0;
  bar.sync 0;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r10, %r11, %r12, %r13}, [%r4];
  ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r14, %r15, %r16, %r17}, [%r4];
  mul.wide.u32 %rd4, %r1, 32;
  add.s64 %rd5, %rd1, %rd4;
  st.global.v4.u32 [%rd5], {%r10, %r11, %r12, %r13};
  st.global.v4.u32 [%rd5+16], {%r14, %r15, %r16, %r17};""")
    src = np.arange(256, dtype=np.uint16)               # 4 matrices of 8x8, row-major
    out = np.zeros((32, 8), np.uint32)
    run_checked(text, "k", block=(32,), args=[src, out])
    mats = src.reshape(4, 8, 8)
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for i in range(4):
            plain = out[lane, i]
            assert plain & 0xFFFF == mats[i, g, 2 * t] and plain >> 16 == mats[i, g, 2 * t + 1]
            tr = out[lane, 4 + i]
            assert tr & 0xFFFF == mats[i, 2 * t, g] and tr >> 16 == mats[i, 2 * t + 1, g]


# ---------------------------------------------------------------- special registers, printf

def test_special_registers() -> None:
    text = out_kernel("""
  mov.u32 %r2, %ctaid.y;
  mov.u32 %r3, %nctaid.x;
  mov.u32 %r4, %ntid.y;
  mov.u32 %r5, %laneid;
  mov.u32 %r6, %warpid;
  mov.u32 %r7, %tid.y;
  mad.lo.u32 %r8, %r2, 1000, %r3;
  mad.lo.u32 %r8, %r8, 10, %r4;
  mad.lo.u32 %r8, %r8, 100, %r5;
  mad.lo.u32 %r8, %r8, 10, %r6;
  mad.lo.u32 %r8, %r8, 10, %r7;
  mov.u32 %r9, %ntid.x;
  mad.lo.u32 %r10, %r7, %r9, %r1;
  mov.u32 %r11, %ctaid.x;
  mad.lo.u32 %r12, %r2, %r3, %r11;
  mul.lo.u32 %r12, %r12, 48;
  add.u32 %r10, %r10, %r12;
  mul.wide.u32 %rd2, %r10, 4;
  add.s64 %rd1, %rd0, %rd2;
  st.global.u32 [%rd1], %r8;""")
    out = np.zeros(2 * 3 * 48, np.uint32)
    run_checked(text, "k", grid=(2, 3), block=(16, 3), args=[out])
    o = out.reshape(3, 2, 3, 16)          # ctaid.y, ctaid.x, tid.y, tid.x
    for cy in range(3):
        for ty in range(3):
            for tx in range(16):
                lin = ty * 16 + tx
                want = ((((cy * 1000 + 2) * 10 + 3) * 100 + lin % 32) * 10 + lin // 32) * 10 + ty
                assert o[cy, 1, ty, tx] == want


def test_vprintf(capsys) -> None:
    text = """.version 8.0
.target sm_90
.address_size 64
.extern .func (.param .b32 func_retval0) vprintf (.param .b64 vprintf_param_0, .param .b64 vprintf_param_1);
.global .align 1 .b8 $str[16] = {116, 105, 100, 61, 37, 100, 32, 120, 61, 37, 46, 50, 102, 10, 0};
.visible .entry k()
{
  .local .align 8 .b8 __local_depot0[16];
  .reg .b64 %SP;
  .reg .b64 %SPL;
  .reg .b32 %r<4>;
  .reg .b64 %rd<8>;
  .reg .f64 %fd<2>;
  mov.u64 %SPL, __local_depot0;
  cvta.local.u64 %SP, %SPL;
  mov.u32 %r1, %tid.x;
  add.u64 %rd1, %SP, 0;
  add.u64 %rd2, %SPL, 0;
  st.local.u32 [%rd2], %r1;
  cvt.rn.f64.u32 %fd1, %r1;
  mul.f64 %fd1, %fd1, 0d3FE0000000000000;
  st.local.f64 [%rd2+8], %fd1;
  mov.u64 %rd3, $str;
  cvta.global.u64 %rd4, %rd3;
  {
  .param .b64 param0;
  st.param.b64 [param0], %rd4;
  .param .b64 param1;
  st.param.b64 [param1], %rd1;
  .param .b32 retval0;
  call.uni (retval0), vprintf, (param0, param1);
  ld.param.b32 %r2, [retval0];
  }
  ret;
}
"""
    run_checked(text, "k", block=(3,), args=[])
    assert capsys.readouterr().out == "tid=0 x=0.00\ntid=1 x=0.50\ntid=2 x=1.00\n"


def test_bulk_copy_through_shared_memory_with_mbarrier() -> None:
    text = assembled_kernel(".param .u64 pin, .param .u64 pout", REGS + """
  .shared .align 128 .b8 buf[256];
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd0, [pin];
  ld.param.u64 %rd1, [pout];
  mov.u32 %r1, %tid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra WAIT;
  mbarrier.init.shared.b64 [bar], 1;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [buf], [%rd0], 256, [bar];
  mbarrier.arrive.expect_tx.shared.b64 %rd2, [bar], 256;
WAIT:
  bar.sync 0;
SPIN:
  mbarrier.try_wait.parity.shared.b64 %p2, [bar], 0;
  @!%p2 bra SPIN;
  @%p1 bra DONE;
  isspacep.global %p3, %rd1;
  @!%p3 trap;
  cp.async.bulk.global.shared::cta.bulk_group [%rd1], [buf], 256;
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
DONE:""")
    src = np.arange(64, dtype=np.uint32) * 3
    out = np.zeros(64, np.uint32)
    run_checked(text, "k", block=(64,), args=[src, out])
    np.testing.assert_array_equal(out, src)


def test_clock_moves_forward() -> None:
    text = out_kernel("""
  mov.u32 %r2, %clock;
  mov.u64 %rd3, %clock64;
  mov.u32 %r3, %clock;
  sub.u32 %r4, %r3, %r2;
  st.global.u32 [%rd1], %r4;""")
    got = run_out(text, 32)
    assert (got > 0).all()


def _fragments(kind: str, k: int, esize: int):
    """Per lane, the matrix coordinates of each fragment element, from the PTX ISA's
    figures for mma.m16n8k8 / k16 (16-bit) and m16n8k32 (8-bit): g = lane / 4, t = lane % 4."""
    out = []
    for lane in range(32):
        g, t = lane // 4, lane % 4
        if kind == "a" and esize == 2 and k == 8:
            els = [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]
        elif kind == "a" and esize == 2:
            els = [(g + dr, 2 * t + dc + j) for dc in (0, 8) for dr in (0, 8) for j in (0, 1)]
        elif kind == "a":
            els = [(g + dr, 4 * t + dc + j) for dc in (0, 16) for dr in (0, 8) for j in range(4)]
        elif kind == "b" and esize == 2:
            els = [(2 * t + dk + j, g) for dk in ((0,) if k == 8 else (0, 8)) for j in (0, 1)]
        elif kind == "b":
            els = [(4 * t + dk + j, g) for dk in (0, 16) for j in range(4)]
        else:
            els = [(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]
        out.append(els)
    return out


@pytest.mark.parametrize("shape,ab,acc", [("m16n8k8", "f16", "f32"), ("m16n8k8", "bf16", "f32"),
                                          ("m16n8k32", "e4m3", "f32"), ("m16n8k32", "e5m2", "f32"),
                                          ("m16n8k32", "s8", "s32"), ("m16n8k16", "f16", "f16")])
def test_mma_sync_fragment_layouts(shape: str, ab: str, acc: str) -> None:
    import ml_dtypes
    k = int(shape.split("k")[1])
    esize = 1 if ab in ("e4m3", "e5m2", "s8") else 2
    et = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn,
          "e5m2": ml_dtypes.float8_e5m2, "s8": np.int8}[ab]
    rng = np.random.default_rng(k + esize)
    A = rng.integers(-3, 4, (16, k)).astype(et)
    B = rng.integers(-3, 4, (k, 8)).astype(et)
    C = rng.integers(-3, 4, (16, 8)).astype(np.int32 if acc == "s32" else np.float32)
    if acc == "f16":
        C = C.astype(np.float16)
    fa, fb, fc = (_fragments(x, k, esize) for x in "abc")
    per = 4 // esize
    na, nb = len(fa[0]) // per, len(fb[0]) // per
    nc = 2 if acc == "f16" else 4

    def pack(mat, frags, nregs):
        bits = mat.view(np.uint8 if esize == 1 and mat.dtype.itemsize == 1 else
                        {2: np.uint16, 4: np.uint32}[mat.dtype.itemsize])
        size = mat.dtype.itemsize
        regs = np.zeros((32, nregs), np.uint32)
        for lane in range(32):
            for e, (r, col) in enumerate(frags[lane]):
                regs[lane, e // (4 // size)] |= np.uint32(int(bits[r, col])) << np.uint32(
                    8 * size * (e % (4 // size)))
        return regs.reshape(-1)

    ra, rb, rc = pack(A, fa, na), pack(B, fb, nb), pack(C, fc, nc)
    rd = np.zeros(32 * nc, np.uint32)
    names = [f"%r{i}" for i in range(na + nb + 2 * nc)]
    a_r, b_r = names[:na], names[na:na + nb]
    c_r, d_r = names[na + nb:na + nb + nc], names[na + nb + nc:]
    loads = []
    for base, regs, n in (("%rd1", a_r, na), ("%rd2", b_r, nb), ("%rd3", c_r, nc)):
        loads += [f"  mul.wide.u32 %rd6, %r40, {4 * n};", f"  add.s64 %rd7, {base}, %rd6;"]
        loads += [f"  ld.global.b32 {r}, [%rd7+{4 * j}];" for j, r in enumerate(regs)]
    stores = [f"  mul.wide.u32 %rd6, %r40, {4 * nc};", "  add.s64 %rd7, %rd4, %rd6;"]
    stores += [f"  st.global.b32 [%rd7+{4 * j}], {r};" for j, r in enumerate(d_r)]
    acc_t = "f16" if acc == "f16" else acc
    body = "\n".join([
        "  .reg .b32 %r<48>;", "  .reg .b64 %rd<8>;",
        "  ld.param.u64 %rd1, [pa];", "  ld.param.u64 %rd2, [pb];",
        "  ld.param.u64 %rd3, [pc];", "  ld.param.u64 %rd4, [pd];", "  mov.u32 %r40, %tid.x;",
        *loads,
        (f"  mma.sync.aligned.{shape}.row.col.{acc_t}.{ab}.{ab}.{acc_t} "
         f"{{{', '.join(d_r)}}}, {{{', '.join(a_r)}}}, {{{', '.join(b_r)}}}, "
         f"{{{', '.join(c_r)}}};"),
        *stores, "  ret;"])
    text = kernel(".param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd", body)
    if ab in ("e4m3", "e5m2"):
        text = text.replace(".version 8.0", ".version 8.7")      # f8 mma needs PTX 8.4+
    run_checked(text, "k", block=(32,), args=[ra, rb, rc, rd])
    want = A.astype(np.float64) @ B.astype(np.float64) + C.astype(np.float64)
    got = np.zeros((16, 8))
    regs = rd.reshape(32, nc)
    for lane in range(32):
        for e, (r, col) in enumerate(fc[lane]):
            if acc == "f16":
                v = (int(regs[lane, e // 2]) >> (16 * (e % 2))) & 0xFFFF
                got[r, col] = float(np.array([v], np.uint16).view(np.float16)[0])
            elif acc == "s32":
                got[r, col] = float(regs[lane, e].view(np.int32))
            else:
                got[r, col] = float(regs[lane, e].view(np.float32))
    np.testing.assert_array_equal(got, want)


def test_match_sync() -> None:
    text = out_kernel("""
  shr.u32 %r2, %r1, 3;
  and.b32 %r2, %r2, 1;
  match.any.sync.b32 %r3, %r2, -1;
  match.all.sync.b32 %r4|%p1, %r2, -1;
  selp.u32 %r5, 1, 0, %p1;
  add.u32 %r4, %r4, %r5;
  st.global.u32 [%rd1], %r3;
  st.global.u32 [%rd1+128], %r4;""")
    out = np.zeros(64, np.uint32)
    run_checked(text, "k", block=(32,), args=[out])
    lanes = np.arange(32)
    for lane in lanes:
        assert out[lane] == sum(1 << j for j in lanes if (j >> 3) & 1 == (lane >> 3) & 1)
    assert (out[32:] == 0).all()                      # values differ: mask 0, predicate false


def test_barriers_in_both_sides_of_a_divergent_branch() -> None:
    """Even and odd lanes reach bar.sync on different paths (allowed since sm_70 for the
    non-.aligned barrier); the shared-memory exchange across warps then sees all writes."""
    text = out_kernel("""
  mov.u32 %r2, smem;
  shl.b32 %r3, %r1, 2;
  add.u32 %r4, %r2, %r3;
  and.b32 %r5, %r1, 1;
  setp.eq.u32 %p1, %r5, 0;
  @%p1 bra EVEN;
  mul.lo.u32 %r6, %r1, 3;
  st.shared.u32 [%r4], %r6;
  barrier.sync 0;
  bra JOIN;
EVEN:
  mul.lo.u32 %r6, %r1, 5;
  st.shared.u32 [%r4], %r6;
  barrier.sync 0;
JOIN:
  sub.u32 %r7, 63, %r1;
  shl.b32 %r7, %r7, 2;
  add.u32 %r7, %r2, %r7;
  ld.shared.u32 %r8, [%r7];
  st.global.u32 [%rd1], %r8;""", shared="  .shared .align 4 .b8 smem[256];\n")
    got = run_out(text, 64)
    j = 63 - np.arange(64)
    np.testing.assert_array_equal(got, np.where(j % 2 == 0, 5 * j, 3 * j))


def test_wgmma_no_swizzle_descriptors_and_register_a() -> None:
    """wgmma m64n8k16 with K-major operands in the interleaved (no swizzle) core-matrix
    layout (SS form) and with A in registers (RS form, mma.m16n8k16's A fragment per warp);
    both give A @ B in the accumulator layout of the PTX ISA."""
    rng = np.random.default_rng(21)
    A = rng.integers(-4, 5, (64, 16)).astype(np.float16)
    Bt = rng.integers(-4, 5, (8, 16)).astype(np.float16)       # B as N x K (K-major)

    def core_matrix_layout(mat):                               # LBO 128 B, SBO 256 B
        out = np.zeros(mat.size, np.float16)
        for r in range(mat.shape[0]):
            for k in range(16):
                out[((r // 8) * 256 + (r % 8) * 16 + (k // 8) * 128 + (k % 8) * 2) // 2] = mat[r, k]
        return out

    body = REGS + """  .reg .f32 %d<8>;
  .shared .align 1024 .b8 sA[2048];
  .shared .align 1024 .b8 sB[256];
  ld.param.u64 %rd0, [pa];
  ld.param.u64 %rd1, [pb];
  ld.param.u64 %rd2, [parow];
  ld.param.u64 %rd3, [pout];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, sA;
  mov.u32 %r3, sB;
  shl.b32 %r4, %r1, 4;
  mul.wide.u32 %rd4, %r4, 1;
  add.s64 %rd5, %rd0, %rd4;
  ld.global.v4.b32 {%r10, %r11, %r12, %r13}, [%rd5];
  add.u32 %r5, %r2, %r4;
  st.shared.v4.b32 [%r5], {%r10, %r11, %r12, %r13};
  setp.ge.u32 %p1, %r1, 16;
  @%p1 bra SKIPB;
  add.s64 %rd6, %rd1, %rd4;
  ld.global.v4.b32 {%r10, %r11, %r12, %r13}, [%rd6];
  add.u32 %r6, %r3, %r4;
  st.shared.v4.b32 [%r6], {%r10, %r11, %r12, %r13};
SKIPB:
  bar.sync 0;
  and.b32 %r7, %r2, 262143;
  shr.u32 %r7, %r7, 4;
  cvt.u64.u32 %rd7, %r7;
  or.b64 %rd7, %rd7, 524288;
  or.b64 %rd7, %rd7, 68719476736;
  and.b32 %r8, %r3, 262143;
  shr.u32 %r8, %r8, 4;
  cvt.u64.u32 %rd8, %r8;
  or.b64 %rd8, %rd8, 524288;
  or.b64 %rd8, %rd8, 68719476736;
  setp.ne.u32 %p2, %r1, %r1;
  // A fragment of this warp's 16 rows: rows 16w+g (+8), columns 2t (+8)
  shr.u32 %r20, %r1, 5;
  and.b32 %r21, %r1, 31;
  shr.u32 %r22, %r21, 2;
  and.b32 %r23, %r21, 3;
  shl.b32 %r24, %r20, 4;
  add.u32 %r24, %r24, %r22;
  shl.b32 %r24, %r24, 4;
  shl.b32 %r25, %r23, 1;
  add.u32 %r24, %r24, %r25;
  mul.wide.u32 %rd9, %r24, 2;
  add.s64 %rd10, %rd2, %rd9;
  ld.global.b32 %r30, [%rd10];
  ld.global.b32 %r31, [%rd10+256];
  ld.global.b32 %r32, [%rd10+16];
  ld.global.b32 %r33, [%rd10+272];
  fence.proxy.async.shared::cta;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%d0, %d1, %d2, %d3}, %rd7, %rd8, %p2, 1, 1, 0, 0;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%d4, %d5, %d6, %d7}, {%r30, %r31, %r32, %r33}, %rd8, %p2, 1, 1, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  mul.wide.u32 %rd11, %r1, 32;
  add.s64 %rd12, %rd3, %rd11;
  st.global.v4.f32 [%rd12], {%d0, %d1, %d2, %d3};
  st.global.v4.f32 [%rd12+16], {%d4, %d5, %d6, %d7};
  ret;"""
    text = kernel(".param .u64 pa, .param .u64 pb, .param .u64 parow, .param .u64 pout", body)
    text = text.replace(".target sm_90\n", ".target sm_90a\n")
    out = np.zeros((128, 8), np.float32)
    run_checked(text, "k", block=(128,), args=[core_matrix_layout(A), core_matrix_layout(Bt),
                                                A, out])
    D = A.astype(np.float64) @ Bt.T.astype(np.float64)
    for tid in range(128):
        w, g, t = tid // 32, (tid % 32) // 4, tid % 4
        want = [D[16 * w + g, 2 * t], D[16 * w + g, 2 * t + 1],
                D[16 * w + g + 8, 2 * t], D[16 * w + g + 8, 2 * t + 1]]
        assert list(out[tid, :4]) == want and list(out[tid, 4:]) == want, tid


def _a_fragment(A: np.ndarray, esize: int) -> np.ndarray:
    """(128, 4) b32: each thread's A registers for wgmma's RS form with K = 32 bytes, as
    the PTX ISA lays them out (mma.m16n8k8 tf32 / m16n8k32 f8's A fragment, per warp's
    16 rows): tf32 register i holds (g + 8 (i % 2), t + 4 (i / 2)); f8 register i holds
    (g + 8 (i % 2), 4 t + 16 (i / 2) + j) in byte j."""
    out = np.zeros((128, 4), np.uint32)
    bits = A.view(np.uint32 if esize == 4 else np.uint8)
    for tid in range(128):
        w, g, t = tid // 32, (tid % 32) // 4, tid % 4
        for i in range(4):
            row = 16 * w + g + 8 * (i % 2)
            if esize == 4:
                out[tid, i] = bits[row, t + 4 * (i // 2)]
            else:
                col = 4 * t + 16 * (i // 2)
                out[tid, i] = sum(int(bits[row, col + j]) << (8 * j) for j in range(4))
    return out


@pytest.mark.parametrize("a_type,b_type", [("tf32", "tf32"), ("e4m3", "e4m3"),
                                           ("e5m2", "e4m3")])
def test_wgmma_tf32_and_f8_descriptors_and_register_a(a_type, b_type) -> None:
    """wgmma m64n8k8 (tf32) and m64n8k32 (e4m3/e5m2, mixed): K-major operands of 4- and
    1-byte elements in the interleaved core-matrix layout (8 rows x 16 bytes; LBO 128 B
    along K, SBO 256 B over 8 rows), read through descriptors (SS) and with A in
    registers (RS), without the transpose immediates these types lack. tf32 ignores the
    low 13 bits of each operand (truncation)."""
    import ml_dtypes

    np_type = {"tf32": np.float32, "e4m3": ml_dtypes.float8_e4m3fn,
               "e5m2": ml_dtypes.float8_e5m2}
    esize = 4 if a_type == "tf32" else 1
    k = 32 // esize
    rng = np.random.default_rng(23)
    A = rng.integers(-4, 5, (64, k)).astype(np_type[a_type])
    Bt = rng.integers(-4, 5, (8, k)).astype(np_type[b_type])   # B as N x K (K-major)
    if esize == 4:  # low mantissa bits the instruction ignores
        A = (A.view(np.uint32) | rng.integers(0, 1 << 13, A.shape).astype(np.uint32)) \
            .view(np.float32)
        Bt = (Bt.view(np.uint32) | rng.integers(0, 1 << 13, Bt.shape).astype(np.uint32)) \
            .view(np.float32)

    def core_matrix_layout(mat):
        raw = mat.view(np.uint8).reshape(mat.shape[0], 32)
        out = np.zeros(mat.shape[0] * 32, np.uint8)
        for r in range(mat.shape[0]):
            for b in range(32):
                out[(r // 8) * 256 + (r % 8) * 16 + (b // 16) * 128 + b % 16] = raw[r, b]
        return out

    instr = f"wgmma.mma_async.sync.aligned.m64n8k{k}.f32.{a_type}.{b_type}"
    body = REGS + """  .reg .f32 %d<8>;
  .shared .align 1024 .b8 sA[2048];
  .shared .align 1024 .b8 sB[256];
  ld.param.u64 %rd0, [pa];
  ld.param.u64 %rd1, [pb];
  ld.param.u64 %rd2, [parow];
  ld.param.u64 %rd3, [pout];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, sA;
  mov.u32 %r3, sB;
  shl.b32 %r4, %r1, 4;
  mul.wide.u32 %rd4, %r4, 1;
  add.s64 %rd5, %rd0, %rd4;
  ld.global.v4.b32 {%r10, %r11, %r12, %r13}, [%rd5];
  add.u32 %r5, %r2, %r4;
  st.shared.v4.b32 [%r5], {%r10, %r11, %r12, %r13};
  setp.ge.u32 %p1, %r1, 16;
  @%p1 bra SKIPB;
  add.s64 %rd6, %rd1, %rd4;
  ld.global.v4.b32 {%r10, %r11, %r12, %r13}, [%rd6];
  add.u32 %r6, %r3, %r4;
  st.shared.v4.b32 [%r6], {%r10, %r11, %r12, %r13};
SKIPB:
  bar.sync 0;
  and.b32 %r7, %r2, 262143;
  shr.u32 %r7, %r7, 4;
  cvt.u64.u32 %rd7, %r7;
  or.b64 %rd7, %rd7, 524288;
  or.b64 %rd7, %rd7, 68719476736;
  and.b32 %r8, %r3, 262143;
  shr.u32 %r8, %r8, 4;
  cvt.u64.u32 %rd8, %r8;
  or.b64 %rd8, %rd8, 524288;
  or.b64 %rd8, %rd8, 68719476736;
  setp.ne.u32 %p2, %r1, %r1;
  add.s64 %rd10, %rd2, %rd4;
  ld.global.v4.b32 {%r30, %r31, %r32, %r33}, [%rd10];
  fence.proxy.async.shared::cta;
  wgmma.fence.sync.aligned;
  INSTR {%d0, %d1, %d2, %d3}, %rd7, %rd8, %p2, 1, 1;
  INSTR {%d4, %d5, %d6, %d7}, {%r30, %r31, %r32, %r33}, %rd8, %p2, 1, 1;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  mul.wide.u32 %rd11, %r1, 32;
  add.s64 %rd12, %rd3, %rd11;
  st.global.v4.f32 [%rd12], {%d0, %d1, %d2, %d3};
  st.global.v4.f32 [%rd12+16], {%d4, %d5, %d6, %d7};
  ret;""".replace("INSTR", instr)
    text = kernel(".param .u64 pa, .param .u64 pb, .param .u64 parow, .param .u64 pout", body)
    text = text.replace(".target sm_90\n", ".target sm_90a\n")
    out = np.zeros((128, 8), np.float32)
    run_checked(text, "k", block=(128,), args=[core_matrix_layout(A), core_matrix_layout(Bt),
                                                _a_fragment(A, esize), out])

    def value(x):
        if esize == 4:
            x = (x.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
        return x.astype(np.float64)
    D = value(A) @ value(Bt).T
    for tid in range(128):
        w, g, t = tid // 32, (tid % 32) // 4, tid % 4
        want = [D[16 * w + g, 2 * t], D[16 * w + g, 2 * t + 1],
                D[16 * w + g + 8, 2 * t], D[16 * w + g + 8, 2 * t + 1]]
        assert list(out[tid, :4]) == want and list(out[tid, 4:]) == want, tid
