"""Memory accesses through addresses: ld/ldu, st (vectors and all state spaces) and
atom/red, plus the address-space queries isspacep, mapa and getctarank (clusters of
one CTA). They sit together because they work on ``Launch``'s address spaces through
``C.mem_addr``; the asynchronous copies (cp.async) and the matrix loads (ldmatrix) have
families of their own."""

from __future__ import annotations

import numpy as np

from nanotile.ptxemu.errors import MemoryFault
from nanotile.ptxemu.fpmath import DTYPES, FLOATS, UINT, type_size
from nanotile.ptxemu.memory import CONST_WINDOW, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW
from nanotile.ptxemu.ops_common import WINDOWS, C, _items, handler_registry


HANDLERS: dict = {}
op = handler_registry(HANDLERS)


# ---------------------------------------------------------------- memory

def _load_fn(c: C, space: str, af, size: int):
    def load(w, m, offset=0):
        L = w.cta.launch
        a = af(w)
        if offset:
            a = a + np.uint64(offset)
        return L.load(w, space, a, size, m)
    return load


@op("ld", "ldu")
def _ld(c: C):
    c.nops(2)
    t = c.type()
    size = type_size(t)
    dsts = _items(c.ops[0])
    space, af = c.mem_addr(c.ops[1], c.space())
    sets = [c.dst(d, t) for d in dsts]
    dt = DTYPES[t]
    u = UINT[size]
    n = len(dsts)
    if n > 1 and size * n > 32:
        raise c.error("vector access wider than 32 bytes")

    def ld(w, m):
        L = w.cta.launch
        a = af(w)
        _check_aligned(a, m, n, size)
        for j, s in enumerate(sets):
            bits = L.load(w, space, a + np.uint64(j * size) if j else a, size, m)
            s(w, m, bits.view(u).view(dt) if dt != u else bits)
    return ld


def _check_aligned(addresses, mask, n: int, size: int) -> None:
    """A vector access of ``n`` elements of ``size`` bytes needs an address aligned to
    its whole width (PTX ISA, vector data types); the emulator faults as the GPU would."""
    if n > 1:
        bad = (addresses[mask] % np.uint64(size * n)) != 0
        if bad.any():
            raise MemoryFault(f"misaligned v{n} access at 0x{int(addresses[mask][bad][0]):x}")


@op("st")
def _st(c: C):
    c.nops(2)
    t = c.type()
    size = type_size(t)
    srcs = _items(c.ops[1])
    space, af = c.mem_addr(c.ops[0], c.space())
    if space == "param" or space == "const":
        raise c.error(f"st to the {space} space")
    gets = [c.src(s, t) for s in srcs]
    u = UINT[size]
    n = len(gets)

    def st(w, m):
        L = w.cta.launch
        a = af(w)
        _check_aligned(a, m, n, size)
        for j, g in enumerate(gets):
            L.store(w, space, a + np.uint64(j * size) if j else a, size, g(w).view(u), m)
    return st


_ATOM_INT = {
    "add": lambda o, b: o + b, "and": lambda o, b: o & b, "or": lambda o, b: o | b,
    "xor": lambda o, b: o ^ b, "exch": lambda o, b: b, "min": min, "max": max,
}


@op("atom", "red")
def _atom(c: C):
    t = c.type()
    size = type_size(t)
    opname = next((m for m in c.mods if m in ("add", "and", "or", "xor", "exch", "min", "max",
                                              "inc", "dec", "cas")), None)
    if opname is None or c.has("v2", "v4", "v8", "noftz") and t not in ("f16", "bf16"):
        raise c.unsupported()
    if t in ("f16x2", "bf16x2", "f32x2"):
        raise c.unsupported("packed atomics")
    is_red = c.base == "red"
    ops = c.ops if is_red else c.ops[1:]
    space, af = c.mem_addr(ops[0], c.space())
    gb = c.src(ops[1], t)
    gcas = c.src(ops[2], t) if opname == "cas" else None
    sd = None if is_red else c.dst(c.ops[0], t)
    dt = DTYPES[t]
    u = UINT[size]
    isfloat = t in FLOATS
    bits = 8 * size

    def apply(old, b, cmp):
        if opname == "cas":        # atom.cas d, [a], b, c: if *a == b then *a = c
            return cmp if old == b else old
        if opname == "inc":
            return 0 if old >= b else old + 1
        if opname == "dec":
            return b if (old == 0 or old > b) else old - 1
        if isfloat:
            if opname == "add":
                return float(dt.type(np.float64(old) + np.float64(b))) if t != "f32" else \
                    float(np.float32(np.float32(old) + np.float32(b)))
            return _ATOM_INT[opname](old, b)
        return _ATOM_INT[opname](old, b)

    def atom(w, m):
        L = w.cta.launch
        a = af(w)
        bv = gb(w)
        cv = gcas(w) if gcas is not None else bv
        result = np.zeros(len(m), dtype=u)
        for lane in np.nonzero(m)[0]:
            one = m.copy()
            one[:] = False
            one[lane] = True
            old_bits = L.load(w, space, a, size, one)[lane]
            old = old_bits.view(dt) if isfloat else old_bits.astype(u).view(dt)
            if isfloat:
                new = np.array([apply(float(old), float(bv[lane]), float(cv[lane]))], dtype=dt)
            else:
                iv = int(old)
                new_int = apply(iv, int(bv[lane]), int(cv[lane]))
                new = np.array([new_int % (1 << bits)], dtype=u)
            newbits = np.zeros(len(m), dtype=u)
            newbits[lane] = new.view(u)[0]
            L.store(w, space, a, size, newbits, one)
            result[lane] = old_bits
        w.cta.events += 1
        if sd is not None:
            sd(w, m, result.view(dt))
    return atom


# ---------------------------------------------------------------- address spaces and clusters

@op("isspacep")
def _isspacep(c: C):
    space = c.space()
    if space == "generic":
        raise c.unsupported()
    ga = c.src(c.ops[1], "u64")
    sd = c.dst(c.ops[0], "pred")
    lo = np.uint64(WINDOWS[space])

    def isspacep(w, m):
        a = ga(w)
        if space == "global":
            windows = [np.uint64(x) for x in (SHARED_WINDOW, LOCAL_WINDOW, PARAM_WINDOW,
                                              CONST_WINDOW)]
            inside = np.zeros(len(m), bool)
            for base in windows:
                inside |= (a >= base) & (a < base + np.uint64(0x0100_0000_0000))
            return sd(w, m, ~inside)
        return sd(w, m, (a >= lo) & (a < lo + np.uint64(0x0100_0000_0000)))
    return isspacep


@op("mapa", "getctarank")
def _cluster(c: C):
    """Clusters of one CTA: the only rank is 0 and mapa maps an address to itself."""
    t = c.type()
    ga = c.src(c.ops[1], t)
    sd = c.dst(c.ops[0], t)
    if c.base == "getctarank":
        return lambda w, m: sd(w, m, np.zeros(len(m), DTYPES[t]))
    grank = c.src(c.ops[2], "u32")

    def mapa(w, m):
        if (grank(w)[m] != 0).any():
            raise MemoryFault("mapa to a CTA rank other than 0: clusters of more than one CTA "
                              "are not emulated")
        return sd(w, m, ga(w))
    return mapa
