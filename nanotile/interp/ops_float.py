"""Semantics of floating-point arithmetic, comparisons and math functions.

Precision (see dtypes.py): f16, bf16 and the 8/4-bit types compute in float32 and round
to the result type (the spec says math on half types is "emulated in f32"); f32 computes
in float32, f64 in float64. Rounding modes of addf/subf/mulf/divf/fma/sqrt:

- ``nearest_even`` (default): NumPy's IEEE arithmetic; exact for these ops.
- ``zero``, ``negative_inf``, ``positive_inf``: the round-to-nearest result is moved one
  ulp when it lies on the wrong side of the exact result. For types below f64 the exact
  result's side is decided in float64: exact for mul and for div/sqrt (by their
  residual), and for add/sub/fma whenever the exact sum fits in 53 bits (operand
  exponents less than ~29 apart); otherwise it can be one ulp off (documented
  approximation). For f64 the exact result is computed with Python fractions (slow,
  exact; sqrt decided by squaring).
- fma is fused: f64 fma is exact (fractions); narrower types add the exact float64
  product to the addend in float64 and round once more to the type (a double rounding
  that can only matter when the float64 sum lands exactly halfway between two values).
- ``approx`` and ``full`` (divf, exp, tanh...): computed like ``nearest_even``; the
  device's approximate instructions are less accurate, never more.

``flush_to_zero`` (f32 only) flushes subnormal inputs and results to sign-preserving zero.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..ir.core import Operation
from ..ir.enums import ComparisonOrdering, RoundingMode
from ..ir.types import ElementType
from .dtypes import from_bits, from_float, to_bits, to_compute
from .ops_int import _CMP
from .registry import semantics


def _et(op: Operation, i: int = 0) -> ElementType:
    return op.operands[i].type.element


def _ftz(x: np.ndarray, t: ElementType, op: Operation) -> np.ndarray:
    if not op.attributes.get("flush_to_zero") or t.name != "f32":
        return x
    tiny = np.finfo(np.float32).tiny
    return np.where(np.abs(x) < tiny, np.copysign(np.float32(0), x), x).astype(x.dtype)


def _inputs(op: Operation, args: list) -> tuple[ElementType, list[np.ndarray]]:
    t = _et(op)
    return t, [_ftz(to_compute(a, t), t, op) for a in args]


def _finish(x: np.ndarray, t: ElementType, op: Operation) -> np.ndarray:
    return _ftz(from_float(x, t), t, op)


# --------------------------------------------------------------------------------------
# Directed rounding


def _step(c: np.ndarray, t: ElementType, up: np.ndarray, down: np.ndarray) -> np.ndarray:
    """Move each element of ``c`` (type t) one representable value up/down where asked."""
    bits = to_bits(c, t).astype(np.uint64)
    sign = np.uint64(1 << (t.bitwidth - 1))
    one = np.uint64(1)
    neg = (bits & sign) != 0
    mag = bits & (sign - one)
    grow = (up & ~neg) | (down & neg)  # away from zero
    shrink = (up & neg) | (down & ~neg)
    cross = shrink & (mag == 0)  # from -0 up (or +0 down): smallest subnormal, other sign
    mag = np.where(grow, mag + one, np.where(shrink & ~cross, mag - one, mag))
    mag = np.where(cross, one, mag)
    neg = np.where(cross, ~neg, neg)
    out = np.where(neg, mag | sign, mag).astype(np.uint64)
    nan = np.isnan(to_compute(c, t))
    return np.where(nan, c, from_bits(out, t))


def _direct(c: np.ndarray, t: ElementType, side: np.ndarray, mode: RoundingMode) -> np.ndarray:
    """Fix a round-to-nearest result ``c``; side = sign(c - exact) per element."""
    cv = to_compute(c, t)
    no = np.zeros(np.shape(side), bool)
    if mode == RoundingMode.positive_inf:
        return _step(c, t, side < 0, no)
    if mode == RoundingMode.negative_inf:
        return _step(c, t, no, side > 0)
    return _step(c, t, (cv < 0) & (side < 0), (cv > 0) & (side > 0))


_DIRECTED = (RoundingMode.zero, RoundingMode.negative_inf, RoundingMode.positive_inf)


def _zero_sum_sign(name: str, c: np.ndarray, exact_zero: np.ndarray, xs: list) -> np.ndarray:
    """Under rounding toward -inf, a sum (addf, subf, fma) that is exactly zero is -0
    unless both addends are +0 (IEEE 754-2019, 6.3: "under that attribute, the sign of an
    exact zero sum (or difference) shall be -0"); NumPy's sums give +0 there."""
    if name not in ("addf", "subf", "fma"):
        return c
    if name == "fma":
        product = xs[0] * xs[1]
        addends = (np.where(product == 0, np.copysign(0.0, xs[0]) * np.copysign(1.0, xs[1]),
                            product), xs[2])
    else:
        addends = (xs[0], -xs[1] if name == "subf" else xs[1])
    both_plus_zero = (addends[0] == 0) & ~np.signbit(addends[0]) \
        & (addends[1] == 0) & ~np.signbit(addends[1])
    negative_zero = np.asarray(exact_zero & ~both_plus_zero)
    if not negative_zero.any():
        return c
    return np.where(negative_zero, -np.abs(c), c).astype(c.dtype)


def _exact_f64(name: str, vals: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """f64 with a directed mode: (round-to-nearest result, sign(result - exact))."""
    shape = np.broadcast(*vals).shape
    flat = [np.broadcast_to(v, shape).ravel().tolist() for v in vals]
    res, side = [], []
    for xs in zip(*flat):
        if not all(math.isfinite(x) for x in xs):
            r = _NEAREST[name](*[np.float64(x) for x in xs])
            res.append(float(r))
            side.append(0)
            continue
        fr = [Fraction(x) for x in xs]
        if name == "sqrt":
            if xs[0] < 0:
                res.append(math.nan)
                side.append(0)
                continue
            r = math.sqrt(xs[0])
            d = Fraction(r) ** 2 - fr[0]
        else:
            if name == "divf" and fr[1] == 0:
                res.append(float(_NEAREST[name](*[np.float64(x) for x in xs])))
                side.append(0)
                continue
            exact = _EXACT[name](*fr)
            r = float(exact) if abs(exact) < 2 ** 1024 else math.copysign(math.inf, exact)
            d = (Fraction(r) - exact) if math.isfinite(r) else (1 if r > 0 else -1)
        res.append(r)
        side.append((d > 0) - (d < 0))
    return np.array(res, np.float64).reshape(shape), np.array(side, np.int8).reshape(shape)


_NEAREST = {
    "addf": np.add, "subf": np.subtract, "mulf": np.multiply, "divf": np.divide,
    "fma": lambda a, b, c: a * b + c, "sqrt": np.sqrt,
}
_EXACT = {
    "addf": lambda a, b: a + b, "subf": lambda a, b: a - b, "mulf": lambda a, b: a * b,
    "divf": lambda a, b: a / b, "fma": lambda a, b, c: a * b + c,
}


def _side_f64(name: str, c: np.ndarray, xs: list[np.ndarray]) -> np.ndarray:
    """sign(c - exact) for types narrower than f64, decided in float64."""
    cv = c.astype(np.float64)
    xs = [x.astype(np.float64) for x in xs]
    with np.errstate(all="ignore"):
        if name == "divf":  # c - a/b has the sign of (c*b - a) * sign(b); c*b is exact
            return np.sign((cv * xs[1] - xs[0]) * np.sign(xs[1]))
        if name == "sqrt":
            return np.sign(cv * cv - xs[0])
        return np.sign(cv - _NEAREST[name](*xs))


def _rounded(name: str):
    """addf/subf/mulf/divf/fma/sqrt with rounding mode and flush-to-zero."""

    fast = _NEAREST[name]

    def run(tb, op: Operation, args: list) -> list:
        attrs = op.attributes
        mode = attrs.get("rounding_mode", RoundingMode.nearest_even)
        if mode is RoundingMode.nearest_even and not attrs.get("flush_to_zero") \
                and name != "fma" and args[0].dtype.kind == "f" and args[0].dtype.itemsize >= 4 \
                and op.operands[0].type.element.name in ("f32", "f64"):
            return [fast(*args)]  # the common case: IEEE arithmetic in the type itself
        t, xs = _inputs(op, args)
        if t.name == "f64" and (mode in _DIRECTED or name == "fma"):
            # exact rational arithmetic: directed modes, and a fused f64 fma
            r, side = _exact_f64(name, xs)
            if mode in _DIRECTED:
                r = _direct(r, t, side, mode)
            if mode == RoundingMode.negative_inf:
                r = _zero_sum_sign(name, r, (r == 0) & (side == 0), xs)
            return [_finish(r, t, op)]
        if name == "fma" and t.name != "f64":  # a*b is exact in f64: one rounding
            xs = [x.astype(np.float64) for x in xs]
        nearest = _NEAREST[name](*xs)
        c = from_float(nearest, t)
        if mode in _DIRECTED:
            c = _direct(c, t, _side_f64(name, to_compute(c, t), xs), mode)
        if mode == RoundingMode.negative_inf:  # float64 sums of narrower types are exact
            c = _zero_sum_sign(name, c, nearest == 0, xs)
        return [_ftz(c, t, op)]

    return run


for _name in ("addf", "subf", "mulf", "divf", "fma", "sqrt"):
    semantics(_name)(_rounded(_name))


# --------------------------------------------------------------------------------------
# Sign, min/max, rounding to integers, remainder, comparisons


@semantics("negf", "absf")
def _sign_ops(tb, op: Operation, args: list) -> list:
    t = _et(op)
    bits = to_bits(args[0], t)
    sign = np.asarray(1 << (t.bitwidth - 1), bits.dtype)
    out = bits ^ sign if op.name == "negf" else bits & ~sign
    return [from_bits(out, t)]


@semantics("maxf", "minf")
def _fminmax(tb, op: Operation, args: list) -> list:
    t, (a, b) = _inputs(op, args)
    is_max = op.name == "maxf"
    if op.attributes.get("propagate_nan"):
        r = (np.maximum if is_max else np.minimum)(a, b)
    else:
        r = (np.fmax if is_max else np.fmin)(a, b)
    # +0 is greater than -0.
    both_zero = (a == 0) & (b == 0)
    if both_zero.any():
        pick_a = (~np.signbit(a)) if is_max else np.signbit(a)
        r = np.where(both_zero, np.where(pick_a, a, b), r)
    return [_finish(r, t, op)]


@semantics("ceil", "floor")
def _ceil_floor(tb, op: Operation, args: list) -> list:
    t, (a,) = _inputs(op, args)
    return [from_float((np.ceil if op.name == "ceil" else np.floor)(a), t)]


@semantics("remf")
def _remf(tb, op: Operation, args: list) -> list:
    t, (a, b) = _inputs(op, args)
    return [from_float(np.fmod(a, b), t)]


@semantics("cmpf")
def _cmpf(tb, op: Operation, args: list) -> list:
    _, (a, b) = _inputs(op, args)
    r = _CMP[op.attributes["comparison_predicate"]](a, b)
    nan = np.isnan(a) | np.isnan(b)
    if op.attributes.get("comparison_ordering") == ComparisonOrdering.unordered:
        return [np.asarray(r | nan)]
    return [np.asarray(r & ~nan)]


# --------------------------------------------------------------------------------------
# Math functions (all rounding modes: nearest; see the module docstring)


def _rsqrt(x: np.ndarray) -> np.ndarray:
    return 1 / np.sqrt(x)


_MATH = {
    "cos": np.cos, "cosh": np.cosh, "exp": np.exp, "exp2": np.exp2, "log": np.log,
    "log2": np.log2, "rsqrt": _rsqrt, "sin": np.sin, "sinh": np.sinh, "tan": np.tan,
    "tanh": np.tanh, "fpowf": np.power, "atan2": np.arctan2,
}


def _math(fn):
    def run(tb, op: Operation, args: list) -> list:
        t, xs = _inputs(op, args)
        return [_finish(fn(*xs).astype(xs[0].dtype), t, op)]

    return run


for _name, _fn in _MATH.items():
    semantics(_name)(_math(_fn))


@semantics("fpowi")
def _fpowi(tb, op: Operation, args: list) -> list:
    t = _et(op)
    x = to_compute(args[0], t)
    n = args[1].astype(np.int64)
    return [from_float(np.power(x, n.astype(x.dtype)), t)]
