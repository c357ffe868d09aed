"""Semantics of tile construction and shape ops, select, pointer offsets, pack/unpack,
tokens, assume, assert and print.

Tiles are immutable: every op returns a new array (or a read-only view such as a
broadcast) and never writes into its operands.
"""

from __future__ import annotations

import re

import numpy as np

from ..ir.attrs import BoundedAttr, DivByAttr, SameElementsAttr
from ..ir.core import Operation
from ..ir.types import ElementType, PointerType, TileType
from .dtypes import dense_to_array, from_bits, signed, storage_bytes, to_bits, unsigned, wrap
from .errors import InterpError
from .registry import semantics
from .values import TOKEN


def _result_type(op: Operation, i: int = 0) -> TileType:
    return op.results[i].type


@semantics("constant")
def _constant(tb, op: Operation, args: list) -> list:
    return [tb.machine.cached(op, lambda: dense_to_array(op.attributes["value"]))]


@semantics("iota")
def _iota(tb, op: Operation, args: list) -> list:
    t = _result_type(op)
    return [tb.machine.cached(op, lambda: wrap(np.arange(t.shape[0], dtype=np.int64),
                                                t.element))]


@semantics("broadcast")
def _broadcast(tb, op: Operation, args: list) -> list:
    return [np.broadcast_to(args[0], _result_type(op).shape)]


@semantics("reshape")
def _reshape(tb, op: Operation, args: list) -> list:
    return [np.reshape(args[0], _result_type(op).shape)]


@semantics("permute")
def _permute(tb, op: Operation, args: list) -> list:
    return [np.transpose(args[0], op.attributes["permutation"])]


@semantics("cat")
def _cat(tb, op: Operation, args: list) -> list:
    return [np.concatenate(args, axis=op.attributes["dim"])]


def _slices(op: Operation, index_values: list, index_operands, part_shape) -> tuple:
    """The slice of the ``idx``-th block of shape ``part_shape`` (indices are unsigned)."""
    out = []
    for v, operand, size in zip(index_values, index_operands, part_shape):
        k = int(unsigned(v, operand.type.element))
        out.append(slice(k * size, (k + 1) * size))
    return tuple(out)


@semantics("extract")
def _extract(tb, op: Operation, args: list) -> list:
    shape = _result_type(op).shape
    where = _slices(op, args[1:], op.operands[1:], shape)
    part = args[0][where]
    if part.shape != shape:
        raise InterpError(f"{tb.where}: 'extract' slice index out of range")
    return [part]


@semantics("insert")
def _insert(tb, op: Operation, args: list) -> list:
    source, dest = args[0], args[1]
    where = _slices(op, args[2:], op.operands[2:], source.shape)
    out = np.array(dest, copy=True)
    if out[where].shape != source.shape:
        raise InterpError(f"{tb.where}: 'insert' slice index out of range")
    out[where] = source
    return [out]


@semantics("select")
def _select(tb, op: Operation, args: list) -> list:
    return [np.where(args[0], args[1], args[2])]


@semantics("offset")
def _offset(tb, op: Operation, args: list) -> list:
    ptr_t = op.operands[0].type.element
    off_t = op.operands[1].type.element
    size = storage_bytes(ptr_t.pointee) if isinstance(ptr_t, PointerType) else 1
    off = signed(args[1], off_t).astype(np.int64)
    if size == 0.5:
        if (off % 2).any():
            raise InterpError(f"{tb.where}: 'offset' by an odd number of 4-bit elements "
                              "(not byte aligned; not modelled)")
        delta = off // 2
    else:
        delta = off * int(size)
    return [(args[0].astype(np.uint64) + delta.astype(np.uint64)).astype(np.uint64)]


# --------------------------------------------------------------------------------------
# pack / unpack: a rank-1 tile <-> its bytes (little endian; 4-bit types low nibble first)


def _to_bytes(a: np.ndarray, t: ElementType) -> np.ndarray:
    bits = to_bits(a, t)
    if t.bitwidth == 4:
        return (bits[0::2] | (bits[1::2] << 4)).astype(np.uint8)
    return np.asarray(bits.astype(bits.dtype.newbyteorder("<")), order="C").view(np.uint8)


