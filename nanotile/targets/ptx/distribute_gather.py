"""distribute's rules for ops that read their operands from shared memory by element
index (extract, cat, insert, pack/unpack), and the index arithmetic they share: each
register of the result computes the row-major index of the element it needs from its
own coordinates (``coordinates``) and reads it with ``shared_gather``."""

from __future__ import annotations

from ...ir import types as T
from ...ir.core import Operation, Value
from ...ir.enums import ComparisonPredicate, Signedness
from .distribute import Distributor, Unsupported, registers, simt_type


class Index:
    """Integer arithmetic on the register arrays of one result (its simt shape)."""

    def __init__(self, d: Distributor, anchor: Operation, result: T.TileType) -> None:
        self.d, self.anchor, self.result = d, anchor, result
        self.t = registers(result, T.I32)

    def coordinate(self, dim: int) -> Value:
        if self.result.num_elements == 1:
            return self.const(0)
        return self.d.emit(self.anchor, "coordinates", [], self.t, dim=dim, of=self.result)

    def const(self, value: int) -> Value:
        return self.d.constant(self.anchor, value, self.t)

    def array(self, scalar: Value) -> Value:
        """A scalar (index operand) in every register."""
        if scalar.type.element != T.I32:
            kind = "trunci" if scalar.type.element.bitwidth > 32 else "exti"
            attrs = {"signedness": Signedness.signed} if kind == "exti" else {}
            scalar = self.d.emit(self.anchor, kind, [scalar], T.TileType((), T.I32), **attrs)
        if not self.t.shape:
            return scalar
        return self.d.emit(self.anchor, "splat", [scalar], self.t)

    def op(self, name: str, a: Value, b: Value, **attrs) -> Value:
        return self.d.emit(self.anchor, name, [a, b], self.t, **attrs)

    def add(self, a: Value, b: Value) -> Value:
        return self.op("addi", a, b)

    def mul(self, a: Value, k: int) -> Value:
        return a if k == 1 else self.op("muli", a, self.const(k))

    def flat(self, coords: list[Value], shape: tuple[int, ...]) -> Value:
        """Row-major index of ``coords`` in a tile of ``shape``."""
        acc = None
        stride = 1
        for c, size in reversed(list(zip(coords, shape))):
            term = self.mul(c, stride)
            acc = term if acc is None else self.add(acc, term)
            stride *= size
        return acc if acc is not None else self.const(0)

    def less(self, a: Value, b: Value) -> Value:
        """a < b, unsigned (a negative a is out of range too)."""
        return self.d.emit(self.anchor, "cmpi", [a, b], registers(self.result, T.I1),
                           comparison_predicate=ComparisonPredicate.less_than,
                           signedness=Signedness.unsigned)

    def select(self, cond: Value, a: Value, b: Value, t: T.Type | None = None) -> Value:
        return self.d.emit(self.anchor, "select", [cond, a, b], t or self.t)

    def gather(self, index: Value, buffer: T.TileType, element: T.Type) -> Value:
        return self.d.emit(self.anchor, "shared_gather", [index],
                           registers(self.result, element), buffer=buffer)


def extract(d: Distributor, op: Operation) -> None:
    source, *indices = op.operands
    t = op.results[0].type
    ix = Index(d, op, t)
    coords = [ix.add(ix.coordinate(i), ix.mul(ix.array(v), size))
              for i, (v, size) in enumerate(zip(indices, t.shape))]
    d.replace(op, ix.gather(ix.flat(coords, source.type.shape), source.type, t.element))


def cat(d: Distributor, op: Operation) -> None:
    lhs, rhs = op.operands
    dim, t = op.attributes["dim"], op.results[0].type
    split = lhs.type.shape[dim]
    ix = Index(d, op, t)
    coords = [ix.coordinate(i) for i in range(len(t.shape))]
    left = ix.less(coords[dim], ix.const(split))
    zero = ix.const(0)
    in_left = list(coords)
    in_left[dim] = ix.select(left, coords[dim], zero)
    in_right = list(coords)
    in_right[dim] = ix.select(left, zero, ix.op("subi", coords[dim], ix.const(split)))
    a = ix.gather(ix.flat(in_left, lhs.type.shape), lhs.type, t.element)
    b = ix.gather(ix.flat(in_right, rhs.type.shape), rhs.type, t.element)
    d.replace(op, ix.select(left, a, b, simt_type(t)))


def insert(d: Distributor, op: Operation) -> None:
    source, destination, *indices = op.operands
    t = op.results[0].type
    ix = Index(d, op, t)
    coords = [ix.coordinate(i) for i in range(len(t.shape))]
    local, inside = [], None
    for c, v, size in zip(coords, indices, source.type.shape):
        offset = ix.op("subi", c, ix.mul(ix.array(v), size))
        within = ix.less(offset, ix.const(size))
        inside = within if inside is None else d.emit(op, "andi", [inside, within],
                                                      registers(t, T.I1))
        local.append(offset)
    zero = ix.const(0)
    local = [ix.select(inside, c, zero) for c in local]
    new = ix.gather(ix.flat(local, source.type.shape), source.type, t.element)
    old = ix.gather(ix.flat(coords, t.shape), destination.type, t.element)
    d.replace(op, ix.select(inside, new, old, simt_type(t)))


def pack(d: Distributor, op: Operation) -> None:
    """pack / unpack: the same bytes as other elements. The source lies row-major in
    shared memory; result element j is read at byte j * (its own width)."""
    source = op.operands[0]
    t = op.results[0].type
    for e in (source.type.element, t.element):
        if e.name != "i8" and e.bitwidth not in (16, 32, 64):
            raise Unsupported(f"{op.name} of {e}")
    ix = Index(d, op, t)
    coords = [ix.coordinate(i) for i in range(len(t.shape))]
    d.replace(op, ix.gather(ix.flat(coords, t.shape), source.type, t.element))
