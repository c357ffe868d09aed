"""Integer, bitwise and predicate arithmetic: add, sub, mul, mad, div, rem, min, max, abs,
neg, and, or, xor, not, cnot, shl, shr, popc, clz, brev, bfe, bfi, prmt, sad, and the
other bit operations lop3, shf, bfind, mul24/mad24, dp4a/dp2a. One handler, ``_arith``,
is registered for every opcode whose meaning depends on the operand type (float-only ones
such as sqrt, ex2 and testp included): it hands float and packed types to ``ops_float``
and predicate operands to ``_pred_op``."""

from __future__ import annotations

import numpy as np

from nanotile.ptxemu.fpmath import DTYPES, FLOATS, SINT, UINT, type_size
from nanotile.ptxemu.ops_common import C, handler_registry
from nanotile.ptxemu.ops_float import _float_op
from nanotile.ptxemu.ptx_parser import Imm


HANDLERS: dict = {}
op = handler_registry(HANDLERS)


# ---------------------------------------------------------------- integer / logic

def _int_binop(c: C, f):
    t = c.type()
    ga, gb = c.src(c.ops[1], t), c.src(c.ops[2], t)
    sd = c.dst(c.ops[0], t)
    return lambda w, m: sd(w, m, f(ga(w), gb(w)))


def _wide(t: str) -> str:
    return t[0] + str(int(t[1:]) * 2)


def _mulhi(a: np.ndarray, b: np.ndarray, t: str) -> np.ndarray:
    bits = int(t[1:])
    if bits <= 32:
        wt = SINT[8] if t[0] == "s" else UINT[8]
        p = a.astype(wt) * b.astype(wt)
        return (p >> bits).astype(DTYPES[t])
    out = [(int(x) * int(y)) >> 64 for x, y in zip(a, b)]
    return np.array([v & (2 ** 64 - 1) for v in out], dtype=np.uint64).view(DTYPES[t])


@op("add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max", "abs", "neg",
    "and", "or", "xor", "not", "cnot", "shl", "shr", "popc", "clz", "brev", "bfe", "bfi",
    "prmt", "copysign", "sqrt", "rsqrt", "rcp", "ex2", "lg2", "sin", "cos", "tanh", "sad",
    "testp")
def _arith(c: C):
    t = c.type()
    if t in FLOATS or t in ("f16x2", "bf16x2", "f32x2"):
        return _float_op(c, t)
    if t == "pred":
        return _pred_op(c)
    return _int_op(c, t)


def _pred_op(c: C):
    f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}.get(c.base)
    sd = c.dst(c.ops[0], "pred")
    ga = c.src(c.ops[1], "pred")
    if c.base == "not":
        return lambda w, m: sd(w, m, ~ga(w))
    if f is None:
        raise c.unsupported()
    gb = c.src(c.ops[2], "pred")
    return lambda w, m: sd(w, m, f(ga(w), gb(w)))


