"""How the interpreter holds Tile IR element types in NumPy arrays.

Every tile value is a NumPy array (rank 0 for scalars) whose dtype is the *storage dtype*
of its element type:

    i1 -> bool      i4 -> int8 (sign-extended nibble)   i8/i16/i32/i64 -> int8..int64
    f16 -> float16  bf16, f8*, f4 -> the ml_dtypes type  f32, tf32 -> float32  f64 -> float64
    f8E5M3FNU -> uint8 holding the raw bits (ml_dtypes has no such type; see below)
    ptr<T> -> uint64 (a byte address in the interpreter's address space)

Integers are signless in Tile IR; they are stored two's-complement in a signed dtype and
viewed as signed or unsigned by the op that needs it (``signed``/``unsigned`` below).
Floating-point arithmetic runs in a *compute dtype* (float32 for every type narrower
than f32, float64 for f64) and is rounded back to the storage type with round-to-nearest-
even; for f16 and bf16 this gives the correctly rounded result of +,-,*,/ and sqrt because
float32 carries more than twice their precision.

f8E5M3FNU (13.4) is modelled as: unsigned, 5 exponent bits (bias 15), 3 mantissa bits,
subnormals, no infinities, 0xFF = NaN. That layout is our assumption from the name (the
reference documents only its type tag).
"""

from __future__ import annotations

from functools import cache

import ml_dtypes
import numpy as np

from ..ir.attrs import BoolAttr, DenseElementsAttr, FloatAttr, IntegerAttr
from ..ir.types import ElementType, PointerType, TileType, Type

_STORAGE: dict[str, np.dtype] = {
    "i1": np.dtype(np.bool_), "i4": np.dtype(np.int8), "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16), "i32": np.dtype(np.int32), "i64": np.dtype(np.int64),
    "f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32), "tf32": np.dtype(np.float32), "f64": np.dtype(np.float64),
    "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn), "f8E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "f8E8M0FNU": np.dtype(ml_dtypes.float8_e8m0fnu),
    "f4E2M1FN": np.dtype(ml_dtypes.float4_e2m1fn), "f8E5M3FNU": np.dtype(np.uint8),
}
_UNSIGNED = {1: np.uint8, 4: np.uint8, 8: np.uint8, 16: np.uint16, 32: np.uint32,
             64: np.uint64}
_SIGNED = {1: np.int8, 4: np.int8, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}

PTR_DTYPE = np.dtype(np.uint64)


def storage_dtype(t: Type) -> np.dtype:
    """The NumPy dtype a tile of element type ``t`` (or a tile type) is held in."""
    if isinstance(t, TileType):
        t = t.element
    if isinstance(t, PointerType):
        return PTR_DTYPE
    assert isinstance(t, ElementType), t
    return _STORAGE[t.name]


def storage_bytes(t: ElementType | PointerType) -> float:
    """Bytes one element takes in global memory (0.5 for 4-bit types, 1 for i1)."""
    if isinstance(t, PointerType):
        return 8
    if t.name == "i1":
        return 1
    return t.bitwidth / 8


def accepts_array(dtype: np.dtype, pointee: ElementType | PointerType) -> bool:
    """Whether an array of ``dtype`` may be passed for a ``ptr<pointee>`` parameter: its
    storage dtype exactly; for integers (signless) either signedness of the same width;
    for the float types NumPy lacks (bf16, f8, f4), also unsigned integers holding the raw
    bits. Anything else (int32 for f32, strings, objects) would be read reinterpreted."""
    if isinstance(pointee, PointerType):
        return dtype in (np.dtype(np.uint64), np.dtype(np.int64))
    width = max(1, int(storage_bytes(pointee)))
    if pointee.name == "i1":
        return dtype == np.bool_ or (dtype.kind in "iu" and dtype.itemsize == 1)
    if not pointee.is_float:
        return dtype.kind in "iu" and dtype.itemsize == width
    if dtype == storage_dtype(pointee):
        return True
    native = pointee.name in ("f16", "f32", "tf32", "f64")
    return not native and dtype.kind == "u" and dtype.itemsize == width


