"""Warp collectives: shfl.sync, vote, activemask, redux, elect and match. They sit
together because each reads or writes across the 32 lanes of a warp (the mask of
active lanes is an input), so none of them is batchable."""

from __future__ import annotations

import numpy as np

from nanotile.ptxemu import fpmath as fp
from nanotile.ptxemu.fpmath import DTYPES
from nanotile.ptxemu.machine import LANES
from nanotile.ptxemu.ops_common import C, _first_active, handler_registry
from nanotile.ptxemu.ptx_parser import Pair


HANDLERS: dict = {}
op = handler_registry(HANDLERS)


# ---------------------------------------------------------------- warp-level


@op("shfl")
def _shfl(c: C):
    mode = next((x for x in c.mods if x in ("up", "down", "bfly", "idx")), None)
    if mode is None or not c.has("sync"):
        raise c.unsupported()
    d = c.ops[0]
    dd, dp = (d.first, d.second) if isinstance(d, Pair) else (d, None)
    ga = c.src(c.ops[1], "b32")
    gb, gc = c.src(c.ops[2], "u32"), c.src(c.ops[3], "u32")
    sd = c.dst(dd, "b32")
    sp = c.dst(dp, "pred") if dp is not None else None
    lane = LANES.astype(np.int64)

    def shfl(w, m):
        a = ga(w)
        b = gb(w).astype(np.int64)
        cc = gc(w).astype(np.int64)
        clamp = cc & 0x1F
        segmask = (cc >> 8) & 0x1F
        max_lane = (lane & segmask) | (clamp & ~segmask)
        min_lane = lane & segmask
        if mode == "up":
            j = lane - b
            ok = j >= max_lane
        elif mode == "down":
            j = lane + b
            ok = j <= max_lane
        elif mode == "bfly":
            j = lane ^ b
            ok = j <= max_lane
        else:
            j = min_lane | (b & ~segmask)
            ok = j <= max_lane
        j = np.where(ok, j, lane) & 31
        sd(w, m, a[j])
        if sp is not None:
            sp(w, m, ok)
    return shfl


@op("vote")
def _vote(c: C):
    mode = next((x for x in c.mods if x in ("all", "any", "uni", "ballot")), None)
    if mode is None:
        raise c.unsupported()
    ga = c.src(c.ops[1], "pred")
    if mode == "ballot":
        sd = c.dst(c.ops[0], "b32")

        def ballot(w, m):
            bits = (ga(w) & m).astype(np.uint64) << LANES.astype(np.uint64)
            return sd(w, m, np.full(32, int(bits.sum()), np.uint32))
        return ballot
    sd = c.dst(c.ops[0], "pred")

    def vote(w, m):
        p = ga(w)[m]
        r = {"all": p.all(), "any": p.any(), "uni": p.all() or not p.any()}[mode]
        return sd(w, m, np.full(32, bool(r)))
    return vote


@op("activemask")
def _activemask(c: C):
    sd = c.dst(c.ops[0], "b32")
    shifts = LANES.astype(np.uint64)
    return lambda w, m: sd(w, m, np.full(32, int((m.astype(np.uint64) << shifts).sum()), np.uint32))


@op("redux")
def _redux(c: C):
    t = c.type()
    opn = next((x for x in c.mods if x in ("add", "min", "max", "and", "or", "xor")), None)
    if opn is None:
        raise c.unsupported()
    if t == "f32":
        return _redux_f32(c, opn)
    ga = c.src(c.ops[1], t)
    sd = c.dst(c.ops[0], t)
    dt = DTYPES[t]
    f = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
         "or": np.bitwise_or, "xor": np.bitwise_xor}[opn]

    def redux(w, m):
        v = f.reduce(ga(w)[m], dtype=dt) if opn == "add" else f.reduce(ga(w)[m])
        return sd(w, m, np.full(32, v, dtype=dt))
    return redux


def _redux_f32(c: C, opn: str):
    if opn not in ("min", "max"):
        raise c.unsupported()
    nanmode, absmode = c.has("NaN"), c.has("abs")
    ga = c.src(c.ops[1], "f32")
    sd = c.dst(c.ops[0], "f32")

    def redux_f32(w, m):
        v = ga(w)[m]
        if absmode:
            v = np.abs(v)
        if np.isnan(v).all() or (nanmode and np.isnan(v).any()):
            r = np.array(fp.CANONICAL_NAN["f32"], np.uint32).view(np.float32)
        else:
            r = (np.nanmin if opn == "min" else np.nanmax)(v)
        return sd(w, m, np.full(32, r, np.float32))
    return redux_f32


@op("elect")
def _elect(c: C):
    d = c.ops[0]
    dd, dp = (d.first, d.second) if isinstance(d, Pair) else (d, None)
    gmask = c.src(c.ops[1], "b32")
    sd = c.dst(dd, "b32")
    sp = c.dst(dp, "pred") if dp is not None else None

    def elect(w, m):
        member = ((gmask(w) >> LANES) & np.uint32(1)).astype(bool) & m
        leader = _first_active(member) if member.any() else _first_active(m)
        sd(w, m, np.full(32, leader, np.uint32))
        if sp is not None:
            sp(w, m, LANES == leader)
    return elect


@op("match")
def _match(c: C):
    mode = "any" if c.has("any") else "all" if c.has("all") else None
    t = c.type()
    if mode is None or t not in ("b32", "b64"):
        raise c.unsupported()
    d = c.ops[0]
    dd, dp = (d.first, d.second) if isinstance(d, Pair) else (d, None)
    ga = c.src(c.ops[1], t)
    gmask = c.src(c.ops[2], "b32")
    sd = c.dst(dd, "b32")
    sp = c.dst(dp, "pred") if dp is not None else None

    def match(w, m):
        a = ga(w)
        member = ((gmask(w) >> LANES) & np.uint32(1)).astype(bool) & m
        bits = member.astype(np.uint64) << LANES.astype(np.uint64)
        same = a[:, None] == a[None, :]                         # [lane, other]
        if mode == "any":
            r = (same * bits[None, :]).sum(axis=1).astype(np.uint32)
            return sd(w, m, r)
        equal = bool(same[np.ix_(member, member)].all())
        r = np.full(32, int(bits.sum()) if equal else 0, np.uint32)
        sd(w, m, r)
        if sp is not None:
            sp(w, m, np.full(32, equal))
    return match
