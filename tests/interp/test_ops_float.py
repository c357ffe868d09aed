"""Floating-point ops: rounding modes (checked against exact rational arithmetic),
NaN and signed-zero rules of maxf/minf, ordered/unordered comparisons, flush-to-zero,
math functions on f32/f16/bf16 (against float64 NumPy, within the type's precision)."""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

from nanotile.ir.enums import ComparisonOrdering, ComparisonPredicate, RoundingMode

from .helpers import T, apply

RNG = np.random.default_rng(11)
DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32,
          "f64": np.float64}


def sample(name: str, n: int = 200) -> np.ndarray:
    x = RNG.standard_normal(n) * np.exp2(RNG.integers(-8, 8, n))
    x[x == 0] = 1.0  # (no zero divisors)
    return x.astype(DTYPES[name])


def exact_round(q: Fraction, dtype, mode: RoundingMode) -> float:
    """Round an exact rational to dtype with a directed mode, by bracketing."""
    near = np.asarray(float(q)).astype(dtype)  # float(q) is correctly rounded to f64
    # f64 -> narrower rounding may differ from exact nearest by a tie; bracket exactly
    cand = [near]
    for direction in (-np.inf, np.inf):
        cand.append(np.nextafter(near, np.asarray(direction).astype(dtype))
                    if dtype != ml_dtypes.bfloat16 else
                    np.asarray(float(near) + (1 if direction > 0 else -1)
                               * float(np.finfo(dtype).eps) * max(abs(float(near)), 1e-30)
                               ).astype(dtype))
    below = [c for c in cand if Fraction(float(c)) <= q]
    above = [c for c in cand if Fraction(float(c)) >= q]
    lo = max(below, key=lambda c: float(c))
    hi = min(above, key=lambda c: float(c))
    if mode == RoundingMode.negative_inf:
        return float(lo)
    if mode == RoundingMode.positive_inf:
        return float(hi)
    return float(lo) if q >= 0 else float(hi)  # toward zero


OPS = {"addf": lambda a, b: a + b, "subf": lambda a, b: a - b, "mulf": lambda a, b: a * b,
       "divf": lambda a, b: a / b}


@pytest.mark.parametrize("ty", ["f16", "f32", "f64"])
@pytest.mark.parametrize("name", list(OPS))
@pytest.mark.parametrize("mode", [RoundingMode.zero, RoundingMode.negative_inf,
                                  RoundingMode.positive_inf, RoundingMode.nearest_even])
def test_rounding_modes_exact(ty, name, mode):
    a, b = sample(ty, 60), sample(ty, 60)
    t = T(a.size, ty)
    got = apply(name, [(a, t), (b, t)], t, rounding_mode=mode)
    biggest = Fraction(float(np.finfo(DTYPES[ty]).max))
    for x, y, g in zip(a.tolist(), b.tolist(), got.tolist()):
        q = OPS[name](Fraction(x), Fraction(y))
        if abs(q) > biggest:  # overflow: covered by test_directed_rounding_overflow
            continue
        if mode == RoundingMode.nearest_even:
            with np.errstate(over="ignore"):
                want = float(np.asarray(float(q)).astype(DTYPES[ty]))
            assert g == want or abs(g - want) <= abs(want) * 2.0 ** -22, (x, y)
        else:
            assert g == exact_round(q, DTYPES[ty], mode), (name, x, y, g)


@pytest.mark.parametrize("ty", ["f16", "f32"])
def test_directed_rounding_overflow(ty):
    big = np.array([np.finfo(DTYPES[ty]).max] * 2, DTYPES[ty])
    sign = np.array([1, -1], DTYPES[ty])
    t = T(2, ty)
    x = apply("mulf", [(big, t), (sign, t)], t)  # exact: +-max
    two = np.full(2, 2, DTYPES[ty])
    mx = float(np.finfo(DTYPES[ty]).max)
    for mode, want in [(RoundingMode.zero, [mx, -mx]),
                       (RoundingMode.positive_inf, [np.inf, -mx]),
                       (RoundingMode.negative_inf, [mx, -np.inf]),
                       (RoundingMode.nearest_even, [np.inf, -np.inf])]:
        got = apply("mulf", [(x, t), (two, t)], t, rounding_mode=mode)
        assert got.astype(np.float64).tolist() == want, mode


@pytest.mark.parametrize("mode", [RoundingMode.zero, RoundingMode.positive_inf])
def test_sqrt_directed_f32(mode):
    a = np.abs(sample("f32", 100))
    t = T(a.size, "f32")
    got = apply("sqrt", [(a, t)], t, rounding_mode=mode)
    for x, g in zip(a.tolist(), got.tolist()):
        g = Fraction(g)
        if mode == RoundingMode.zero:
            assert g * g <= Fraction(x)
            up = Fraction(float(np.nextafter(np.float32(float(g)), np.float32(np.inf))))
            assert up * up > Fraction(x)
        else:
            assert g * g >= Fraction(x)


