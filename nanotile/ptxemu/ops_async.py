"""Asynchronous copies and the mbarriers that track them: mbarrier (init, arrive,
arrive_drop, expect_tx, try_wait, test_wait, inval) and cp.async (cp.async.ca/cg,
cp.async.bulk, cp.async.bulk.tensor through tensor maps, and their group commits and
waits). They sit together because the copies complete when issued and report their
bytes to an mbarrier (``complete_tx``); ``read_generic_bytes`` also serves printf."""

from __future__ import annotations

import numpy as np

from nanotile.ptxemu.async_check import (
    AsyncHazard,
    raw_read_bytes,
    raw_write_bytes,
    retired,
)
from nanotile.ptxemu.errors import MemoryFault
from nanotile.ptxemu.machine import YIELD
from nanotile.ptxemu.memory import CONST_WINDOW, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW
from nanotile.ptxemu.ops_common import WINDOWS, C, handler_registry
from nanotile.ptxemu.ptx_parser import Addr, Imm, NotPred


HANDLERS: dict = {}
op = handler_registry(HANDLERS)


# ---------------------------------------------------------------- mbarrier / async copies

def _mbar_addr(c: C, op):
    space, af = c.mem_addr(op, c.space())
    if space == "generic":
        def shared_of(w):
            a = af(w)
            return a - np.uint64(SHARED_WINDOW)
        return shared_of
    if space != "shared":
        raise c.error("mbarrier objects live in shared memory")
    return af


def _mbar(w, addr: int) -> list[int]:
    st = w.cta.mbarriers.get(addr)
    if st is None:
        raise MemoryFault(f"mbarrier at shared address 0x{addr:x} used before mbarrier.init")
    return st


def _mbar_arrive(w, addr: int, count: int = 1, tx: int = 0) -> int:
    st = _mbar(w, addr)
    phase = st[0]
    st[3] += tx
    st[1] -= count
    _mbar_check(w, st)
    w.cta.events += 1
    return phase


def _mbar_check(w, st: list[int]) -> None:
    if st[1] <= 0 and st[3] == 0:
        st[0] += 1
        st[1] = st[2]


def complete_tx(w, addr: int, nbytes: int) -> None:
    st = _mbar(w, addr)
    st[3] -= nbytes
    _mbar_check(w, st)
    w.cta.events += 1


@op("mbarrier")
def _mbarrier(c: C):
    sub = c.mods[0] if c.mods else ""
    if sub == "init":
        af = _mbar_addr(c, c.ops[0])
        gn = c.src(c.ops[1], "u32")

        def init(w, m):
            for a, n in zip(af(w)[m], gn(w)[m]):
                w.cta.mbarriers[int(a)] = [0, int(n), int(n), 0]
                w.cta.shared.store(np.array([a], np.uint64), 8, np.zeros(1, np.uint64))
            w.cta.events += 1
        return init
    if sub in ("arrive", "arrive_drop"):
        expect = c.has("expect_tx")
        d = c.ops[0]
        af = _mbar_addr(c, c.ops[1])
        rest = c.ops[2:]
        gtx = c.src(rest[0], "u32") if expect else None
        first = 1 if expect else 0
        gcount = c.src(rest[first], "u32") if len(rest) > first else None
        sd = c.dst(d, "b64")

        def arrive(w, m):
            addrs = af(w)
            tx = gtx(w) if gtx is not None else None
            cnt = gcount(w) if gcount is not None else None
            state = np.zeros(32, np.uint64)
            for lane in np.nonzero(m)[0]:
                a = int(addrs[lane])
                if sub == "arrive_drop":
                    _mbar(w, a)[2] -= 1
                state[lane] = _mbar_arrive(w, a, int(cnt[lane]) if cnt is not None else 1,
                                           int(tx[lane]) if tx is not None else 0)
            sd(w, m, state)
            if w.cta.launch.interleave:
                # the warps this arrival releases run at once, before this warp goes on
                return (YIELD,)
            return None
        return arrive
    if sub == "expect_tx":
        af = _mbar_addr(c, c.ops[0])
        gtx = c.src(c.ops[1], "u32")

        def expect_tx(w, m):
            for a, tx in zip(af(w)[m], gtx(w)[m]):
                _mbar(w, int(a))[3] += int(tx)
            w.cta.events += 1
        return expect_tx
    if sub in ("try_wait", "test_wait"):
        parity = c.has("parity")
        sp = c.dst(c.ops[0], "pred")
        af = _mbar_addr(c, c.ops[1])
        gs = c.src(c.ops[2], "u32" if parity else "b64")

        def try_wait(w, m):
            addrs = af(w)
            s = gs(w)
            done = np.zeros(32, dtype=bool)
            for lane in np.nonzero(m)[0]:
                st = _mbar(w, int(addrs[lane]))
                want = int(s[lane])
                done[lane] = (st[0] % 2) != (want & 1) if parity else st[0] > want
                if done[lane] and w.cta.hazards is not None:
                    w.cta.hazards.observed(int(addrs[lane]), st[0])
            sp(w, m, done)
            if not done[m].all():
                return (YIELD,)
            return None
        return try_wait
    if sub == "inval":
        return lambda w, m: None
    raise c.unsupported()


