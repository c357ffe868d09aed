"""Floating-point helpers: PTX types as NumPy dtypes, IEEE rounding modes, flush-to-zero.

Results are computed in float64 (with the exact rounding error where one operation could
lose it) and then rounded once to the destination format with the instruction's rounding
mode. For +, -, *, / and sqrt of f32/f16/bf16 operands, one rounding of the float64 result
is the correctly rounded result (float64 has more than twice the precision plus two bits).
"""

from __future__ import annotations

import math
from fractions import Fraction

import ml_dtypes
import numpy as np

DTYPES: dict[str, np.dtype] = {
    "pred": np.dtype(bool),
    "b8": np.dtype(np.uint8), "u8": np.dtype(np.uint8), "s8": np.dtype(np.int8),
    "b16": np.dtype(np.uint16), "u16": np.dtype(np.uint16), "s16": np.dtype(np.int16),
    "b32": np.dtype(np.uint32), "u32": np.dtype(np.uint32), "s32": np.dtype(np.int32),
    "b64": np.dtype(np.uint64), "u64": np.dtype(np.uint64), "s64": np.dtype(np.int64),
    "f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32), "f64": np.dtype(np.float64), "tf32": np.dtype(np.float32),
    "f16x2": np.dtype(np.uint32), "bf16x2": np.dtype(np.uint32), "f32x2": np.dtype(np.uint64),
    "e4m3": np.dtype(ml_dtypes.float8_e4m3fn), "e5m2": np.dtype(ml_dtypes.float8_e5m2),
    "e4m3x2": np.dtype(np.uint16), "e5m2x2": np.dtype(np.uint16),
    # sm_100a's packed block-scale types (cvt only): two e2m1 in a byte, two ue8m0 in 16 bits
    "e2m1x2": np.dtype(np.uint8), "ue8m0x2": np.dtype(np.uint16),
}
UINT = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
        8: np.dtype(np.uint64)}
SINT = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}
FLOATS = {"f16", "bf16", "f32", "f64", "tf32", "e4m3", "e5m2"}
CANONICAL_NAN = {"f32": 0x7FFFFFFF, "f64": 0x7FFFFFFFFFFFFFFF, "f16": 0x7FFF, "bf16": 0x7FFF}
_SMALLEST_NORMAL = {"f32": 2.0 ** -126, "f64": 2.0 ** -1022, "f16": 2.0 ** -14,
                    "bf16": 2.0 ** -126}


def type_size(t: str) -> int:
    if t == "pred":
        return 1
    return DTYPES[t].itemsize


def is_signed(t: str) -> bool:
    return t[0] == "s"


def two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s + e == a + b exactly (Knuth), for float64 arrays."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    e = np.where(np.isfinite(s), e, 0.0)
    return s, e


def round_to(s: np.ndarray, e: np.ndarray | None, t: str, mode: str) -> np.ndarray:
    """Round the exact value ``s + e`` (float64 arrays, |e| tiny) to PTX float type ``t``
    with rounding mode rn/rz/rm/rp; returns an array of ``DTYPES[t]``."""
    dt = DTYPES[t]
    r = s.astype(dt)
    if e is None:
        e = np.zeros_like(s)
    r64 = r.astype(np.float64)
    d = r64 - s
    # sign of (r - exact)
    sign = np.where(d != 0, np.sign(d), -np.sign(e))
    sign = np.where(np.isnan(s) | (np.isinf(r64) & np.isinf(s)), 0.0, sign)
    bits = r.view(UINT[dt.itemsize])
    nbits = 8 * dt.itemsize
    signbit = np.array(1 << (nbits - 1), dtype=bits.dtype)
    neg = (bits & signbit) != 0
    one = np.array(1, dtype=bits.dtype)
    toward_zero = np.where((bits & ~signbit) != 0, bits - one, bits)
    away = bits + one
    if mode == "rn":
        # a tie in float64 that e breaks: move to the neighbour on e's side
        other = np.where(d > 0, np.where(neg, away, toward_zero), np.where(neg, toward_zero, away))
        o64 = other.view(dt).astype(np.float64)
        tie = (d != 0) & (np.abs(o64 - s) == np.abs(d)) & (e != 0) & np.isfinite(o64)
        pick = tie & (np.sign(e) == np.sign(o64 - s))
        return np.where(pick, other, bits).view(dt)
    if mode == "rz":
        fix = (sign != 0) & (np.where(neg, -1.0, 1.0) == sign) & ((bits & ~signbit) != 0)
        return np.where(fix, toward_zero, bits).view(dt)
    if mode == "rm":
        # too big: step down (toward -inf)
        dec = np.where(neg | ((bits & ~signbit) == 0), away | signbit, toward_zero)
        return np.where(sign > 0, dec, bits).view(dt)
    if mode == "rp":
        inc = np.where(neg & ((bits & ~signbit) != 0), toward_zero, away & ~signbit)
        return np.where(sign < 0, inc, bits).view(dt)
    raise ValueError(mode)


def round_exact(values: list[Fraction | float], t: str, mode: str) -> np.ndarray:
    """Round exact rationals (or inf/nan floats) to type ``t``; slow path for float64."""
    s = np.array([float(v) for v in values], dtype=np.float64)
    e = np.array([float(Fraction(v) - Fraction(float(v))) if isinstance(v, Fraction) else 0.0
                  for v in values], dtype=np.float64)
    if t == "f64":
        out = s.copy()
        bits = out.view(np.uint64)
        for i, v in enumerate(values):
            if not isinstance(v, Fraction) or e[i] == 0.0:
                continue
            # s is the nearest double; adjust for the directed modes
            step_up = e[i] > 0
            if mode == "rz":
                if (s[i] > 0 and not step_up) or (s[i] < 0 and step_up):
                    bits[i] = np.uint64(int(bits[i]) - 1)
            elif mode == "rm" and not step_up:
                out[i] = np.nextafter(s[i], -np.inf)
            elif mode == "rp" and step_up:
                out[i] = np.nextafter(s[i], np.inf)
        return out
    return round_to(s, e, t, mode)


def flush(x: np.ndarray, t: str) -> np.ndarray:
    """Flush subnormals of type ``t`` (values in any float dtype) to sign-preserving zero."""
    tiny = _SMALLEST_NORMAL.get(t)
    if tiny is None:
        return x
    sub = (np.abs(x) < tiny) & (x != 0)
    if not sub.any():
        return x
    return np.where(sub, np.copysign(np.zeros_like(x), x), x)


_DOT_CHECKED = (np.dtype(np.float32), np.dtype(np.float64))


def canon_nan(r: np.ndarray, t: str) -> np.ndarray:
    """Replace NaN results by PTX's canonical NaN for type ``t``."""
    # the sum of squares is NaN exactly when an element is (squares are >= 0, an overflow
    # gives +inf): one BLAS call, several times cheaper than isnan().any()
    if r.ndim == 1 and r.dtype in _DOT_CHECKED and not math.isnan(r.dot(r)):
        return r
    nan = np.isnan(r.astype(np.float32) if t in ("f16", "bf16") else r)
    if not nan.any():
        return r
    bits = r.view(UINT[r.dtype.itemsize]).copy()
    bits[nan] = CANONICAL_NAN[t]
    return bits.view(r.dtype)


def saturate(x: np.ndarray) -> np.ndarray:
    """``.sat`` for floats: clamp to [0, 1], NaN -> 0."""
    return np.where(np.isnan(x), 0.0, np.clip(x, 0.0, 1.0)).astype(x.dtype)