def test_fma_is_fused_f32():
    # (1 + 2**-23) * (1 - 2**-23) = 1 - 2**-46: unfused f32 rounds the product to 1.
    a, b, c = np.float32(1 + 2**-23), np.float32(1 - 2**-23), np.float32(-1)
    t = T((), "f32")
    assert float(apply("fma", [(a, t), (b, t), (c, t)], t)) == -(2.0 ** -46)


def test_maxf_minf_nan_and_signed_zero():
    t = T(4, "f32")
    a = np.array([np.nan, 1.0, 0.0, -0.0], np.float32)
    b = np.array([2.0, np.nan, -0.0, 0.0], np.float32)
    mx = apply("maxf", [(a, t), (b, t)], t)
    assert mx[:2].tolist() == [2.0, 1.0]
    assert not np.signbit(mx[2]) and not np.signbit(mx[3])
    mn = apply("minf", [(a, t), (b, t)], t)
    assert np.signbit(mn[2]) and np.signbit(mn[3])
    prop = apply("maxf", [(a, t), (b, t)], t, propagate_nan=True)
    assert np.isnan(prop[:2]).all()


@pytest.mark.parametrize("pred,ordered,want", [
    (ComparisonPredicate.less_than, ComparisonOrdering.ordered, [True, False, False]),
    (ComparisonPredicate.less_than, ComparisonOrdering.unordered, [True, False, True]),
    (ComparisonPredicate.not_equal, ComparisonOrdering.ordered, [True, False, False]),
    (ComparisonPredicate.equal, ComparisonOrdering.unordered, [False, True, True]),
])
def test_cmpf_ordering(pred, ordered, want):
    t = T(3, "f32")
    a = np.array([1.0, 2.0, np.nan], np.float32)
    b = np.array([2.0, 2.0, 1.0], np.float32)
    got = apply("cmpf", [(a, t), (b, t)], T(3, "i1"), comparison_predicate=pred,
                comparison_ordering=ordered)
    assert got.tolist() == want


def test_flush_to_zero_f32():
    t = T(2, "f32")
    tiny = np.float32(1e-40)  # subnormal
    a = np.array([tiny, -tiny], np.float32)
    one = np.ones(2, np.float32)
    kept = apply("mulf", [(a, t), (one, t)], t)
    flushed = apply("mulf", [(a, t), (one, t)], t, flush_to_zero=True)
    assert kept.tolist() == a.tolist()
    assert flushed.tolist() == [0.0, 0.0] and np.signbit(flushed[1])


def test_negf_absf_are_sign_bit_ops():
    t = T(3, "bf16")
    a = np.array([1.5, -0.0, np.nan], ml_dtypes.bfloat16)
    neg = apply("negf", [(a, t)], t)
    assert float(neg[0]) == -1.5 and not np.signbit(neg[1].astype(np.float32))
    assert np.isnan(neg[2].astype(np.float32))
    assert apply("absf", [(a, t)], t).astype(np.float32).tolist()[:2] == [1.5, 0.0]


MATH = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sin": np.sin,
        "cos": np.cos, "tan": np.tan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
        "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "ceil": np.ceil,
        "floor": np.floor}
TOL = {"f32": 1e-6, "f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f64": 1e-15}


@pytest.mark.parametrize("ty", ["f32", "f16", "bf16", "f64"])
@pytest.mark.parametrize("name", list(MATH))
def test_math_functions(ty, name):
    x = np.linspace(0.1, 3.0, 32).astype(DTYPES[ty])
    t = T(x.size, ty)
    got = apply(name, [(x, t)], t)
    assert got.dtype == np.dtype(DTYPES[ty])
    want = MATH[name](x.astype(np.float64))
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=TOL[ty], atol=1e-30)


def test_binary_math():
    t = T(4, "f32")
    x = np.array([2.0, 0.5, 3.0, -1.0], np.float32)
    y = np.array([3.0, 2.0, -1.0, 1.0], np.float32)
    np.testing.assert_allclose(apply("fpowf", [(x[:3], T(3, "f32")), (y[:3], T(3, "f32"))],
                                     T(3, "f32")), [8.0, 0.25, 1 / 3], rtol=1e-6)
    np.testing.assert_allclose(apply("atan2", [(x, t), (y, t)], t),
                               [math.atan2(a, b) for a, b in zip(x, y)], rtol=1e-6)
    assert apply("remf", [(np.float32(-7.5), T((), "f32")), (np.float32(2), T((), "f32"))],
                 T((), "f32")) == -1.5
    n = np.array([3, -2, 0, 1], np.int32)
    np.testing.assert_allclose(apply("fpowi", [(x, t), (n, T(4, "i32"))], t),
                               [8.0, 4.0, 1.0, -1.0])


def test_fma_is_fused_f64():
    a, b, c = np.float64(1 + 2**-52), np.float64(1 - 2**-52), np.float64(-1)
    t = T((), "f64")
    assert float(apply("fma", [(a, t), (b, t), (c, t)], t)) == -(2.0 ** -104)