def _int_op(c: C, t: str):
    b = c.base
    dt = DTYPES[t]
    bits = 8 * dt.itemsize
    signed = t[0] == "s"
    if b in ("add", "sub"):
        if c.has("cc") or c.has("sat") and t != "s32":
            raise c.unsupported()
        if c.has("sat"):
            f64 = np.add if b == "add" else np.subtract
            return _int_binop(c, lambda x, y: np.clip(f64(x.astype(np.int64), y.astype(np.int64)),
                                                      -2 ** 31, 2 ** 31 - 1).astype(np.int32))
        return _int_binop(c, np.add if b == "add" else np.subtract)
    if b == "mul":
        if c.has("wide"):
            wt = _wide(t)
            wd = DTYPES[wt]
            ga, gb = c.src(c.ops[1], t), c.src(c.ops[2], t)
            sd = c.dst(c.ops[0], wt)
            return lambda w, m: sd(w, m, ga(w).astype(wd) * gb(w).astype(wd))
        if c.has("hi"):
            return _int_binop(c, lambda x, y: _mulhi(x, y, t))
        return _int_binop(c, np.multiply)
    if b == "mad":
        ga, gb = c.src(c.ops[1], t), c.src(c.ops[2], t)
        if c.has("wide"):
            wt = _wide(t)
            wd = DTYPES[wt]
            gc = c.src(c.ops[3], wt)
            sd = c.dst(c.ops[0], wt)
            return lambda w, m: sd(w, m, ga(w).astype(wd) * gb(w).astype(wd) + gc(w))
        gc = c.src(c.ops[3], t)
        sd = c.dst(c.ops[0], t)
        if c.has("hi"):
            return lambda w, m: sd(w, m, _mulhi(ga(w), gb(w), t) + gc(w))
        return lambda w, m: sd(w, m, ga(w) * gb(w) + gc(w))
    if b in ("div", "rem"):
        def divrem(x, y):
            y0 = y == 0
            ys = np.where(y0, 1, y).astype(dt)
            if signed:
                q = np.trunc(x.astype(np.float64) / ys.astype(np.float64)) if bits < 64 else None
                xi, yi = x.astype(object), ys.astype(object)
                q = np.array([int(abs(p) // abs(r)) * (1 if (p < 0) == (r < 0) else -1)
                              for p, r in zip(xi, yi)], dtype=object)
                r = xi - q * yi
                res = q if b == "div" else r
                out = np.array([int(v) & ((1 << bits) - 1) for v in res], dtype=UINT[dt.itemsize])
                out = out.view(dt)
            else:
                out = x // ys if b == "div" else x % ys
            # division by zero: unspecified in PTX; give all ones (like hardware) for div
            return np.where(y0, dt.type(-1) if signed else np.iinfo(dt).max, out).astype(dt)
        return _int_binop(c, divrem)
    if b in ("min", "max"):
        return _int_binop(c, np.minimum if b == "min" else np.maximum)
    if b in ("and", "or", "xor"):
        f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[b]
        return _int_binop(c, f)
    if b in ("abs", "neg", "not", "cnot", "popc", "clz", "brev"):
        ga = c.src(c.ops[1], t)
        out_t = "u32" if b in ("popc", "clz") else t
        sd = c.dst(c.ops[0], out_t)
        f = {"abs": np.abs, "neg": np.negative, "not": np.invert,
             "cnot": lambda x: (x == 0).astype(dt),
             "popc": lambda x: _popc(x, bits), "clz": lambda x: _clz(x, bits),
             "brev": lambda x: _brev(x, bits)}[b]
        return lambda w, m: sd(w, m, f(ga(w)))
    if b in ("shl", "shr"):
        ga = c.src(c.ops[1], t)
        gb = c.src(c.ops[2], "u32")
        sd = c.dst(c.ops[0], t)

        amount = c.ops[2]
        if isinstance(amount, Imm) and 0 <= amount.value < bits:
            sh = dt.type(amount.value)
            if b == "shl":
                return lambda w, m: sd(w, m, ga(w) << sh)
            return lambda w, m: sd(w, m, ga(w) >> sh)

        def shift(w, m):
            x = ga(w)
            s = gb(w).astype(np.uint64)
            big = s >= bits
            sc = np.minimum(s, bits - 1).astype(dt)
            if b == "shl":
                r = np.where(big, 0, x << sc)
            elif signed:
                r = np.where(big, np.where(x < 0, -1, 0), x >> sc)
            else:
                r = np.where(big, 0, x >> sc)
            return sd(w, m, r.astype(dt))
        return shift
    if b == "bfe":
        ga = c.src(c.ops[1], t)
        gb, gc = c.src(c.ops[2], "u32"), c.src(c.ops[3], "u32")
        sd = c.dst(c.ops[0], t)

        def bfe(w, m):
            # PTX ISA pseudocode: bit i of d is a[pos+i] for i < len (inside the word),
            # else the sign bit a[min(pos+len-1, msb)] for signed types, else 0
            msb = bits - 1
            out = []
            for x, p, ln in zip(ga(w), gb(w), gc(w)):
                pos, ln = int(p) & 0xFF, int(ln) & 0xFF
                xv = int(x) & ((1 << bits) - 1)
                sbit = 0 if (not signed or ln == 0) else (xv >> min(pos + ln - 1, msb)) & 1
                v = 0
                for i in range(bits):
                    bit = (xv >> (pos + i)) & 1 if (i < ln and pos + i <= msb) else sbit
                    v |= bit << i
                out.append(v)
            return sd(w, m, np.array(out, dtype=UINT[dt.itemsize]).view(dt))
        return bfe
    if b == "bfi":
        ga, gb = c.src(c.ops[1], t), c.src(c.ops[2], t)
        gc, gd = c.src(c.ops[3], "u32"), c.src(c.ops[4], "u32")
        sd = c.dst(c.ops[0], t)

        def bfi(w, m):
            out = []
            for a, bb, p, ln in zip(ga(w), gb(w), gc(w), gd(w)):
                p, ln = int(p) & 0xFF, int(ln) & 0xFF
                v = int(bb)
                if ln and p < bits:
                    mask = ((1 << ln) - 1) << p
                    v = (v & ~mask) | ((int(a) << p) & mask)
                out.append(v & ((1 << bits) - 1))
            return sd(w, m, np.array(out, dtype=UINT[dt.itemsize]).view(dt))
        return bfi
    if b == "prmt":
        if len(c.mods) > 1:
            raise c.unsupported("prmt mode")
        ga, gb, gc = c.src(c.ops[1], "b32"), c.src(c.ops[2], "b32"), c.src(c.ops[3], "b32")
        sd = c.dst(c.ops[0], "b32")

        def prmt(w, m):
            a, bb, s = ga(w).astype(np.uint64), gb(w).astype(np.uint64), gc(w)
            tmp = a | (bb << np.uint64(32))
            out = np.zeros(len(m), np.uint32)
            for i in range(4):
                sel = (s >> np.uint32(4 * i)) & np.uint32(0xF)
                byte = (tmp >> (8 * (sel & 7)).astype(np.uint64)) & np.uint64(0xFF)
                sign = (byte >> np.uint64(7)) & np.uint64(1)
                byte = np.where((sel & 8) != 0, sign * np.uint64(0xFF), byte)
                out |= (byte.astype(np.uint32) << np.uint32(8 * i))
            return sd(w, m, out)
        return prmt
    if b == "sad":
        ga, gb, gc = c.src(c.ops[1], t), c.src(c.ops[2], t), c.src(c.ops[3], t)
        sd = c.dst(c.ops[0], t)
        return lambda w, m: sd(w, m, (np.where(ga(w) > gb(w), ga(w) - gb(w), gb(w) - ga(w))
                                      + gc(w)).astype(dt))
    raise c.unsupported()


def _popc(x, bits):
    u = x.view(UINT[bits // 8]).astype(np.uint64)
    return np.array([int(v).bit_count() for v in u], dtype=np.uint32)


def _clz(x, bits):
    u = x.view(UINT[bits // 8]).astype(np.uint64)
    return np.array([bits - int(v).bit_length() for v in u], dtype=np.uint32)


def _brev(x, bits):
    u = x.view(UINT[bits // 8])
    return np.array([int(f"{int(v):0{bits}b}"[::-1], 2) for v in u], dtype=u.dtype).view(x.dtype)


# ---------------------------------------------------------------- more integer / bit ops

@op("lop3")
def _lop3(c: C):
    """lop3.b32 d, a, b, c, immLut: bit i of d is immLut[(a_i << 2) | (b_i << 1) | c_i]."""
    if c.type() != "b32" or not isinstance(c.ops[4], Imm):
        raise c.unsupported()
    lut = c.ops[4].value & 0xFF
    ga, gb, gc = (c.src(o, "b32") for o in c.ops[1:4])
    sd = c.dst(c.ops[0], "b32")
    full = np.uint32(0xFFFFFFFF)

    def lop3(w, m):
        a, b, cc = ga(w), gb(w), gc(w)
        out = np.zeros(len(m), np.uint32)
        for idx in range(8):
            if lut >> idx & 1:
                ta = a if idx & 4 else ~a & full
                tb = b if idx & 2 else ~b & full
                tc = cc if idx & 1 else ~cc & full
                out |= ta & tb & tc
        return sd(w, m, out)
    return lop3


@op("shf")
def _shf(c: C):
    """Funnel shift of the 64-bit value {b:a} (b high) by c (wrap: c mod 32; clamp: min 32)."""
    left = c.has("l")
    wrap = c.has("wrap")
    if c.type() != "b32" or not (left or c.has("r")) or not (wrap or c.has("clamp")):
        raise c.unsupported()
    ga, gb, gc = (c.src(o, "b32") for o in c.ops[1:4])
    sd = c.dst(c.ops[0], "b32")

    def shf(w, m):
        v = ga(w).astype(np.uint64) | (gb(w).astype(np.uint64) << np.uint64(32))
        n = gc(w).astype(np.uint64)
        n = n & np.uint64(31) if wrap else np.minimum(n, np.uint64(32))
        if left:
            r = (v << n) >> np.uint64(32)
        else:
            r = v >> n
        return sd(w, m, (r & np.uint64(0xFFFFFFFF)).astype(np.uint32))
    return shf


@op("bfind")
def _bfind(c: C):
    """Position of the most significant non-sign bit (0xFFFFFFFF when none); .shiftamt
    returns the left shift that would normalise instead."""
    t = c.type()
    bits = 8 * type_size(t)
    shiftamt = c.has("shiftamt")
    ga = c.src(c.ops[1], t)
    sd = c.dst(c.ops[0], "u32")

    def bfind(w, m):
        out = []
        for v in ga(w):
            x = int(v)
            if t[0] == "s" and x < 0:
                x = ~x
            x &= (1 << bits) - 1
            if x == 0:
                out.append(0xFFFFFFFF)
            else:
                pos = x.bit_length() - 1
                out.append(bits - 1 - pos if shiftamt else pos)
        return sd(w, m, np.array(out, np.uint32))
    return bfind


@op("mul24", "mad24")
def _mul24(c: C):
    """Products of the low 24 bits (sign-extended for .s32); .lo/.hi pick bits 0-31/16-47."""
    t = c.type()
    if t not in ("u32", "s32") or c.has("sat"):
        raise c.unsupported()
    hi = c.has("hi")
    ga, gb = c.src(c.ops[1], t), c.src(c.ops[2], t)
    gc = c.src(c.ops[3], t) if c.base == "mad24" else None
    sd = c.dst(c.ops[0], t)

    def low24(x):
        v = x.astype(np.int64) & 0xFFFFFF
        if t == "s32":
            v = np.where(v & 0x800000, v - 0x1000000, v)
        return v

    def mul24(w, m):
        p = low24(ga(w)) * low24(gb(w))
        r = (p >> 16) if hi else p
        r = r.astype(np.uint64).astype(np.uint32)
        if gc is not None:
            r = r + gc(w).view(np.uint32)
        return sd(w, m, r.view(DTYPES[t]))
    return mul24


# ---------------------------------------------------------------- dot products

def _bytes_of(v: np.ndarray, signed: bool, nbytes: int = 4, width: int = 8) -> list[np.ndarray]:
    mask = (1 << width) - 1
    out = []
    for i in range(nbytes):
        x = (v.astype(np.int64) >> (width * i)) & mask
        if signed:
            x = np.where(x >= 1 << (width - 1), x - (1 << width), x)
        out.append(x)
    return out


@op("dp4a", "dp2a")
def _dp(c: C):
    """dp4a: c + the sum of the four byte products of a and b; dp2a.lo/.hi: c + the two
    16-bit halves of a times bytes 0-1 (.lo) or 2-3 (.hi) of b."""
    if len(c.types) != 2 or any(t not in ("u32", "s32") for t in c.types):
        raise c.unsupported()
    ta, tb = c.types
    signed = "s32" in (ta, tb)
    ga, gb = c.src(c.ops[1], "b32"), c.src(c.ops[2], "b32")
    gc = c.src(c.ops[3], "s32" if signed else "u32")
    out_t = "s32" if signed else "u32"
    sd = c.dst(c.ops[0], out_t)
    hi = c.has("hi")
    if c.base == "dp2a" and not (hi or c.has("lo")):
        raise c.unsupported("dp2a needs .lo or .hi")

    def dp(w, m):
        b = _bytes_of(gb(w), tb == "s32")
        if c.base == "dp4a":
            a = _bytes_of(ga(w), ta == "s32")
            total = sum(x * y for x, y in zip(a, b))
        else:
            a = _bytes_of(ga(w), ta == "s32", 2, 16)
            sel = b[2:] if hi else b[:2]
            total = a[0] * sel[0] + a[1] * sel[1]
        r = (gc(w).astype(np.int64) + total) & 0xFFFFFFFF
        return sd(w, m, r.astype(np.uint32).view(DTYPES[out_t]))
    return dp
