"""Comparisons and selects: setp (all comparison operators, for integers and floats,
with the optional boolean combination and the second predicate), selp and slct. They
sit together as the instructions that turn values into predicates and predicates (or
signs) back into values."""

from __future__ import annotations

import numpy as np

from nanotile.ptxemu import fpmath as fp
from nanotile.ptxemu.fpmath import DTYPES, FLOATS, UINT
from nanotile.ptxemu.ops_common import C, handler_registry
from nanotile.ptxemu.ptx_parser import Pair


HANDLERS: dict = {}
op = handler_registry(HANDLERS)


# ---------------------------------------------------------------- compare / select

_CMP_FN = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}


def _comparator(cmp: str, t: str):
    """f(x, y) -> bool array for setp's comparison ``cmp`` on type ``t``."""
    if t in FLOATS:
        if cmp == "num":
            return lambda x, y: ~(np.isnan(x) | np.isnan(y))
        if cmp == "nan":
            return lambda x, y: np.isnan(x) | np.isnan(y)
        if cmp.endswith("u"):
            f = _CMP_FN[cmp[:-1]]
            return lambda x, y: f(x, y) | np.isnan(x) | np.isnan(y)
        f = _CMP_FN[cmp]
        if cmp == "ne":      # ordered: false when either is NaN
            return lambda x, y: f(x, y) & ~(np.isnan(x) | np.isnan(y))
        return f              # NaN compares false already
    if cmp in ("lo", "ls", "hi", "hs"):
        f = _CMP_FN[{"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}[cmp]]
        u = UINT[DTYPES[t].itemsize]
        return lambda x, y: f(x.view(u), y.view(u))
    return _CMP_FN[cmp]


_CMPS = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu",
         "leu", "gtu", "geu", "num", "nan"}


@op("setp")
def _setp(c: C):
    t = c.type()
    cmp = next((m for m in c.mods if m in _CMPS), None)
    if cmp is None:
        raise c.unsupported("comparison")
    boolop = next((m for m in c.mods if m in ("and", "or", "xor")), None)
    ftz = c.has("ftz")
    d = c.ops[0]
    dp, dq = (d.first, d.second) if isinstance(d, Pair) else (d, None)
    ga, gb = c.src(c.ops[1], t), c.src(c.ops[2], t)
    gc = c.src(c.ops[3], "pred") if boolop else None
    sp = c.dst(dp, "pred")
    sq = c.dst(dq, "pred") if dq is not None else None
    f = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}.get(boolop)
    compare = _comparator(cmp, t)
    widen = t in ("f16", "bf16")

    def setp(w, m):
        x, y = ga(w), gb(w)
        if ftz:
            x, y = fp.flush(x, t), fp.flush(y, t)
        if widen:
            x, y = x.astype(np.float32), y.astype(np.float32)
        r = compare(x, y)
        if f is not None:
            cc = gc(w)
            sp(w, m, f(r, cc))
            if sq is not None:
                sq(w, m, f(~r, cc))
        else:
            sp(w, m, r)
            if sq is not None:
                sq(w, m, ~r)
    return setp


@op("selp")
def _selp(c: C):
    t = c.type()
    ga, gb = c.src(c.ops[1], t), c.src(c.ops[2], t)
    gc = c.src(c.ops[3], "pred")
    sd = c.dst(c.ops[0], t)
    return lambda w, m: sd(w, m, np.where(gc(w), ga(w), gb(w)))


@op("slct")
def _slct(c: C):
    t, ct = c.types[0], c.types[1]
    ga, gb, gc = c.src(c.ops[1], t), c.src(c.ops[2], t), c.src(c.ops[3], ct)
    sd = c.dst(c.ops[0], t)
    return lambda w, m: sd(w, m, np.where(gc(w) >= 0, ga(w), gb(w)))
