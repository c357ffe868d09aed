"""distribute's rules for ops that read their operands from shared memory by element
index (extract, cat, insert, pack/unpack), and the index arithmetic they share: each
register of the result computes the row-major index of the element it needs from its
own coordinates (``coordinates``) and reads it with ``shared_gather``.

Where the result's layout gives each thread runs of consecutive registers along the
last dimension (aligned: the run starts at a coordinate that is a multiple of its
length in every thread) and the op keeps each run together in its source (the offset
along the last dimension, index * tile size or a cat's split, a multiple of the run),
the run's elements are consecutive in the row-major buffer and aligned there too: the
gather says ``vector = N`` and select-instructions reads each run with one
``ld.shared.vN`` (``run_length`` decides)."""

from __future__ import annotations

from ...ir import types as T
from ...ir.core import Operation, Value
from ...ir.enums import ComparisonPredicate, Signedness
from ...ir.layouts import LinearLayout, SharedLayout
from .distribute import Distributor, Unsupported, registers, simt_type
from .shared_memory import element_bytes


def run_length(t: T.TileType, element: T.Type, rows: tuple[int, ...],
               buffers: tuple[T.TileType, ...]) -> int:
    """How many consecutive registers (4, 2 or 1) of a result ``t`` in a distributed
    layout one ``ld.shared.vN`` can gather, their elements read as ``element`` from
    ``buffers``: the first N register bases step 1, 2, ... along the last dimension and
    no other basis (register, lane or warp) touches those low bits, so every run starts
    at a last coordinate that is a multiple of N; every length in ``rows`` (the source
    rows and the offsets along them that the op adds: multiples of the run keep it
    together and aligned) is a multiple of N; each buffer is row-major, unswizzled,
    unpadded and placed at a multiple of the vector's bytes."""
    layout = t.layout
    if not isinstance(layout, LinearLayout) or not t.shape or element.name == "i1" or \
            element.bitwidth == 4:
        return 1
    size = element_bytes(element)
    for width in (4, 2):
        if width * size > 16 or layout.contiguous_registers() < width:
            continue
        low = width.bit_length() - 1
        others = (*layout.register[low:], *layout.lane, *layout.warp)
        if any(b & (width - 1) for b in others) or any(r % width for r in rows):
            continue
        if all(_aligned(b.layout, width * size) for b in buffers):
            return width
    return 1


def _aligned(placed: object, nbytes: int) -> bool:
    return isinstance(placed, SharedLayout) and placed.swizzle is None and \
        placed.padding is None and placed.block is None and placed.offset is not None and \
        placed.offset % nbytes == 0 and \
        placed.order in (None, tuple(range(len(placed.shape) - 1, -1, -1)))


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

    def gather(self, index: Value, buffer: T.TileType, element: T.Type,
               vector: int = 1) -> Value:
        attrs = {"vector": vector} if vector > 1 else {}
        return self.d.emit(self.anchor, "shared_gather", [index],
                           registers(self.result, element), buffer=buffer, **attrs)


def extract(d: Distributor, op: Operation) -> None:
    source, *indices = op.operands
    t = op.results[0].type
    ix = Index(d, op, t)
    coords = [ix.add(ix.coordinate(i), ix.mul(ix.array(v), size))
              for i, (v, size) in enumerate(zip(indices, t.shape))]
    n = run_length(t, t.element, (t.shape[-1], source.type.shape[-1]) if t.shape else (),
                   (source.type,))
    d.replace(op, ix.gather(ix.flat(coords, source.type.shape), source.type, t.element, n))


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
    # a run lies wholly left or right when the split keeps it together; in the other
    # operand it reads (from index 0 of its dimension) elements the select drops
    n = run_length(t, t.element, (lhs.type.shape[-1], rhs.type.shape[-1]),
                   (lhs.type, rhs.type))
    a = ix.gather(ix.flat(in_left, lhs.type.shape), lhs.type, t.element, n)
    b = ix.gather(ix.flat(in_right, rhs.type.shape), rhs.type, t.element, n)
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
    # a run lies wholly inside the inserted tile or outside it when the tile's rows
    # (and so its offset, index * rows) are a multiple of the run; outside, the run
    # reads the source's first elements, which the select drops. The destination's
    # elements are read where they are, in runs whatever the source.
    rows = (t.shape[-1],) if t.shape else ()
    n = run_length(t, t.element, rows + source.type.shape[-1:], (source.type,))
    new = ix.gather(ix.flat(local, source.type.shape), source.type, t.element, n)
    n = run_length(t, t.element, rows, (destination.type,))
    old = ix.gather(ix.flat(coords, t.shape), destination.type, t.element, n)
    d.replace(op, ix.select(inside, new, old, simt_type(t)))


def pack(d: Distributor, op: Operation) -> None:
    """pack / unpack: the same bytes as other elements. The source lies row-major in
    shared memory; result element j is read at byte j * (its own width), or, for a 4-bit
    float unpacked from i8, as nibble j (two per byte, low first: shared_gather). Packing
    4-bit floats (stored a byte each) puts elements 2i and 2i+1 into byte i."""
    source = op.operands[0]
    t = op.results[0].type
    for e in (source.type.element, t.element):
        if e.bitwidth not in (4, 8, 16, 32, 64) or e.name == "i1":
            raise Unsupported(f"{op.name} of {e}")
    if 4 in (source.type.element.bitwidth, t.element.bitwidth) and \
            T.I8 not in (source.type.element, t.element):
        raise Unsupported(f"{op.name} between {source.type.element} and {t.element}")
    ix = Index(d, op, t)
    index = ix.flat([ix.coordinate(i) for i in range(len(t.shape))], t.shape)
    if source.type.element.bitwidth == 4:
        d.replace(op, _pack_nibbles(ix, index, source.type))
        return
    n = run_length(t, t.element, (t.shape[-1],) if t.shape else (), (source.type,))
    d.replace(op, ix.gather(index, source.type, t.element, n))


def _pack_nibbles(ix: Index, index: Value, buffer: T.TileType) -> Value:
    """Byte i of 4-bit elements 2i (low nibble) and 2i+1 (high nibble)."""
    bytes_t = registers(ix.result, T.I8)
    even = ix.mul(index, 2)
    low, high = (ix.gather(i, buffer, T.I8) for i in (even, ix.add(even, ix.const(1))))
    fifteen = ix.d.constant(ix.anchor, 15, bytes_t)
    four = ix.d.constant(ix.anchor, 4, bytes_t)
    low = ix.d.emit(ix.anchor, "andi", [low, fifteen], bytes_t)
    high = ix.d.emit(ix.anchor, "andi", [high, fifteen], bytes_t)
    high = ix.d.emit(ix.anchor, "shli", [high, four], bytes_t)
    return ix.d.emit(ix.anchor, "ori", [low, high], bytes_t)