def read_generic_bytes(w, addr: int, n: int) -> bytes:
    L = w.cta.launch
    for name, base in (("shared", SHARED_WINDOW), ("local", LOCAL_WINDOW),
                       ("param", PARAM_WINDOW), ("const", CONST_WINDOW)):
        if base <= addr < base + 0x0100_0000_0000:
            if name == "local":
                raise MemoryFault("tensor map in local memory")
            return L.space(w, name).read_bytes(addr - base, n)
    return L.gmem.read_bytes(addr, n)


@op("cp")
def _cp(c: C):
    from nanotile.ptxemu.tensormap import tma_load, tma_reduce, tma_store

    mods = c.mods
    reduction = None
    if mods[:2] == ["reduce", "async"] and "bulk" in mods and "tensor" in mods:
        # cp.reduce.async.bulk.tensor.Nd.global.shared::cta.OP.tile.bulk_group: a store
        # that combines each element with the tensor's
        reduction = next((m for m in mods if m in ("add", "min", "max", "inc", "dec", "and",
                                                   "or", "xor")), None)
        if reduction is None or "global" not in mods:
            raise c.unsupported()
        mods = mods[1:]
    if mods[:1] != ["async"]:
        raise c.unsupported()
    if "commit_group" in mods or "wait_group" in mods or "wait_all" in mods:
        return _copy_group(c)
    if "bulk" in mods and "tensor" in mods:
        load = reduction is None and c.space() == "shared"  # destination space first
        if load:
            dst_af = _mbar_addr(c, c.ops[0]) if False else c.mem_addr(c.ops[0], "shared")[1]
            tm = c.ops[1]
            mbar = _mbar_addr(c, c.ops[2]) if "mbarrier::complete_tx::bytes" in mods else None
        else:
            tm = c.ops[0]
            src_af = c.mem_addr(c.ops[1], "shared")[1]
        if not isinstance(tm, Addr) or not tm.coords:
            raise c.error("expected a tensor-map address [tmap, {coords}]")
        tsym, tmap_af = c.addr(Addr(tm.base, tm.offset))
        if tsym is not None:
            base = WINDOWS[tsym]
            tmap_af0 = tmap_af
            tmap_af = lambda w: tmap_af0(w) + np.uint64(base)
        coord_gets = [c.src(x, "s32") for x in tm.coords]
        if "im2col" in mods or "multicast::cluster" in mods:
            raise c.unsupported()

        def bulk_tensor(w, m):
            taddr = tmap_af(w)
            coords = [g(w) for g in coord_gets]
            hazards = w.cta.hazards
            for lane in np.nonzero(m)[0]:
                desc = read_generic_bytes(w, int(taddr[lane]), 128)
                cs = [int(x[lane]) for x in coords]
                if load:
                    nbytes, span = tma_load(w, desc, cs, int(dst_af(w)[lane]))
                    if mbar is not None:
                        barrier = int(mbar(w)[lane])
                        if hazards is not None:
                            _async_write_on_barrier(w, span, "cp.async.bulk.tensor", barrier)
                        complete_tx(w, barrier, nbytes)
                    elif hazards is not None:
                        raise AsyncHazard("cp.async.bulk.tensor into shared memory without "
                                          "an mbarrier: nothing can wait for it")
                elif reduction is not None:
                    span = tma_reduce(w, desc, cs, int(src_af(w)[lane]), reduction)
                    if hazards is not None:
                        _async_read_in_bulk_group(w, span, "cp.reduce.async.bulk.tensor")
                else:
                    span = tma_store(w, desc, cs, int(src_af(w)[lane]))
                    if hazards is not None:
                        _async_read_in_bulk_group(w, span, "cp.async.bulk.tensor (a store)")
        return bulk_tensor
    if "bulk" in mods:
        return _cp_bulk(c)
    # cp.async.ca/cg.shared.global [dst], [src], cp-size{, src-size}
    dst_af = c.mem_addr(c.ops[0], "shared")[1]
    src_af = c.mem_addr(c.ops[1], "global")[1]
    gsize = c.src(c.ops[2], "u32")
    gsrc = c.src(c.ops[3], "u32") if len(c.ops) > 3 and not isinstance(c.ops[3], NotPred) else None

    def cp_async(w, m):
        L = w.cta.launch
        d, s = dst_af(w), src_af(w)
        size = gsize(w)
        srcsize = gsrc(w) if gsrc is not None else size
        hazards = w.cta.hazards
        for lane in np.nonzero(m)[0]:
            n, ns = int(size[lane]), int(srcsize[lane])
            data = L.gmem.read_bytes(int(s[lane]), ns) if ns else b""
            raw_write_bytes(w.cta.shared, int(d[lane]), data + bytes(n - ns))
            if hazards is not None:
                span = np.arange(int(d[lane]), int(d[lane]) + n)
                hazards.warp(w.wid).copies_open.append(hazards.async_write(
                    span, "cp.async", "wait for its group: cp.async.wait_group"))
    return cp_async


