"""Floating-point arithmetic: add, sub, mul, fma/mad, div, rcp, sqrt in every rounding
mode (rounded from the float64 result and its error term), min/max, abs/neg, copysign,
testp, the .approx functions (ex2, lg2, sin, cos, tanh, rsqrt, rcp, sqrt, div) and the
packed f16x2/bf16x2/f32x2 forms. There is no handler table here: PTX shares these
opcodes with the integer types, so they are registered once, by ``_arith`` in the integer
family, which calls ``_float_op`` for float and packed operands."""

from __future__ import annotations

import numpy as np

from nanotile.ptxemu import fpmath as fp
from nanotile.ptxemu.fpmath import DTYPES, UINT, type_size
from nanotile.ptxemu.ops_common import F64, ROUNDING, C
from nanotile.ptxemu.ptx_parser import Instruction, Reg


# ---------------------------------------------------------------- floating point

def _two_prod(a, b):
    p = a * b
    split = 134217729.0
    def halves(x):
        t = split * x
        hi = t - (t - x)
        return hi, x - hi
    ah, al = halves(a)
    bh, bl = halves(b)
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, np.where(np.isfinite(p), e, 0.0)


def _exact(base: str, args: list[np.ndarray]):
    """(s, e) with s + e the exact result of the operation on float64 inputs (as close as
    float64 error-free transformations allow)."""
    if base == "add":
        return fp.two_sum(args[0], args[1])
    if base == "sub":
        return fp.two_sum(args[0], -args[1])
    if base == "mul":
        return _two_prod(args[0], args[1])
    if base in ("fma", "mad"):
        p, pe = _two_prod(args[0], args[1])
        s, se = fp.two_sum(p, args[2])
        return s, se + pe
    if base in ("div", "rcp"):
        a, b = (args[0], args[1]) if base == "div" else (np.ones_like(args[0]), args[0])
        q = a / b
        p, pe = _two_prod(q, b)
        rem = (a - p) - pe
        return q, np.where(np.isfinite(q) & (b != 0), rem / np.where(b == 0, 1, b), 0.0)
    if base == "sqrt":
        s = np.sqrt(args[0])
        p, pe = _two_prod(s, s)
        rem = (args[0] - p) - pe
        return s, np.where(np.isfinite(s) & (s > 0), rem / (2 * np.where(s == 0, 1, s)), 0.0)
    raise KeyError(base)


_APPROX = {
    "ex2": np.exp2, "lg2": np.log2, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
    "rsqrt": lambda x: 1.0 / np.sqrt(x),
}


def _float_op(c: C, t: str):
    b = c.base
    if t in ("f16x2", "bf16x2", "f32x2"):
        return _packed_op(c, t)
    dt = DTYPES[t]
    ftz = c.has("ftz")
    sat = c.has("sat")
    mode = c.rounding()
    if c.has("relu") or c.has("xorsign") or c.has("oob"):
        raise c.unsupported()
    canon = t in fp.CANONICAL_NAN
    if b == "testp":
        kind = next((x for x in c.mods if x in _TESTP), None)
        if kind is None or t not in ("f32", "f64"):
            raise c.unsupported()
        ga = c.src(c.ops[1], t)
        sp = c.dst(c.ops[0], "pred")
        return lambda w, m: sp(w, m, _TESTP[kind](ga(w)))
    if b in ("abs", "neg"):
        ga = c.src(c.ops[1], t)
        sd = c.dst(c.ops[0], t)
        u = UINT[dt.itemsize]
        sign = u.type(1 << (8 * dt.itemsize - 1))

        def absneg(w, m):
            x = ga(w)
            if ftz:
                x = fp.flush(x, t)
            bits = x.view(u)
            r = bits & ~sign if b == "abs" else bits ^ sign
            return sd(w, m, r.view(dt))
        return absneg
    if b == "copysign":
        ga, gb = c.src(c.ops[1], t), c.src(c.ops[2], t)
        sd = c.dst(c.ops[0], t)
        u = UINT[dt.itemsize]
        sign = u.type(1 << (8 * dt.itemsize - 1))
        return lambda w, m: sd(w, m, ((gb(w).view(u) & ~sign) | (ga(w).view(u) & sign)).view(dt))
    if b in ("min", "max"):
        nanmode = c.has("NaN")
        ga, gb = c.src(c.ops[1], t), c.src(c.ops[2], t)
        sd = c.dst(c.ops[0], t)

        def minmax(w, m):
            x, y = ga(w), gb(w)
            if ftz:
                x, y = fp.flush(x, t), fp.flush(y, t)
            x64, y64 = x.astype(F64), y.astype(F64)
            pick_x = (x64 < y64) if b == "min" else (x64 > y64)
            # -0 is below +0
            zeros = (x64 == 0) & (y64 == 0)
            xneg = np.signbit(x64)
            pick_x = np.where(zeros, xneg if b == "min" else ~xneg, pick_x)
            r = np.where(pick_x, x, y)
            xn, yn = np.isnan(x64), np.isnan(y64)
            r = np.where(xn & ~yn, y, np.where(yn & ~xn, x, r))
            nan = (xn | yn) if nanmode else (xn & yn)
            if nan.any():
                r = np.where(nan, np.array(fp.CANONICAL_NAN[t], UINT[dt.itemsize]).view(dt), r)
            return sd(w, m, r.astype(dt))
        return minmax
    if b in _APPROX or (b in ("rcp", "sqrt", "div") and c.has("approx")):
        return _approx_op(c, t, ftz)
    nargs = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "mad": 3, "div": 2, "rcp": 1, "sqrt": 1}
    if b not in nargs:
        raise c.unsupported()
    if b == "mad" and t == "f32" and not any(m in ROUNDING for m in c.mods):
        mode = "rn"
    gets = [c.src(o, t) for o in c.ops[1:1 + nargs[b]]]
    sd = c.dst(c.ops[0], t)
    fast = (t in ("f32", "f64") and mode == "rn" and not ftz and not sat
            and b in ("add", "sub", "mul"))
    if fast:
        f = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[b]
        ga, gb = gets

        def fast_op(w, m):
            r = f(ga(w), gb(w))
            if canon:
                r = fp.canon_nan(r, t)
            return sd(w, m, r)
        return fast_op

    def fop(w, m):
        xs = [g(w) for g in gets]
        if ftz:
            xs = [fp.flush(x, t) for x in xs]
        xs = [x.astype(F64) for x in xs]
        if t == "f64" and b in ("div", "sqrt", "rcp") and mode == "rn":
            s, e = {"div": lambda: (xs[0] / xs[1], None), "sqrt": lambda: (np.sqrt(xs[0]), None),
                    "rcp": lambda: (1.0 / xs[0], None)}[b]()
            r = s
        else:
            s, e = _exact(b, xs)
            r = fp.round_to(s, e, t, mode)
            if mode == "rm" and b in ("add", "sub", "fma", "mad"):
                r = _zero_sum_sign(b, r, (s == 0) & (e == 0), xs)
        if ftz:
            r = fp.flush(r, t)
        if sat:
            r = fp.saturate(r)
        if canon:
            r = fp.canon_nan(r, t)
        return sd(w, m, r)
    return fop