def compute_dtype(t: ElementType) -> np.dtype:
    """The dtype floating-point arithmetic on ``t`` runs in."""
    return np.dtype(np.float64) if t.name == "f64" else np.dtype(np.float32)


# --------------------------------------------------------------------------------------
# Integers: signed / unsigned views of signless values


def signed(a: np.ndarray, t: ElementType) -> np.ndarray:
    """The values of an integer tile read as signed numbers (i1: true = -1)."""
    if t.bitwidth == 1:
        return -(a.astype(np.int8))
    return a


def unsigned(a: np.ndarray, t: ElementType) -> np.ndarray:
    """The values of an integer tile read as unsigned numbers."""
    if t.bitwidth == 1:
        return a.astype(np.uint8)
    if t.bitwidth == 4:
        return (a.astype(np.uint8)) & np.uint8(0xF)
    return a.view(_UNSIGNED[t.bitwidth])


def wrap(x: np.ndarray, t: ElementType) -> np.ndarray:
    """Any integer array -> storage of ``t``, keeping the low ``bitwidth`` bits."""
    x = np.asarray(x)
    w = t.bitwidth
    if x.dtype == object:  # exact Python integers (overflow checks, i64 constants)
        mask, half = (1 << w) - 1, 1 << (w - 1)
        flat = [((int(v) & mask) ^ half) - half for v in x.ravel()]
        x = np.asarray(flat, dtype=np.int64).reshape(x.shape)
    if w == 1:
        return (x.astype(np.int64) & 1).astype(np.bool_)
    if w == 4:
        return (((x.astype(np.int64) & 0xF) ^ 8) - 8).astype(np.int8)
    # NumPy's integer casts keep the low bits (two's complement wrap-around).
    return x.astype(_SIGNED[w])


def int_range(t: ElementType, is_signed: bool) -> tuple[int, int]:
    w = t.bitwidth
    return (-(1 << (w - 1)), (1 << (w - 1)) - 1) if is_signed else (0, (1 << w) - 1)


# --------------------------------------------------------------------------------------
# Raw bits (bitcast, memory, constants)


def bits_dtype(t: ElementType | PointerType) -> np.dtype:
    if isinstance(t, PointerType):
        return np.dtype(np.uint64)
    return np.dtype(_UNSIGNED[t.bitwidth])


def to_bits(a: np.ndarray, t: ElementType | PointerType) -> np.ndarray:
    """The raw bit patterns of a tile, as an unsigned integer array."""
    if isinstance(t, PointerType):
        return a.astype(np.uint64)
    if t.name == "i1":
        return a.astype(np.uint8)
    if t.bitwidth == 4:
        return a.view(np.uint8) & np.uint8(0xF)
    return np.asarray(a, order="C").view(_UNSIGNED[t.bitwidth])


def from_bits(u: np.ndarray, t: ElementType | PointerType) -> np.ndarray:
    """Inverse of ``to_bits``."""
    u = np.asarray(u, order="C")
    if isinstance(t, PointerType):
        return u.astype(np.uint64)
    if t.name == "i1":
        return (u & 1).astype(np.bool_)
    if t.name == "i4":
        return wrap(u.astype(np.int64), t)
    if t.name == "f4E2M1FN":
        return (u.astype(np.uint8) & np.uint8(0xF)).view(ml_dtypes.float4_e2m1fn)
    return u.astype(_UNSIGNED[t.bitwidth]).view(storage_dtype(t))


# --------------------------------------------------------------------------------------
# Floats: to and from the compute dtype


@cache
def _e5m3_table() -> np.ndarray:
    """float32 value of each f8E5M3FNU bit pattern."""
    vals = np.empty(256, np.float32)
    for b in range(256):
        e, m = b >> 3, b & 7
        if b == 0xFF:
            vals[b] = np.nan
        elif e == 0:
            vals[b] = m / 8 * 2.0 ** (1 - 15)
        else:
            vals[b] = (1 + m / 8) * 2.0 ** (e - 15)
    return vals