def _from_bytes(b: np.ndarray, t: ElementType) -> np.ndarray:
    b = np.asarray(b, order="C").view(np.uint8)
    if t.bitwidth == 4:
        nib = np.empty(b.size * 2, np.uint8)
        nib[0::2], nib[1::2] = b & 0xF, b >> 4
        return from_bits(nib, t)
    return from_bits(b.view(f"<u{t.bitwidth // 8}"), t)


@semantics("pack")
def _pack(tb, op: Operation, args: list) -> list:
    return [_to_bytes(args[0], op.operands[0].type.element).view(np.int8)]


@semantics("unpack")
def _unpack(tb, op: Operation, args: list) -> list:
    return [_from_bytes(args[0], _result_type(op).element)]


# --------------------------------------------------------------------------------------
# Tokens (no data: memory ops run in program order, see nanotile.interp)


@semantics("make_token", "join_tokens", "gdc_launch_dependents_tko", "gdc_wait_tko",
           "memory_fence_alias_tko")
def _token(tb, op: Operation, args: list) -> list:
    return [TOKEN for _ in op.results]


# --------------------------------------------------------------------------------------
# assume, assert, print


@semantics("assume")
def _assume(tb, op: Operation, args: list) -> list:
    if tb.machine.debug and isinstance(op.operands[0].type, TileType):
        problem = _assume_violation(op.attributes["predicate"], args[0],
                                    op.operands[0].type.element)
        if problem:
            raise InterpError(f"{tb.where}: assume predicate does not hold: {problem}")
    return [args[0]]


def _assume_violation(pred: object, value: np.ndarray, t) -> str | None:
    """Why ``value`` breaks ``pred`` (None if it holds or cannot be checked)."""
    if isinstance(t, PointerType):
        nums = value.astype(np.uint64).astype(object)
    elif isinstance(t, ElementType) and t.is_int:
        nums = signed(value, t).astype(object)
    else:
        return None
    if isinstance(pred, DivByAttr):
        picked = nums
        if pred.every is not None and pred.along is not None and nums.ndim:
            picked = np.take(nums, np.arange(0, nums.shape[pred.along], pred.every),
                             axis=pred.along)
        bad = [v for v in np.ravel(picked).tolist() if v % pred.divisor]
        return f"{bad[0]} is not divisible by {pred.divisor}" if bad else None
    if isinstance(pred, BoundedAttr):
        for v in np.ravel(nums).tolist():
            if (pred.lower is not None and v < pred.lower) or \
                    (pred.upper is not None and v > pred.upper):
                return f"{v} is outside bounded<{pred.lower}, {pred.upper}>"
        return None
    if isinstance(pred, SameElementsAttr) and nums.ndim == len(pred.values):
        for axis, group in enumerate(pred.values):
            if group <= 1:
                continue
            blocks = nums.reshape(nums.shape[:axis] + (-1, group) + nums.shape[axis + 1:])
            first = np.take(blocks, [0], axis=axis + 1)
            if not (blocks == first).all():
                return f"elements differ within groups of {group} along dimension {axis}"
    return None


@semantics("assert")
def _assert(tb, op: Operation, args: list) -> list:
    cond = np.asarray(args[0])
    if not cond.all():
        bad = np.argwhere(~cond)
        where = f" at index {tuple(int(i) for i in bad[0])}" if cond.ndim else ""
        raise InterpError(f"{tb.where}: assertion failed{where}: "
                          f"{op.attributes.get('message', '')}")
    return []


_SPEC = re.compile(r"%([-+ #0]*\d*(?:\.\d+)?)(hh|h|ll|l|j|z|t|L)?([diouxXeEfFgGaAcsp%])")


def format_print(fmt: str, values: list, types: list) -> str:
    """printf-style formatting; a tile argument prints as ``[e0, e1, ...]`` (nested)."""
    it = iter(zip(values, types))

    def one(m: re.Match) -> str:
        flags, conv = m.group(1), m.group(3)
        if conv == "%":
            return "%"
        try:
            value, t = next(it)
        except StopIteration:
            return m.group(0)
        et = t.element if isinstance(t, TileType) else t
        return _format_tile(np.asarray(value), et, flags, conv)

    return _SPEC.sub(one, fmt)


