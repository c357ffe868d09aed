"""Semantics of the atomic ops: atomic_rmw_tko, atomic_cas_tko, atomic_red_view_tko.

Each lane is one atomic transaction. Lanes of one op that hit the same address are
applied in row-major lane order, each seeing the previous one's result (one legal
serialisation of concurrent atomics); the work is vectorised in rounds, one round per
repeat of an address. Floating-point ``addf`` rounds each step to nearest even in the
element type. A masked-off lane returns ``cmp`` for compare-and-swap (as the spec says)
and 0 for read-modify-write (the spec leaves it implementation-defined).
"""

from __future__ import annotations

import numpy as np

from ..ir.core import Operation
from ..ir.enums import AtomicRMWMode
from ..ir.types import ElementType
from .dtypes import from_float, signed, storage_dtype, to_bits, to_compute, unsigned, wrap
from .ops_memory import _addresses, _groups, _pointee, _view_operands, view_elements
from .registry import semantics
from .values import TOKEN


def _rmw_fn(mode: AtomicRMWMode, t: ElementType):
    """new = f(old, arg) on storage arrays of type t."""
    def bits(fn):
        return lambda old, arg: wrap(fn(unsigned(old, t), unsigned(arg, t)), t)

    def ints(fn, view):
        return lambda old, arg: wrap(fn(view(old, t), view(arg, t)), t)

    table = {
        AtomicRMWMode.and_: bits(np.bitwise_and), AtomicRMWMode.or_: bits(np.bitwise_or),
        AtomicRMWMode.xor: bits(np.bitwise_xor),
        AtomicRMWMode.add: ints(lambda a, b: a.astype(np.int64) + b.astype(np.int64)
                                if t.bitwidth < 64 else a + b, signed),
        AtomicRMWMode.max: ints(np.maximum, signed), AtomicRMWMode.min: ints(np.minimum, signed),
        AtomicRMWMode.umax: ints(np.maximum, unsigned),
        AtomicRMWMode.umin: ints(np.minimum, unsigned),
        AtomicRMWMode.xchg: lambda old, arg: arg,
        AtomicRMWMode.addf: lambda old, arg: from_float(to_compute(old, t) + to_compute(arg, t), t),
    }
    return table[mode]


def _occurrence_rank(addrs: np.ndarray) -> np.ndarray:
    """For each lane, how many earlier lanes (row-major) use the same address."""
    order = np.argsort(addrs, kind="stable")
    sorted_addrs = addrs[order]
    new_group = np.ones(addrs.size, bool)
    new_group[1:] = sorted_addrs[1:] != sorted_addrs[:-1]
    group_start = np.maximum.accumulate(np.where(new_group, np.arange(addrs.size), 0))
    rank = np.empty(addrs.size, np.int64)
    rank[order] = np.arange(addrs.size) - group_start
    return rank


def atomic_apply(mem, addrs: np.ndarray, t: ElementType, update) -> np.ndarray:
    """Apply ``update(old, lanes) -> new`` lane by lane in row-major order, vectorised in
    rounds of distinct addresses; returns the old value of every lane (flat)."""
    addrs = addrs.reshape(-1)
    old_all = np.zeros(addrs.size, storage_dtype(t))
    if addrs.size == 0:
        return old_all
    rank = _occurrence_rank(addrs)
    for r in range(int(rank.max()) + 1):
        lanes = np.nonzero(rank == r)[0]
        old = mem.load(addrs[lanes], t)
        mem.store(addrs[lanes], update(old, lanes), t)
        old_all[lanes] = old
    return old_all


@semantics("atomic_rmw_tko")
def _atomic_rmw(tb, op: Operation, args: list) -> list:
    g = _groups(op, args)
    ptrs = np.asarray(g["pointers"])
    t = _pointee(op)
    arg = np.broadcast_to(g["arg"], ptrs.shape).reshape(-1)
    mask = np.broadcast_to(g.get("mask", True), ptrs.shape).reshape(-1)
    fn = _rmw_fn(op.attributes["mode"], t)
    lanes_on = np.nonzero(mask)[0]
    old = atomic_apply(tb.machine.memory, ptrs.reshape(-1)[lanes_on], t,
                       lambda o, lanes: fn(o, arg[lanes_on][lanes]))
    # Masked-off lanes return an implementation-defined value: zero here.
    result = np.zeros(ptrs.size, storage_dtype(t))
    result[lanes_on] = old
    return [result.reshape(ptrs.shape), TOKEN]


@semantics("atomic_cas_tko")
def _atomic_cas(tb, op: Operation, args: list) -> list:
    g = _groups(op, args)
    ptrs = np.asarray(g["pointers"])
    t = _pointee(op)
    cmp = np.broadcast_to(g["cmp"], ptrs.shape).reshape(-1)
    val = np.broadcast_to(g["val"], ptrs.shape).reshape(-1)
    mask = np.broadcast_to(g.get("mask", True), ptrs.shape).reshape(-1)
    on = np.nonzero(mask)[0]
    cmp_on, val_on = cmp[on], val[on]

    def update(old, lanes):  # bitwise equality, as the spec says for floats too
        equal = to_bits(old, t) == to_bits(cmp_on[lanes], t)
        return np.where(equal, val_on[lanes], old)

    old = atomic_apply(tb.machine.memory, ptrs.reshape(-1)[on], t, update)
    result = np.array(cmp, copy=True)  # masked-off lanes return cmp
    result[on] = old
    return [result.reshape(ptrs.shape), TOKEN]


@semantics("atomic_red_view_tko")
def _atomic_red_view(tb, op: Operation, args: list) -> list:
    view, idx, types, pos = _view_operands(op, args, 0)
    value = args[pos]
    tv, offsets, inb, _ = view_elements(view, idx, types)
    t = tv.element
    fn = _rmw_fn(op.attributes["mode"], t)
    arg = np.broadcast_to(value, offsets.shape)[inb].reshape(-1)
    atomic_apply(tb.machine.memory, _addresses(tv, offsets)[inb], t,
                 lambda o, lanes: fn(o, arg[lanes]))
    return [TOKEN]