def _zero_sum_sign(base: str, r: np.ndarray, exact_zero: np.ndarray, xs: list) -> np.ndarray:
    """.rm: a sum (add, sub, fma) that is exactly zero is -0 unless both addends are +0
    (IEEE 754-2019, 6.3); the float64 sums above give +0 there."""
    if base in ("fma", "mad"):
        product_sign = np.signbit(xs[0]) ^ np.signbit(xs[1])
        first_plus_zero = (xs[0] * xs[1] == 0) & ~product_sign
        second = xs[2]
    else:
        first_plus_zero = (xs[0] == 0) & ~np.signbit(xs[0])
        second = -xs[1] if base == "sub" else xs[1]
    both_plus_zero = first_plus_zero & (second == 0) & ~np.signbit(second)
    negative_zero = exact_zero & ~both_plus_zero
    if not negative_zero.any():
        return r
    return np.where(negative_zero, -np.abs(r), r).astype(r.dtype)


def _approx_op(c: C, t: str, ftz: bool):
    b = c.base
    f = _APPROX.get(b) or {"rcp": lambda x: 1.0 / x, "sqrt": np.sqrt}.get(b)
    dt = DTYPES[t]
    if b == "div":
        ga, gb = c.src(c.ops[1], t), c.src(c.ops[2], t)
        sd = c.dst(c.ops[0], t)

        def div_approx(w, m):
            x, y = ga(w), gb(w)
            if ftz:
                x, y = fp.flush(x, t), fp.flush(y, t)
            r = (x.astype(F64) / y.astype(F64)).astype(dt)
            if ftz:
                r = fp.flush(r, t)
            return sd(w, m, fp.canon_nan(r, t))
        return div_approx
    ga = c.src(c.ops[1], t)
    sd = c.dst(c.ops[0], t)

    def approx(w, m):
        x = ga(w)
        if ftz:
            x = fp.flush(x, t)
        r = f(x.astype(F64)).astype(dt)
        if ftz:
            r = fp.flush(r, t)
        return sd(w, m, fp.canon_nan(r, t) if t in fp.CANONICAL_NAN else r)
    return approx


def _packed_op(c: C, t: str):
    """f16x2/bf16x2/f32x2: the scalar operation on the low and the high halves."""
    et = t[:-2]
    esize = type_size(et)
    cont = "b32" if esize == 2 else "b64"
    cu = UINT[2 * esize]
    eu = UINT[esize]
    b = c.base
    nargs = {"add": 2, "sub": 2, "mul": 2, "fma": 3, "min": 2, "max": 2, "neg": 1, "abs": 1,
             "ex2": 1, "tanh": 1}.get(b)
    if nargs is None:
        raise c.unsupported()
    gets = [c.src(o, cont) for o in c.ops[1:1 + nargs]]
    sd = c.dst(c.ops[0], cont)
    # the scalar implementation, on scratch registers of the element type
    k = c.k
    names = [f"%__{et}_d"] + [f"%__{et}_a{i}" for i in range(nargs)]
    for nm in names:
        if nm not in k.reg_index:
            k.reg_index[nm] = len(k.reg_type)
            k.reg_type.append(f"b{8 * esize}")
    fake = Instruction(c.ins.opcode.replace(t, et), [Reg(n) for n in names], c.ins.line,
                       c.ins.col, c.ins.text)
    scalar = _float_op(C(k, fake, c.pc), et)
    di = k.reg_index[names[0]]
    ai = [k.reg_index[n] for n in names[1:]]
    sh = cu.type(8 * esize)
    lo_mask = cu.type((1 << (8 * esize)) - 1)

    def packed(w, m):
        vals = [g(w) for g in gets]
        out = np.zeros(len(m), cu)
        for half in (0, 1):
            for i, v in zip(ai, vals):
                w.R[i] = ((v >> sh if half else v) & lo_mask).astype(eu)
            scalar(w, w.full)
            r = w.R[di].astype(cu)
            out |= (r << sh) if half else r
        return sd(w, m, out)
    return packed


_TESTP = {
    "finite": np.isfinite, "infinite": np.isinf, "notanumber": np.isnan,
    "number": lambda x: ~np.isnan(x),
    "normal": lambda x: np.isfinite(x) & (np.abs(x) >= np.finfo(x.dtype).tiny),
    "subnormal": lambda x: (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny),
}