def _async_write_on_barrier(w, span: np.ndarray, what: str, barrier: int) -> None:
    """A copy into ``span`` whose bytes count towards the current phase of ``barrier``."""
    hazards = w.cta.hazards
    ident = hazards.async_write(span, what, "wait on its mbarrier: mbarrier.try_wait")
    hazards.on_barrier(ident, barrier, _mbar(w, barrier)[0])


def _async_read_in_bulk_group(w, span: np.ndarray, what: str) -> None:
    """A copy out of ``span``: read-only until cp.async.bulk.wait_group retires it."""
    hazards = w.cta.hazards
    hazards.async_read(span, what)
    hazards.warp(w.wid).bulk_open.append(hazards.lock(span))


def group_count(c: C) -> int:
    """The N of a ``wait_group N`` (how many of the newest groups may stay in flight)."""
    if not c.ops or not isinstance(c.ops[0], Imm):
        raise c.error(f"{c.ins.opcode} takes an immediate group count")
    return c.ops[0].value


def _copy_group(c: C):
    """cp.async(.bulk).commit_group / wait_group N / wait_all: with async_check, closes
    the warp's open group, or retires all groups but the newest N (the copies completed
    when issued; only what may be used changes)."""
    mods = c.mods
    bulk = "bulk" in mods
    keep = group_count(c) if "wait_group" in mods else 0

    def group(w, m):
        hazards = w.cta.hazards
        if hazards is None:
            return
        state = hazards.warp(w.wid)
        if bulk:
            if "commit_group" in mods:
                state.bulk_groups.append(state.bulk_open)
                state.bulk_open = []
                return
            for spans in retired(state.bulk_groups, keep):
                for span in spans:
                    hazards.unlock(span)
            return
        if "commit_group" in mods:
            state.copy_groups.append(state.copies_open)
            state.copies_open = []
            return
        if "wait_all" in mods:
            state.copy_groups.append(state.copies_open)
            state.copies_open = []
        for idents in retired(state.copy_groups, keep):
            for ident in idents:
                hazards.retire(ident)
    return group


def _cp_bulk(c: C):
    """cp.async.bulk (no tensor map): global->shared with an mbarrier's complete_tx, or
    shared->global in a bulk group. The copy completes when issued."""
    mods = c.mods
    if "prefetch" in mods or "multicast::cluster" in mods:
        raise c.unsupported()
    to_shared = c.space() == "shared"
    dst_space, dst_af = c.mem_addr(c.ops[0], "shared" if to_shared else "global")
    src_space, src_af = c.mem_addr(c.ops[1], "global" if to_shared else "shared")
    gsize = c.src(c.ops[2], "u32")
    mbar = _mbar_addr(c, c.ops[3]) if to_shared and "mbarrier::complete_tx::bytes" in mods else None
    if to_shared and mbar is None:
        raise c.unsupported("bulk copy to shared memory without an mbarrier")

    def cp_bulk(w, m):
        L = w.cta.launch
        d, s, n = dst_af(w), src_af(w), gsize(w)
        hazards = w.cta.hazards
        for lane in np.nonzero(m)[0]:
            size = int(n[lane])
            if size % 16 or int(d[lane]) % 16 or int(s[lane]) % 16:
                raise MemoryFault("cp.async.bulk needs 16-byte aligned addresses and sizes")
            if to_shared:
                data = L.gmem.read_bytes(int(s[lane]), size)
                raw_write_bytes(w.cta.shared, int(d[lane]), data)
                barrier = int(mbar(w)[lane])
                if hazards is not None:
                    span = np.arange(int(d[lane]), int(d[lane]) + size)
                    _async_write_on_barrier(w, span, "cp.async.bulk", barrier)
                complete_tx(w, barrier, size)
            else:
                data = raw_read_bytes(w.cta.shared, int(s[lane]), size)
                if hazards is not None:
                    span = np.arange(int(s[lane]), int(s[lane]) + size)
                    _async_read_in_bulk_group(w, span, "cp.async.bulk (a store)")
                L.gmem.write_bytes(int(d[lane]), data)
    del dst_space, src_space
    return cp_bulk
