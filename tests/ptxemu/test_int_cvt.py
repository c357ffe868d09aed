"""Integer arithmetic, comparisons and conversions as the PTX ISA defines them."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.ptxemu.ptxkit import elementwise, f32

I32 = np.int32
U32 = np.uint32


def run2(instr, t_in, t_out, a, b):
    return elementwise(instr, [t_in, t_in], t_out, np.array(a), np.array(b))


def test_add_wraps_and_sat_clamps() -> None:
    a = np.array([2 ** 31 - 1, -2 ** 31, 5], I32)
    b = np.array([1, -1, -7], I32)
    assert list(run2("add.s32 {d}, {a}, {b};", "s32", "s32", a, b)) == [-2 ** 31, 2 ** 31 - 1, -2]
    assert list(run2("add.sat.s32 {d}, {a}, {b};", "s32", "s32", a, b)) == \
        [2 ** 31 - 1, -2 ** 31, -2]


def test_mul_lo_hi_wide() -> None:
    a = np.array([-3, 0x7FFFFFFF, -1], I32)
    b = np.array([5, 0x7FFFFFFF, -1], I32)
    assert list(run2("mul.lo.s32 {d}, {a}, {b};", "s32", "s32", a, b)) == [-15, 1, 1]
    assert list(run2("mul.hi.s32 {d}, {a}, {b};", "s32", "s32", a, b)) == \
        [-1, (0x7FFFFFFF ** 2) >> 32, 0]
    wide = elementwise("mul.wide.s32 {d}, {a}, {b};", ["s32", "s32"], "s64", a, b)
    assert list(wide) == [-15, 0x7FFFFFFF ** 2, 1]
    ua = np.array([0xFFFFFFFF, 3], U32)
    assert list(run2("mul.hi.u32 {d}, {a}, {b};", "u32", "u32", ua, ua)) == [0xFFFFFFFE, 0]
    big = np.array([2 ** 64 - 1, 2 ** 40], np.uint64)
    got = run2("mul.hi.u64 {d}, {a}, {b};", "u64", "u64", big, big)
    assert list(got) == [((2 ** 64 - 1) ** 2) >> 64, 2 ** 16]


@pytest.mark.parametrize("t", ["u16", "u32", "u64", "s16", "s32", "s64"])
def test_mul_hi_is_the_high_half_of_the_exact_product(t) -> None:
    """mul.hi on random values over the whole range and the extremes: bit for bit the
    high half of the exact 2N-bit product (unsigned or signed as the type says)."""
    bits = int(t[1:])
    dt = np.dtype(f"{'u' if t[0] == 'u' else ''}int{bits}")
    info = np.iinfo(dt)
    rng = np.random.default_rng(bits)
    a, b = (rng.integers(info.min, info.max, 256, dtype=dt, endpoint=True) for _ in "ab")
    edges = np.array([info.min, info.max, 0, 1, info.max - 1, info.min + 1], dt)
    a[:36], b[:36] = np.repeat(edges, 6), np.tile(edges, 6)
    got = run2(f"mul.hi.{t} {{d}}, {{a}}, {{b}};", t, t, a, b)
    mask = (1 << bits) - 1
    want = [((int(x) * int(y)) >> bits) & mask for x, y in zip(a, b)]
    assert [int(v) & mask for v in got] == want


def test_div_rem_truncate_toward_zero() -> None:
    a = np.array([-7, 7, -7, 7], I32)
    b = np.array([2, -2, -2, 2], I32)
    assert list(run2("div.s32 {d}, {a}, {b};", "s32", "s32", a, b)) == [-3, -3, 3, 3]
    assert list(run2("rem.s32 {d}, {a}, {b};", "s32", "s32", a, b)) == [-1, 1, -1, 1]
    assert list(run2("div.u32 {d}, {a}, {b};", "u32", "u32", np.array([7], U32),
                     np.array([2], U32))) == [3]


def test_shifts_clamp_large_amounts() -> None:
    a = np.array([-8, -8, 1, 0x80000000 - 2 ** 32], I32)
    s = np.array([1, 40, 33, 31], U32)
    got = elementwise("shr.s32 {d}, {a}, {b};", ["s32", "u32"], "s32", a, s)
    assert list(got) == [-4, -1, 0, -1]
    got = elementwise("shr.u32 {d}, {a}, {b};", ["u32", "u32"], "u32", a.view(U32), s)
    assert list(got) == [0x7FFFFFFC, 0, 0, 1]
    got = elementwise("shl.b32 {d}, {a}, {b};", ["b32", "u32"], "b32", a.view(U32), s)
    assert list(got) == [0xFFFFFFF0, 0, 0, 0]


def test_bit_manipulation() -> None:
    x = np.array([0x000000F0, 0x80000001, 0], U32)
    assert list(elementwise("popc.b32 {d}, {a};", ["b32"], "u32", x)) == [4, 2, 0]
    assert list(elementwise("clz.b32 {d}, {a};", ["b32"], "u32", x)) == [24, 0, 32]
    assert list(elementwise("brev.b32 {d}, {a};", ["b32"], "b32", x)) == [0x0F000000, 0x80000001, 0]
    v = np.array([0xABCD1234, 0x0000F000], U32)
    got = elementwise("bfe.u32 {d}, {a}, 8, 8;", ["u32"], "u32", v)
    assert list(got) == [0x12, 0xF0]
    got = elementwise("bfe.s32 {d}, {a}, 12, 4;", ["s32"], "s32", v.view(I32))
    assert list(got) == [1, -1]
    got = elementwise("bfi.b32 {d}, {a}, {b}, 4, 8;", ["b32", "b32"], "b32",
                      np.array([0xFF, 0x5A], U32), np.array([0, 0xFFFFFFFF], U32))
    assert list(got) == [0xFF0, 0xFFFFF5AF]
    got = elementwise("prmt.b32 {d}, {a}, {b}, 0x3210;", ["b32", "b32"], "b32",
                      np.array([0x44332211], U32), np.array([0x88776655], U32))
    assert got[0] == 0x44332211
    got = elementwise("prmt.b32 {d}, {a}, {b}, 0x4567;", ["b32", "b32"], "b32",
                      np.array([0x44332211], U32), np.array([0x88776655], U32))
    assert got[0] == 0x55667788
    got = elementwise("prmt.b32 {d}, {a}, {b}, 0x8880;", ["b32", "b32"], "b32",
                      np.array([0x000000F1], U32), np.array([0], U32))
    assert got[0] == 0xFFFFFFF1       # selector bit 3 replicates the byte's sign


def test_setp_signed_unsigned_and_unordered() -> None:
    a = np.array([0xFFFFFFFF, 1], U32)
    b = np.array([1, 0xFFFFFFFF], U32)
    assert list(run2("setp.lt.s32 {d}, {a}, {b};", "s32", "pred", a.view(I32), b.view(I32))) == \
        [True, False]
    assert list(run2("setp.lo.u32 {d}, {a}, {b};", "u32", "pred", a, b)) == [False, True]
    nan = np.float32(np.nan)
    x = np.array([nan, 1.0, 1.0], np.float32)
    y = np.array([1.0, nan, 2.0], np.float32)
    assert list(run2("setp.lt.f32 {d}, {a}, {b};", "f32", "pred", x, y)) == [False, False, True]
    assert list(run2("setp.ltu.f32 {d}, {a}, {b};", "f32", "pred", x, y)) == [True, True, True]
    assert list(run2("setp.ne.f32 {d}, {a}, {b};", "f32", "pred", x, y)) == [False, False, True]
    assert list(run2("setp.neu.f32 {d}, {a}, {b};", "f32", "pred", x, y)) == [True, True, True]
    assert list(run2("setp.nan.f32 {d}, {a}, {b};", "f32", "pred", x, y)) == [True, True, False]
    assert list(run2("setp.num.f32 {d}, {a}, {b};", "f32", "pred", x, y)) == [False, False, True]


def test_setp_combines_with_predicate_and_writes_complement() -> None:
    a = np.array([1, 5, 1, 5], I32)
    b = np.array([3, 3, 3, 3], I32)
    c = np.array([True, True, False, False])
    got = elementwise("setp.lt.and.s32 {d}, {a}, {b}, {c};", ["s32", "s32", "pred"], "pred",
                      a, b, c)
    assert list(got) == [True, False, False, False]
    got = elementwise("setp.lt.or.s32 %p1|{d}, {a}, {b}, {c};", ["s32", "s32", "pred"], "pred",
                      a, b, c)
    assert list(got) == [True, True, False, True]      # q = !(a<b) OR c
    got = elementwise("selp.s32 {d}, {a}, {b}, {c};", ["s32", "s32", "pred"], "s32", a, b, c)
    assert list(got) == [1, 5, 3, 3]


def test_cvt_float_to_int_rounding_saturation_nan() -> None:
    x = np.array([2.5, 3.5, -2.5, -2.7, np.nan, 3e9, -3e9, 1e30], np.float32)
    got = elementwise("cvt.rni.s32.f32 {d}, {a};", ["f32"], "s32", x)
    assert list(got) == [2, 4, -2, -3, 0, 2 ** 31 - 1, -2 ** 31, 2 ** 31 - 1]
    got = elementwise("cvt.rzi.s32.f32 {d}, {a};", ["f32"], "s32", x)
    assert list(got[:4]) == [2, 3, -2, -2]
    assert list(elementwise("cvt.rmi.s32.f32 {d}, {a};", ["f32"], "s32", x)[:4]) == [2, 3, -3, -3]
    assert list(elementwise("cvt.rpi.s32.f32 {d}, {a};", ["f32"], "s32", x)[:4]) == [3, 4, -2, -2]
    got = elementwise("cvt.rzi.u32.f32 {d}, {a};", ["f32"], "u32", x)
    assert list(got) == [2, 3, 0, 0, 0, 3000000000, 0, 2 ** 32 - 1]
    got = elementwise("cvt.rzi.s64.f64 {d}, {a};", ["f64"], "s64",
                      np.array([1e300, -1e300, -7.9], np.float64))
    assert list(got) == [2 ** 63 - 1, -2 ** 63, -7]


def test_cvt_int_to_int_extends_truncates_saturates() -> None:
    x = np.array([-1, 300, 70000], I32)
    assert list(elementwise("cvt.u64.s32 {d}, {a};", ["s32"], "u64", x)) == \
        [2 ** 64 - 1, 300, 70000]
    assert list(elementwise("cvt.s64.s32 {d}, {a};", ["s32"], "s64", x)) == [-1, 300, 70000]
    assert list(elementwise("cvt.u8.s32 {d}, {a};", ["s32"], "u8", x)) == [255, 44, 112]
    assert list(elementwise("cvt.sat.u8.s32 {d}, {a};", ["s32"], "u8", x)) == [0, 255, 255]
    assert list(elementwise("cvt.sat.s16.s32 {d}, {a};", ["s32"], "s16", x)) == [-1, 300, 32767]


def test_cvt_int_to_float_rounding() -> None:
    x = np.array([2 ** 24 + 1, -(2 ** 24 + 1), 2 ** 24 + 3], I32)
    assert list(elementwise("cvt.rn.f32.s32 {d}, {a};", ["s32"], "f32", x)) == \
        [2 ** 24, -(2 ** 24), 2 ** 24 + 4]
    assert list(elementwise("cvt.rz.f32.s32 {d}, {a};", ["s32"], "f32", x)) == \
        [2 ** 24, -(2 ** 24), 2 ** 24 + 2]
    assert list(elementwise("cvt.rp.f32.s32 {d}, {a};", ["s32"], "f32", x)) == \
        [2 ** 24 + 2, -(2 ** 24), 2 ** 24 + 4]


def test_cvt_f32_to_f16_bf16() -> None:
    x = np.array([70000.0, 65519.0, 65520.0, 1e-8, -np.inf], np.float32)
    got = elementwise("cvt.rn.f16.f32 {d}, {a};", ["f32"], "f16", x)
    assert list(got.astype(np.float64)) == [np.inf, 65504.0, np.inf, 0.0, -np.inf]
    got = elementwise("cvt.rz.f16.f32 {d}, {a};", ["f32"], "f16", x)
    assert list(got.astype(np.float64))[:3] == [65504.0, 65504.0, 65504.0]
    got = elementwise("cvt.rp.f16.f32 {d}, {a};", ["f32"], "f16", x)
    assert got.view(np.uint16)[3] == 1                      # smallest subnormal
    # bf16: ties to even, NaN canonical
    b = np.array([f32(0x3F808000), f32(0x3F818000), f32(0x3F808001), f32(0x7FC12345)],
                 np.float32)
    got = elementwise("cvt.rn.bf16.f32 {d}, {a};", ["f32"], "bf16", b)
    assert [hex(v) for v in got.view(np.uint16)] == ["0x3f80", "0x3f82", "0x3f81", "0x7fff"]
    got = elementwise("cvt.f32.bf16 {d}, {a};", ["bf16"], "f32",
                      np.array([1.5, -2.0], ml_dtypes.bfloat16))
    assert list(got) == [1.5, -2.0]


def test_cvt_packs_high_from_first_operand() -> None:
    a = np.array([1.0], np.float32)
    b = np.array([2.0], np.float32)
    got = elementwise("cvt.rn.bf16x2.f32 {d}, {a}, {b};", ["f32", "f32"], "b32", a, b)
    assert got[0] == 0x3F80_4000
    got = elementwise("cvt.rn.f16x2.f32 {d}, {a}, {b};", ["f32", "f32"], "b32", a, b)
    assert got[0] == 0x3C00_4000


def test_cvt_fp8_saturates_and_unpacks() -> None:
    a = np.array([1000.0, np.nan, -1.0], np.float32)
    b = np.array([0.5, 1.0, -1000.0], np.float32)
    got = elementwise("cvt.rn.satfinite.e4m3x2.f32 {d}, {a}, {b};", ["f32", "f32"], "b16", a, b)
    e4 = ml_dtypes.float8_e4m3fn
    want = [(int(np.array(x, e4).view(np.uint8)) << 8) | int(np.array(y, e4).view(np.uint8))
            for x, y in ((448.0, 0.5), (np.nan, 1.0), (-1.0, -448.0))]
    assert list(got) == want
    back = elementwise("cvt.rn.f16x2.e4m3x2 {d}, {a};", ["b16"], "b32", got)
    lo = (back & 0xFFFF).astype(np.uint16).view(np.float16)
    hi = (back >> 16).astype(np.uint16).view(np.float16)
    assert list(lo) == [0.5, 1.0, -448.0]
    assert hi[0] == 448.0 and np.isnan(hi[1]) and hi[2] == -1.0
    got = elementwise("cvt.rn.satfinite.e5m2x2.f32 {d}, {a}, {b};", ["f32", "f32"], "b16",
                      np.array([1e6], np.float32), np.array([0.25], np.float32))
    e5 = ml_dtypes.float8_e5m2
    assert got[0] == (int(np.array(57344.0, e5).view(np.uint8)) << 8) | \
        int(np.array(0.25, e5).view(np.uint8))


def test_cvt_f16_to_f32_is_exact_and_rounds_to_integer() -> None:
    h = np.array([0.333251953125, -2.5, 65504.0], np.float16)
    assert list(elementwise("cvt.f32.f16 {d}, {a};", ["f16"], "f32", h)) == \
        [0.333251953125, -2.5, 65504.0]
    got = elementwise("cvt.rni.f32.f32 {d}, {a};", ["f32"], "f32",
                      np.array([2.5, -0.5, 1.5], np.float32))
    assert [float(v) for v in got] == [2.0, -0.0, 2.0]


def test_lop3_truth_tables() -> None:
    rng = np.random.default_rng(9)
    a, b, c = (rng.integers(0, 2 ** 32, 64, dtype=np.uint64).astype(U32) for _ in range(3))
    for lut in (0xE8, 0x96, 0xF0, 0xCC, 0xAA, 0x80, 0x01, 0x5A):
        got = elementwise(f"lop3.b32 {{d}}, {{a}}, {{b}}, {{c}}, {lut};", ["b32"] * 3, "b32",
                          a, b, c)
        for g, x, y, z in zip(got, a, b, c):
            want = 0
            for bit in range(32):
                idx = ((int(x) >> bit & 1) << 2) | ((int(y) >> bit & 1) << 1) | (int(z) >> bit & 1)
                want |= (lut >> idx & 1) << bit
            assert int(g) == want, hex(lut)


def test_funnel_shifts() -> None:
    lo = np.array([0x89ABCDEF] * 4, U32)
    hi = np.array([0x01234567] * 4, U32)
    n = np.array([4, 36, 0, 32], U32)
    v = (0x01234567 << 32) | 0x89ABCDEF
    got = elementwise("shf.l.wrap.b32 {d}, {a}, {b}, {c};", ["b32"] * 3, "b32", lo, hi, n)
    assert [int(x) for x in got] == [((v << (k % 32)) >> 32) & 0xFFFFFFFF for k in (4, 36, 0, 32)]
    got = elementwise("shf.r.clamp.b32 {d}, {a}, {b}, {c};", ["b32"] * 3, "b32", lo, hi, n)
    assert [int(x) for x in got] == [(v >> min(k, 32)) & 0xFFFFFFFF for k in (4, 36, 0, 32)]


def test_bfind_mul24_testp() -> None:
    x = np.array([1, 0x00F00000, 0, -1, -0x100], I32)
    assert list(elementwise("bfind.u32 {d}, {a};", ["u32"], "u32", x.view(U32))) == \
        [0, 23, 0xFFFFFFFF, 31, 31]
    assert list(elementwise("bfind.s32 {d}, {a};", ["s32"], "u32", x)) == \
        [0, 23, 0xFFFFFFFF, 0xFFFFFFFF, 7]
    assert list(elementwise("bfind.shiftamt.u32 {d}, {a};", ["u32"], "u32", x.view(U32)))[:2] == \
        [31, 8]
    a = np.array([0x00FFFFFF, 0x01000003, 1000], I32)      # 24-bit -1, 3, 1000
    b = np.array([2, 5, 1000], I32)
    assert list(run2("mul24.lo.s32 {d}, {a}, {b};", "s32", "s32", a, b)) == [-2, 15, 1000000]
    assert list(run2("mul24.hi.u32 {d}, {a}, {b};", "u32", "u32", a.view(U32), b.view(U32))) == \
        [(0xFFFFFF * 2) >> 16, 0, 1000000 >> 16]
    f = np.array([1.0, np.inf, np.nan, 1e-40, 0.0], np.float32)
    assert list(elementwise("testp.finite.f32 {d}, {a};", ["f32"], "pred", f)) == \
        [True, False, False, True, True]
    assert list(elementwise("testp.subnormal.f32 {d}, {a};", ["f32"], "pred", f)) == \
        [False, False, False, True, False]
    assert list(elementwise("testp.normal.f32 {d}, {a};", ["f32"], "pred", f)) == \
        [True, False, False, False, False]


def _sbytes(x: int, signed: bool, n: int = 4, w: int = 8) -> list[int]:
    out = []
    for i in range(n):
        v = (x >> (w * i)) & ((1 << w) - 1)
        out.append(v - (1 << w) if signed and v >= 1 << (w - 1) else v)
    return out


def test_dp4a_dp2a() -> None:
    rng = np.random.default_rng(4)
    a, b = (rng.integers(0, 2 ** 32, 32, dtype=np.uint64).astype(U32) for _ in range(2))
    c = rng.integers(-1000, 1000, 32).astype(I32)
    got = elementwise("dp4a.s32.u32 {d}, {a}, {b}, {c};", ["b32", "b32", "s32"], "s32", a, b, c)
    for g, x, y, z in zip(got, a, b, c):
        want = int(z) + sum(p * q for p, q in zip(_sbytes(int(x), True), _sbytes(int(y), False)))
        assert int(g) == (want + 2 ** 31) % 2 ** 32 - 2 ** 31
    got = elementwise("dp2a.hi.u32.s32 {d}, {a}, {b}, {c};", ["b32", "b32", "s32"], "s32",
                      a, b, c)
    for g, x, y, z in zip(got, a, b, c):
        h = _sbytes(int(x), False, 2, 16)
        bb = _sbytes(int(y), True)
        want = int(z) + h[0] * bb[2] + h[1] * bb[3]
        assert int(g) == (want + 2 ** 31) % 2 ** 32 - 2 ** 31