def _encode_e5m3(x: np.ndarray) -> np.ndarray:
    """float -> f8E5M3FNU bits, round to nearest even, saturating, NaN/negatives -> NaN."""
    table = _e5m3_table()[:255]  # finite values, increasing
    x = np.asarray(x, np.float64)
    hi = np.clip(np.searchsorted(table, x, side="left"), 0, 254)
    lo = np.clip(hi - 1, 0, 254)
    dlo, dhi = np.abs(x - table[lo]), np.abs(table[hi] - x)
    pick_hi = (dhi < dlo) | ((dhi == dlo) & (hi % 2 == 0))
    out = np.where(pick_hi, hi, lo).astype(np.uint8)
    out = np.where(x >= table[-1], np.uint8(254), out)
    out = np.where(x <= 0, np.uint8(0), out)
    return np.where(np.isnan(x) | (x < 0), np.uint8(0xFF), out).astype(np.uint8)


def to_compute(a: np.ndarray, t: ElementType) -> np.ndarray:
    """A float tile's values in its compute dtype (float32 or float64)."""
    if t.name == "f8E5M3FNU":
        return _e5m3_table()[a]
    return a.astype(compute_dtype(t), copy=False)


def from_float(x: np.ndarray, t: ElementType) -> np.ndarray:
    """Round a float array to element type ``t`` (round to nearest even)."""
    x = np.asarray(x)
    if t.name == "f8E5M3FNU":
        return _encode_e5m3(x)
    if t.name == "tf32":
        return round_tf32(x.astype(np.float32))
    if t.name == "f8E8M0FNU" and x.dtype != np.float32:
        x = x.astype(np.float32)
    return x.astype(storage_dtype(t))


def round_tf32(x: np.ndarray, mode: str = "nearest_even") -> np.ndarray:
    """Round float32 values to tf32 precision (10 mantissa bits): nearest even by default,
    or ``"zero"`` (truncate) or ``"nearest_away"`` (ties away from zero)."""
    b = np.asarray(x, np.float32, order="C").view(np.uint32).astype(np.uint64)
    finite = np.isfinite(x)
    if mode == "zero":
        up = 0
    elif mode == "nearest_away":
        up = 0x1000
    else:
        up = 0xFFF + ((b >> 13) & 1)
    rounded = (b + up) & 0xFFFFE000  # sign-magnitude: the carry rounds the magnitude
    return np.where(finite, rounded, b).astype(np.uint32).view(np.float32)


# --------------------------------------------------------------------------------------
# Attributes -> arrays


def dense_to_array(attr: DenseElementsAttr) -> np.ndarray:
    """The value of a dense elements attribute as a storage array of its tile type."""
    tt = attr.type
    et = tt.element
    n = 1 if attr.splat else tt.num_elements
    raw = np.frombuffer(attr.data, np.uint8)
    if isinstance(et, PointerType):
        vals = raw[:8 * n].view("<u8").astype(np.uint64)
    elif et.name == "i1":  # a splat is one byte (0xFF / 0x00), else bit-packed, LSB first
        vals = raw[:1] != 0 if attr.splat else np.unpackbits(raw, bitorder="little")[:n] != 0
    elif et.name == "tf32":  # 19 significant bits, stored in 3 bytes (f32 bits >> 13)
        b = raw[:3 * n].reshape(n, 3).astype(np.uint32)
        bits = (b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)) << 13
        vals = bits.astype(np.uint32).view(np.float32)
    elif et.bitwidth == 4:  # one byte per element (not packed), see DenseElementsAttr
        vals = from_bits(raw[:n], et)
    else:
        width = et.bitwidth // 8
        vals = from_bits(raw[:width * n].view(f"<u{width}"), et)
    if attr.splat:
        return np.broadcast_to(vals.reshape(()), tt.shape).copy()
    return vals.reshape(tt.shape).copy()


def scalar_attr(attr: object, t: ElementType) -> np.ndarray:
    """A rank-0 array from an IntegerAttr / FloatAttr / BoolAttr (identities, padding)."""
    if isinstance(attr, FloatAttr):
        return from_bits(np.asarray(attr.bits, bits_dtype(attr.type)), attr.type)
    if isinstance(attr, IntegerAttr):
        return wrap(np.asarray(attr.value, dtype=object), t)
    if isinstance(attr, BoolAttr):
        return np.asarray(bool(attr.value))
    raise TypeError(f"not a scalar attribute: {attr!r}")
