"""Contiguity analysis: what is known, per dimension, about the integers and pointers of a
tile (Triton's "axis info"), so that memory accesses can be vectorised.

For every integer or pointer tile value and every dimension d it computes three facts,
each a power of two, each about aligned runs along d (runs of length n start at
coordinates that are multiples of n):

- ``contiguity[d] = n``: along d the values go up by one (element) in runs of n;
- ``divisibility[d] = n``: the first value of each contiguous run (of each element when
  the contiguity is 1) is divisible by n (for pointers: its address, in bytes);
- ``constancy[d] = n``: the values are equal in runs of n.

A load of 4 f32 at once needs pointers contiguous in runs of 4, a 16-byte aligned first
address and a mask constant over the run (``vector_width``). The facts come from the
ops (iota is contiguous, a splat constant is constant, adding a constant keeps
contiguity...) and from the kernel's ``assume`` facts (``div_by`` on pointer and integer
arguments: ``PassContext.facts``). Anything else knows only 1: every fact is a promise,
so too little is safe and too much is a miscompile.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd
from typing import Any

from ...ir import attrs as A
from ...ir import types as T
from ...ir.core import Operation, Value
from ...ir.enums import ComparisonPredicate
from ...ir.optable import operand_group

HUGE = 1 << 30  # "divisible by anything" (the value zero)
VECTOR_ELEMENTS = 4  # the most elements one access moves (ld/st.global.v4)


@dataclass(frozen=True)
class AxisInfo:
    contiguity: tuple[int, ...]
    divisibility: tuple[int, ...]
    constancy: tuple[int, ...]

    @staticmethod
    def unknown(rank: int) -> AxisInfo:
        return AxisInfo((1,) * rank, (1,) * rank, (1,) * rank)


def _pow2_divisor(n: int) -> int:
    """The largest power of two dividing n (HUGE for 0)."""
    n = abs(int(n))
    return HUGE if n == 0 else min(HUGE, n & -n)


def _gcd(*xs: int) -> int:
    out = 0
    for x in xs:
        out = gcd(out, x)
    return out or 1


class Contiguity:
    """The facts of every value of one entry, computed on demand (``of(value)``)."""

    def __init__(self, facts: dict[Value, list[Any]] | None = None) -> None:
        self.facts = facts or {}
        self.known: dict[Value, AxisInfo] = {}

    def of(self, v: Value) -> AxisInfo:
        if v not in self.known:
            self.known[v] = AxisInfo.unknown(_rank(v))  # loops: start from "nothing known"
            self.known[v] = self._compute(v)
        return self.known[v]

    # ---- rules --------------------------------------------------------------------------
    def _compute(self, v: Value) -> AxisInfo:
        rank = _rank(v)
        owner = v.owner
        if not isinstance(owner, Operation):
            return self._argument(v, rank)
        rule = getattr(self, "_" + owner.name, None)
        if rule is None or not isinstance(v.type, T.TileType):
            return AxisInfo.unknown(rank)
        return rule(owner, v, rank)

    def _argument(self, v: Value, rank: int) -> AxisInfo:
        div = 1
        for fact in self.facts.get(v, ()):
            if isinstance(fact, A.DivByAttr):
                div = max(div, _pow2_divisor(fact.divisor))
        return AxisInfo((1,) * rank, (div,) * rank, _shape(v))

    def _constant(self, op: Operation, v: Value, rank: int) -> AxisInfo:
        attr = op.attributes.get("value")
        shape = _shape(v)
        if isinstance(attr, A.DenseElementsAttr) and _uniform(attr, v) and \
                isinstance(v.type.element, T.ElementType) and not v.type.element.is_float:
            value = _splat_int(attr, v.type.element)
            return AxisInfo((1,) * rank, (_pow2_divisor(value),) * rank, shape)
        return AxisInfo.unknown(rank)

    def _iota(self, op: Operation, v: Value, rank: int) -> AxisInfo:
        return AxisInfo(_shape(v), (HUGE,), (1,))

    def _reshape(self, op: Operation, v: Value, rank: int) -> AxisInfo:
        src = op.operands[0]
        info, src_shape, shape = self.of(src), _shape(src), _shape(v)
        # only reshapes that add or drop dimensions of size 1 keep per-dimension facts
        kept = [i for i, d in enumerate(src_shape) if d != 1]
        new = [i for i, d in enumerate(shape) if d != 1]
        if [src_shape[i] for i in kept] != [shape[i] for i in new]:
            return AxisInfo.unknown(rank)
        con, div, const = [1] * rank, [1] * rank, list(shape)
        for i, j in zip(kept, new):
            con[j], div[j], const[j] = info.contiguity[i], info.divisibility[i], \
                info.constancy[i]
        scalar_div = _gcd(*info.divisibility) if info.divisibility else HUGE
        for j, d in enumerate(shape):
            if d == 1:
                div[j] = scalar_div if not kept else div[j] if j in new else _gcd(*div)
        return AxisInfo(tuple(con), tuple(div), tuple(const))

    def _broadcast(self, op: Operation, v: Value, rank: int) -> AxisInfo:
        src = op.operands[0]
        info, src_shape, shape = self.of(src), _shape(src), _shape(v)
        if len(src_shape) != rank:
            return AxisInfo.unknown(rank)
        con, div, const = list(info.contiguity), list(info.divisibility), list(info.constancy)
        for d in range(rank):
            if src_shape[d] == 1 and shape[d] != 1:
                con[d], const[d] = 1, shape[d]
        return AxisInfo(tuple(con), tuple(div), tuple(const))

    def _addi(self, op: Operation, v: Value, rank: int) -> AxisInfo:
        a, b = (self.of(x) for x in op.operands)
        return AxisInfo(
            tuple(max(_gcd(ac, bk), _gcd(bc, ak)) for ac, bc, ak, bk in
                  zip(a.contiguity, b.contiguity, a.constancy, b.constancy)),
            tuple(_gcd(x, y) for x, y in zip(a.divisibility, b.divisibility)),
            tuple(_gcd(x, y) for x, y in zip(a.constancy, b.constancy)))

    def _subi(self, op: Operation, v: Value, rank: int) -> AxisInfo:
        a, b = (self.of(x) for x in op.operands)
        return AxisInfo(
            tuple(_gcd(ac, bk) for ac, bk in zip(a.contiguity, b.constancy)),
            tuple(_gcd(x, y) for x, y in zip(a.divisibility, b.divisibility)),
            tuple(_gcd(x, y) for x, y in zip(a.constancy, b.constancy)))

    def _muli(self, op: Operation, v: Value, rank: int) -> AxisInfo:
        a, b = (self.of(x) for x in op.operands)
        one = [self._is_const(x, 1) for x in op.operands]
        if one[1]:
            return a
        if one[0]:
            return b
        return AxisInfo((1,) * rank,
                        tuple(min(HUGE, x * y) for x, y in zip(a.divisibility, b.divisibility)),
                        tuple(_gcd(x, y) for x, y in zip(a.constancy, b.constancy)))

    def _shli(self, op: Operation, v: Value, rank: int) -> AxisInfo:
        a = self.of(op.operands[0])
        shift = self._const_value(op.operands[1])
        if shift is None or not 0 <= shift < 31:
            return AxisInfo.unknown(rank)
        return AxisInfo((1,) * rank if shift else a.contiguity,
                        tuple(min(HUGE, d << shift) for d in a.divisibility), a.constancy)

    def _exti(self, op: Operation, v: Value, rank: int) -> AxisInfo:
        return self.of(op.operands[0])

    _trunci = _exti

    def _offset(self, op: Operation, v: Value, rank: int) -> AxisInfo:
        ptr, off = (self.of(x) for x in op.operands)
        size = max(1, _element_bits(v.type) // 8)
        return AxisInfo(
            tuple(max(_gcd(pc, ok), _gcd(oc, pk)) for pc, oc, pk, ok in
                  zip(ptr.contiguity, off.contiguity, ptr.constancy, off.constancy)),
            tuple(_gcd(pd, min(HUGE, od * size)) for pd, od in
                  zip(ptr.divisibility, off.divisibility)),
            tuple(_gcd(x, y) for x, y in zip(ptr.constancy, off.constancy)))

    def _cmpi(self, op: Operation, v: Value, rank: int) -> AxisInfo:
        a, b = (self.of(x) for x in op.operands)
        const = [_gcd(x, y) for x, y in zip(a.constancy, b.constancy)]
        pred = op.attributes.get("comparison_predicate")
        if pred in (ComparisonPredicate.less_than, ComparisonPredicate.greater_than_or_equal):
            # x < n over a contiguous run x0.. (x0 divisible by dx, n by dn) flips only at
            # n: constant over aligned blocks of gcd(run, dx, dn)
            for d in range(rank):
                if b.constancy[d] >= (_shape(v)[d] if _shape(v) else 1):
                    const[d] = max(const[d], _gcd(a.contiguity[d], a.divisibility[d],
                                                  b.divisibility[d]))
        return AxisInfo((1,) * rank, (1,) * rank, tuple(const))

    def _andi(self, op: Operation, v: Value, rank: int) -> AxisInfo:
        a, b = (self.of(x) for x in op.operands)
        return AxisInfo((1,) * rank, (1,) * rank,
                        tuple(_gcd(x, y) for x, y in zip(a.constancy, b.constancy)))

    _ori = _andi

    def _select(self, op: Operation, v: Value, rank: int) -> AxisInfo:
        c, a, b = (self.of(x) for x in op.operands)
        return AxisInfo((1,) * rank,
                        tuple(_gcd(x, y) for x, y in zip(a.divisibility, b.divisibility)),
                        tuple(_gcd(x, y, z) for x, y, z in
                              zip(c.constancy, a.constancy, b.constancy)))

    # ---- helpers --------------------------------------------------------------------
    def _const_value(self, v: Value) -> int | None:
        owner = v.owner
        if isinstance(owner, Operation) and owner.name == "constant":
            attr = owner.attributes.get("value")
            if isinstance(attr, A.DenseElementsAttr) and _uniform(attr, v) and \
                    isinstance(v.type.element, T.ElementType) and not v.type.element.is_float:
                return _splat_int(attr, v.type.element)
        if isinstance(owner, Operation) and owner.name in ("broadcast", "reshape"):
            return self._const_value(owner.operands[0])
        return None

    def _is_const(self, v: Value, value: int) -> bool:
        return self._const_value(v) == value


def _rank(v: Value) -> int:
    """Facts have one entry per dimension; a scalar has one pseudo-dimension of size 1."""
    return max(1, v.type.rank) if isinstance(v.type, T.TileType) else 1


def _shape(v: Value) -> tuple[int, ...]:
    return (tuple(v.type.shape) or (1,)) if isinstance(v.type, T.TileType) else (1,)


def _element_bits(t: T.Type) -> int:
    e = t.element if isinstance(t, T.TileType) else t
    if isinstance(e, T.PointerType):
        e = e.pointee
    return max(8, getattr(e, "bitwidth", 8))


def _splat_int(attr: A.DenseElementsAttr, t: T.ElementType) -> int:
    size = max(1, -(-t.bitwidth // 8))
    raw = int.from_bytes(attr.data[:size], "little")
    if t.name == "i1":
        return raw & 1
    if raw >= 1 << (t.bitwidth - 1):
        raw -= 1 << t.bitwidth
    return raw


def access_dim(info: Contiguity, op: Operation) -> int:
    """The dimension along which the pointers of the memory op ``op`` are contiguous in
    the longest runs (the last dimension unless another's are longer): the one its
    threads walk first and its vectors lie along, so that a warp reads whole lines
    (Triton's coalescing orders dimensions so). A column-major view's tile is contiguous
    along its first dimension."""
    pointers = op.operands[0]
    if not isinstance(pointers.type, T.TileType) or pointers.type.rank == 0:
        return -1
    contiguity = info.of(pointers).contiguity
    best = len(contiguity) - 1
    for dim in range(best - 1, -1, -1):
        if contiguity[dim] > contiguity[best]:
            best = dim
    return best


def vector_width(info: Contiguity, op: Operation, element_bytes: int,
                 max_bytes: int = 16, dim: int = -1) -> int:
    """How many consecutive elements along ``dim`` (the last dimension unless told) one
    access of the memory op ``op`` (load_ptr_tko, store_ptr_tko, its pointers first)
    may move at once: the pointers contiguous and aligned for it and the mask constant
    over it, at most ``max_bytes`` (16: ld/st.v4.b32). Padding values need not be equal:
    each register of a masked vector load gets its own before the load."""
    pointers = op.operands[0]
    if not isinstance(pointers.type, T.TileType) or pointers.type.rank == 0:
        return 1
    dim %= pointers.type.rank
    p = info.of(pointers)
    width = min(p.contiguity[dim], max(1, p.divisibility[dim] // element_bytes),
                max(1, max_bytes // element_bytes), pointers.type.shape[dim],
                VECTOR_ELEMENTS)
    for mask in operand_group(op, "mask"):  # not the i1 values a store writes
        width = min(width, info.of(mask).constancy[dim])
    return 1 << (max(1, width).bit_length() - 1)


def _uniform(attr: A.DenseElementsAttr, v: Value) -> bool:
    """A constant whose elements are all equal (a splat, or a single element)."""
    return bool(attr.splat) or (isinstance(v.type, T.TileType) and v.type.num_elements == 1)
