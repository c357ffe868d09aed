"""Semantics of conversions: bitcast, int<->int, float<->float, float<->int, pointers.

Float-to-float casts round to nearest even through ml_dtypes (bf16, f8E4M3FN, f8E5M2,
f8E8M0FNU, f4E2M1FN); ``f8E8M0FNU`` (a power of two) also implements the ``zero`` and
``positive_inf`` modes the spec allows for it. ``ftoi`` rounds as its mode says (cuTile
uses ``nearest_int_to_zero``) and saturates to the integer range, NaN giving 0: the
spec leaves out-of-range results undefined unless ``saturating`` is set, so saturating
always is one allowed behaviour. ``itof`` rounds to nearest even, or exactly in the
directed modes (decided against the exact integer).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ..ir.core import Operation
from ..ir.enums import IntegerOverflow, RoundingMode, Signedness
from ..ir.types import ElementType
from .dtypes import (
    from_bits,
    from_float,
    int_range,
    round_tf32,
    signed,
    storage_dtype,
    to_bits,
    to_compute,
    unsigned,
    wrap,
)
from .errors import InterpError
from .ops_float import _direct
from .registry import semantics


def _src(op: Operation) -> ElementType:
    return op.operands[0].type.element


def _dst(op: Operation) -> ElementType:
    return op.results[0].type.element


def _is_signed(op: Operation) -> bool:
    return op.attributes.get("signedness", Signedness.signed) == Signedness.signed


@semantics("bitcast")
def _bitcast(tb, op: Operation, args: list) -> list:
    return [from_bits(to_bits(args[0], _src(op)), _dst(op))]


@semantics("exti")
def _exti(tb, op: Operation, args: list) -> list:
    t = _src(op)
    v = signed(args[0], t) if _is_signed(op) else unsigned(args[0], t)
    return [wrap(v.astype(np.int64) if v.dtype != np.uint64 else v, _dst(op))]


@semantics("trunci")
def _trunci(tb, op: Operation, args: list) -> list:
    src, dst = _src(op), _dst(op)
    out = wrap(args[0], dst)
    flag = op.attributes.get("overflow", IntegerOverflow.none)
    if tb.machine.debug and flag != IntegerOverflow.none:
        ok = True
        if flag in (IntegerOverflow.nsw, IntegerOverflow.nw):
            ok &= bool((signed(out, dst).astype(np.int64) == signed(args[0], src)).all())
        if flag in (IntegerOverflow.nuw, IntegerOverflow.nw):
            ok &= bool((unsigned(out, dst).astype(np.uint64)
                        == unsigned(args[0], src).astype(np.uint64)).all())
        if not ok:
            raise InterpError(f"{tb.where}: 'trunci' with overflow<{flag.name}> lost "
                              "significant bits (undefined behaviour)")
    return [out]


def _to_e8m0(x: np.ndarray, mode: RoundingMode) -> np.ndarray:
    """float -> f8E8M0FNU (2**(bits-127)) rounding the exponent down or up."""
    x = x.astype(np.float64)
    m, e = np.frexp(np.where(np.isfinite(x) & (x > 0), x, 1.0))
    k = e - 1  # floor(log2 x)
    if mode == RoundingMode.positive_inf:
        k = np.where(m == 0.5, k, k + 1)
    bits = np.clip(k + 127, 0, 254)
    bits = np.where(np.isnan(x) | (x < 0), 255, bits)
    bits = np.where(np.isposinf(x), 254 if mode == RoundingMode.zero else 255, bits)
    return from_bits(bits.astype(np.uint8), ElementType("f8E8M0FNU", 8, True))


def _toward_zero_f32(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to float32 toward zero (NumPy's cast rounds to nearest)."""
    y = x.astype(np.float32)
    overshoot = np.isfinite(x) & (np.abs(y.astype(x.dtype)) > np.abs(x))
    return np.where(overshoot, np.nextafter(y, np.float32(0)), y)


@semantics("ftof")
def _ftof(tb, op: Operation, args: list) -> list:
    src, dst = _src(op), _dst(op)
    mode = op.attributes.get("rounding_mode", RoundingMode.nearest_even)
    x = to_compute(args[0], src)
    if dst.name == "f8E8M0FNU" and mode in (RoundingMode.zero, RoundingMode.positive_inf):
        return [_to_e8m0(x, mode)]
    if dst.name == "tf32" and mode in (RoundingMode.zero, RoundingMode.nearest_away):
        # an f64 narrows to f32 with the same rounding first (what tileiras does)
        narrowed = _toward_zero_f32(x) if mode == RoundingMode.zero else x.astype(np.float32)
        return [round_tf32(narrowed, mode.name)]
    return [from_float(x, dst)]  # one rounding (f64 sources are not narrowed first)


_ROUND = {
    RoundingMode.nearest_int_to_zero: np.trunc, RoundingMode.zero: np.trunc,
    RoundingMode.nearest_even: np.rint, RoundingMode.negative_inf: np.floor,
    RoundingMode.positive_inf: np.ceil,
    RoundingMode.nearest_away: lambda x: np.trunc(x + np.copysign(0.5, x)),
}


@semantics("ftoi")
def _ftoi(tb, op: Operation, args: list) -> list:
    src, dst = _src(op), _dst(op)
    mode = op.attributes.get("rounding_mode", RoundingMode.nearest_int_to_zero)
    x = _ROUND.get(mode, np.trunc)(to_compute(args[0], src).astype(np.float64))
    lo, hi = int_range(dst, _is_signed(op))
    x = np.where(np.isnan(x), 0, x)
    if dst.bitwidth < 64:
        return [wrap(np.clip(x, lo, hi).astype(np.int64), dst)]
    # 64-bit: float64 cannot hold the bounds exactly; compare before converting.
    big = x >= float(hi)
    small = x <= float(lo)
    mid = np.where(big | small, 0, x)
    as_int = mid.astype(np.int64) if _is_signed(op) else mid.astype(np.uint64)
    out = np.where(big, np.asarray(hi).astype(as_int.dtype),
                   np.where(small, np.asarray(lo).astype(as_int.dtype), as_int))
    return [wrap(out, dst)]


@semantics("itof")
def _itof(tb, op: Operation, args: list) -> list:
    src, dst = _src(op), _dst(op)
    v = signed(args[0], src) if _is_signed(op) else unsigned(args[0], src)
    if dst.name in ("f32", "f64", "f16"):
        c = v.astype(storage_dtype(dst))  # NumPy rounds integers to nearest even
    else:
        c = from_float(v.astype(np.float64), dst)
    mode = op.attributes.get("rounding_mode", RoundingMode.nearest_even)
    if mode in (RoundingMode.zero, RoundingMode.negative_inf, RoundingMode.positive_inf):
        # Which side of the exact integer the nearest value fell on, decided exactly.
        exact = v.astype(object).ravel()
        near = to_compute(c, dst).astype(object).ravel()
        side = [0 if not np.isfinite(f) else (Fraction(f) > e) - (Fraction(f) < e)
                for f, e in zip(near.tolist(), exact.tolist())]
        c = _direct(c, dst, np.array(side, np.int8).reshape(c.shape), mode)
    return [c]


@semantics("int_to_ptr")
def _int_to_ptr(tb, op: Operation, args: list) -> list:
    return [unsigned(args[0], _src(op)).astype(np.uint64)]


@semantics("ptr_to_int")
def _ptr_to_int(tb, op: Operation, args: list) -> list:
    return [wrap(args[0], _dst(op))]


@semantics("ptr_to_ptr")
def _ptr_to_ptr(tb, op: Operation, args: list) -> list:
    return [args[0]]