_HEX_SPEC = re.compile(r"([-+ #0]*)(\d*)(?:\.(\d*))?$")


def c_hex_float(v: float, spec: str = "", upper: bool = False) -> str:
    """``%a`` of C's printf: ``0x1.8p+1`` (no trailing zeros unless a precision is given;
    subnormals ``0x0.<digits>p-1022``, zero ``0x0p+0``); ``spec`` holds the flags, width
    and precision written between ``%`` and ``a`` (e.g. ``"+08.3"``)."""
    import math

    m = _HEX_SPEC.match(spec)
    flags, width = (m.group(1), m.group(2)) if m else ("", "")
    prec = None if m is None or m.group(3) is None else int(m.group(3) or 0)
    sign = "-" if math.copysign(1.0, v) < 0 else "+" if "+" in flags else \
        " " if " " in flags else ""
    if math.isnan(v) or math.isinf(v):
        body, prefix = ("nan" if math.isnan(v) else "inf"), ""
    else:
        a = abs(v)
        if a == 0:
            lead, frac, exp = 0, 0, 0
        elif a < 2.0 ** -1022:  # subnormal
            lead, frac, exp = 0, int(math.ldexp(a, 1074)), -1022
        else:
            mant, e = math.frexp(a)  # a = mant * 2**e, mant in [0.5, 1)
            lead, frac, exp = 1, int((mant * 2 - 1) * 2.0 ** 52), e - 1
        digits = f"{frac:013x}"
        if prec is None:
            digits = digits.rstrip("0")
        elif prec < 13:
            shift = 4 * (13 - prec)
            q, r = divmod(frac, 1 << shift)
            half = 1 << (shift - 1)
            if r > half or (r == half and q & 1):
                q += 1
            if q >> (4 * prec):  # carried into the leading digit
                lead, q = lead + 1, 0
            digits = f"{q:0{prec}x}" if prec else ""
        else:
            digits += "0" * (prec - 13)
        point = "." if digits or "#" in flags else ""
        prefix, body = "0x", f"{lead}{point}{digits}p{exp:+d}"
    n = len(sign) + len(prefix) + len(body)
    pad = max(int(width or 0) - n, 0)
    if "-" in flags:
        text = sign + prefix + body + " " * pad
    elif "0" in flags and prefix:
        text = sign + prefix + "0" * pad + body
    else:
        text = " " * pad + sign + prefix + body
    return text.upper() if upper else text


def _format_tile(a: np.ndarray, et, flags: str, conv: str) -> str:
    if a.ndim == 0:
        return _format_scalar(a, et, flags, conv)
    return "[" + ", ".join(_format_tile(x, et, flags, conv) for x in a) + "]"


def _format_scalar(a: np.ndarray, et, flags: str, conv: str) -> str:
    if conv == "p" or isinstance(et, PointerType):
        return f"{int(a.astype(np.uint64)):#x}"
    if isinstance(et, ElementType) and et.is_int:
        # i1 prints as 0/1; other integers as the conversion says (u, x, o: unsigned)
        unsigned_view = conv in "uxXo" or et.bitwidth == 1
        v = int(unsigned(a, et)) if unsigned_view else int(signed(a, et))
        conv = "d" if conv in "iu" else conv
        if conv in "eEfFgG":
            return ("%" + flags + conv) % float(v)
        return ("%" + flags + conv) % v
    from .dtypes import to_compute

    v = float(to_compute(a, et))
    if conv in "aA":  # hexadecimal float, as C's printf writes it
        return c_hex_float(v, flags, upper=conv == "A")
    if conv in "dioxXuc":
        return ("%" + flags + "d") % int(v) if np.isfinite(v) else str(v)
    return ("%" + flags + conv) % v


@semantics("print_tko")
def _print(tb, op: Operation, args: list) -> list:
    pairs = [(a, v.type) for a, v in zip(args, op.operands) if isinstance(v.type, TileType)]
    values, types = [a for a, _ in pairs], [t for _, t in pairs]
    out = tb.machine.out
    out.write(format_print(op.attributes.get("str", ""), values, types))
    out.flush()
    return [TOKEN for _ in op.results]
