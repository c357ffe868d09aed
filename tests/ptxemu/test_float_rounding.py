"""Float arithmetic against exact rational arithmetic: PTX rounding modes, fma fusion,
flush-to-zero, saturation, NaN and min/max rules (PTX ISA, floating-point instructions)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tests.ptxemu.ptxkit import bits32, elementwise, f32

MODES = ("rn", "rz", "rm", "rp")


def round_f32(q: Fraction, mode: str) -> np.float32:
    """The f32 value of the exact rational ``q`` under rounding ``mode``."""
    x = np.float32(float(q))
    lo = x if Fraction(float(x)) <= q else np.nextafter(x, np.float32(-np.inf))
    hi = x if Fraction(float(x)) >= q else np.nextafter(x, np.float32(np.inf))
    if lo == hi:
        return lo
    if mode == "rm":
        return lo
    if mode == "rp":
        return hi
    if mode == "rz":
        return lo if q > 0 else hi
    dl, dh = q - Fraction(float(lo)), Fraction(float(hi)) - q
    if dl != dh:
        return lo if dl < dh else hi
    return lo if bits32(lo) % 2 == 0 else hi


def operands(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    def draw():
        mant = rng.uniform(1, 2, n)
        exp = rng.integers(-30, 30, n)
        sign = rng.choice([-1.0, 1.0], n)
        return (sign * mant * 2.0 ** exp).astype(np.float32)
    a, b, c = draw(), draw(), draw()
    # operands far apart in magnitude exercise the sticky bits
    b[:16] = (a[:16] * np.float32(2.0 ** -40)).astype(np.float32)
    b[16:24] = -a[16:24] * np.float32(1 + 2 ** -20)
    return a, b, c


EXACT = {
    "add": lambda a, b, c: Fraction(float(a)) + Fraction(float(b)),
    "sub": lambda a, b, c: Fraction(float(a)) - Fraction(float(b)),
    "mul": lambda a, b, c: Fraction(float(a)) * Fraction(float(b)),
    "div": lambda a, b, c: Fraction(float(a)) / Fraction(float(b)),
    "fma": lambda a, b, c: Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)),
}


@pytest.mark.parametrize("op", sorted(EXACT))
def test_f32_rounding_modes_match_exact_arithmetic(op: str) -> None:
    a, b, c = operands(128, seed=len(op))
    nargs = 3 if op == "fma" else 2
    for mode in MODES:
        regs = ", ".join(f"{{{r}}}" for r in "abc"[:nargs])
        got = elementwise(f"{op}.{mode}.f32 {{d}}, {regs};", ["f32"] * nargs, "f32",
                          *(a, b, c)[:nargs])
        want = np.array([round_f32(EXACT[op](x, y, z), mode) for x, y, z in zip(a, b, c)],
                        np.float32)
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32),
                                      err_msg=f"{op}.{mode}")


def test_fma_is_fused_and_mul_add_is_not() -> None:
    x = np.array([1 + 2 ** -12], np.float32)
    m = np.array([-1.0], np.float32)
    fused = elementwise("fma.rn.f32 {d}, {a}, {b}, {c};", ["f32"] * 3, "f32", x, x, m)
    assert fused[0] == np.float32(2 ** -11 + 2 ** -24)
    prod = elementwise("mul.rn.f32 {d}, {a}, {b};", ["f32"] * 2, "f32", x, x)
    assert prod[0] == np.float32(1 + 2 ** -11)          # 2^-24 lost to rounding


def test_directed_rounding_at_overflow() -> None:
    big = np.array([3.0e38, -3.0e38], np.float32)
    fmax = np.finfo(np.float32).max
    assert list(elementwise("add.rn.f32 {d}, {a}, {b};", ["f32"] * 2, "f32", big, big)) == \
        [np.inf, -np.inf]
    assert list(elementwise("add.rz.f32 {d}, {a}, {b};", ["f32"] * 2, "f32", big, big)) == \
        [fmax, -fmax]
    assert list(elementwise("add.rm.f32 {d}, {a}, {b};", ["f32"] * 2, "f32", big, big)) == \
        [fmax, -np.inf]
    assert list(elementwise("add.rp.f32 {d}, {a}, {b};", ["f32"] * 2, "f32", big, big)) == \
        [np.inf, -fmax]


def test_f64_rounding_modes() -> None:
    a = np.array([1.0, 1.0, -1.0, 3.0], np.float64)
    b = np.array([2.0 ** -60, -(2.0 ** -60), 2.0 ** -60, 7.0], np.float64)
    for mode in MODES:
        got = elementwise(f"add.{mode}.f64 {{d}}, {{a}}, {{b}};", ["f64"] * 2, "f64", a, b)
        for g, x, y in zip(got, a, b):
            q = Fraction(x) + Fraction(y)
            lo = max(v for v in (np.nextafter(float(q), -np.inf), float(q),
                                 np.nextafter(float(q), np.inf)) if Fraction(v) <= q)
            hi = min(v for v in (np.nextafter(float(q), -np.inf), float(q),
                                 np.nextafter(float(q), np.inf)) if Fraction(v) >= q)
            want = {"rn": float(q), "rm": lo, "rp": hi, "rz": lo if q > 0 else hi}[mode]
            assert g == want, (mode, x, y)


def test_ftz_flushes_subnormal_inputs_and_results() -> None:
    tiny = np.array([f32(0x00000100), f32(0x80000100)], np.float32)    # subnormals
    one = np.ones(2, np.float32)
    got = elementwise("mul.ftz.f32 {d}, {a}, {b};", ["f32"] * 2, "f32", tiny, one)
    assert [bits32(x) for x in got] == [0, 0x80000000]
    got = elementwise("mul.f32 {d}, {a}, {b};", ["f32"] * 2, "f32", tiny, one)
    assert [bits32(x) for x in got] == [0x100, 0x80000100]
    # a normal product that rounds into the subnormal range is flushed too
    small = np.array([2.0 ** -70], np.float32)
    got = elementwise("mul.rn.ftz.f32 {d}, {a}, {b};", ["f32"] * 2, "f32", small, small)
    assert bits32(got[0]) == 0


def test_sat_clamps_to_unit_interval_and_nan_to_zero() -> None:
    a = np.array([-2.0, 0.25, 3.0, np.nan], np.float32)
    got = elementwise("add.sat.f32 {d}, {a}, {b};", ["f32"] * 2, "f32", a, np.zeros(4, np.float32))
    assert list(got) == [0.0, 0.25, 1.0, 0.0]


def test_nan_results_are_canonical() -> None:
    a = np.array([np.inf, f32(0x7FC00001)], np.float32)
    b = np.array([-np.inf, 1.0], np.float32)
    got = elementwise("add.f32 {d}, {a}, {b};", ["f32"] * 2, "f32", a, b)
    assert [bits32(x) for x in got] == [0x7FFFFFFF, 0x7FFFFFFF]


def test_min_max_nan_and_signed_zero() -> None:
    nan = np.float32(np.nan)
    a = np.array([nan, 1.0, nan, -0.0, 0.0], np.float32)
    b = np.array([2.0, nan, nan, 0.0, -0.0], np.float32)
    mx = elementwise("max.f32 {d}, {a}, {b};", ["f32"] * 2, "f32", a, b)
    mn = elementwise("min.f32 {d}, {a}, {b};", ["f32"] * 2, "f32", a, b)
    assert [bits32(x) for x in mx] == [bits32(2.0), bits32(1.0), 0x7FFFFFFF, 0, 0]
    assert [bits32(x) for x in mn] == [bits32(2.0), bits32(1.0), 0x7FFFFFFF, 0x80000000,
                                       0x80000000]
    mxn = elementwise("max.NaN.f32 {d}, {a}, {b};", ["f32"] * 2, "f32", a, b)
    assert [bits32(x) for x in mxn[:3]] == [0x7FFFFFFF] * 3


def test_abs_neg_copysign_are_bit_operations() -> None:
    a = np.array([-1.5, 0.0, -np.inf], np.float32)
    assert list(elementwise("abs.f32 {d}, {a};", ["f32"], "f32", a)) == [1.5, 0.0, np.inf]
    got = elementwise("neg.f32 {d}, {a};", ["f32"], "f32", a)
    assert [bits32(x) for x in got] == [bits32(1.5), 0x80000000, bits32(np.inf)]
    mag = np.array([2.0, 3.0, 4.0], np.float32)
    got = elementwise("copysign.f32 {d}, {a}, {b};", ["f32"] * 2, "f32", a, mag)
    assert [bits32(x) for x in got] == [bits32(-2.0), bits32(3.0), bits32(-4.0)]


def test_half_precision_arithmetic_rounds_once() -> None:
    a = np.array([2048.0, 1.0, 65504.0], np.float16)
    b = np.array([1.0, 2.0 ** -11, 65504.0], np.float16)
    got = elementwise("add.rn.f16 {d}, {a}, {b};", ["f16"] * 2, "f16", a, b)
    # 2049 is a tie between 2048 and 2050 -> even (2048); 1+2^-11 ties to 1; overflow -> inf
    assert list(got) == [2048.0, 1.0, np.inf]
    got = elementwise("fma.rn.f16 {d}, {a}, {b}, {b};", ["f16"] * 2, "f16", a, b)
    # 2048*1+1 ties to even; 1*2^-11 + 2^-11 = 2^-10 exactly; overflow -> inf
    assert list(got) == [2048.0, 2.0 ** -10, np.inf]
    packed = np.array([0x3C00_4000], np.uint32)     # (hi 1.0, lo 2.0)
    got = elementwise("mul.rn.f16x2 {d}, {a}, {b};", ["b32"] * 2, "b32", packed, packed)
    assert got[0] == 0x3C00_4400                   # (1.0, 4.0)
