"""strip-mine: a large tile that is loaded, computed element by element and stored or
reduced becomes a loop over strips of it.  tile -> tile.

A 128x128 copy held whole gives each of 128 threads 128 elements: as many loads, stores,
addresses and masks in straight-line code, long PTX that ptxas is slow to compile.
tileiras compiles such a copy to a loop of 16 loads per thread; this pass makes the same
loop at the tile level. A computation of at least twice STRIP_ELEMENTS elements (its
largest tile), made from ``load_view_tko`` results by the ops nanotile/passes/strips.py
admits, is cut into ``count`` strips of at most STRIP_ELEMENTS elements: each tile shape
in it along one dimension (``strips.Cut``; a store's tile along its outermost dimension
not contiguous in memory where it can be). A ``for`` over the strips, before the last
root, runs the computation on one strip at a time: every access gets a partition view
of strip-sized tiles (made before the loop) and index ``index[d] * count + i`` in
iteration ``i``; a one-dimensional iota, an iota over the strip plus its first index; a
reshape, the strips of its operand and result (the same elements in row-major order); a
reduce along another dimension, a reduce of the strip; a ``for`` carrying tiles, the
same loop carrying their strips. What the loop does with a strip:
- the computation ends in stores (``store_view_tko``, relaxed ``atomic_red_view_tko``):
  stores it (or adds it atomically); stores that share ops share the loop;
- it ends in a ``reduce`` along ``d``: combines it, element by element with the reduce's
  body, into accumulators (loop-carried, starting at the identities); the reduce then
  reduces the accumulators, a strip instead of the whole tile. The spec lets a reduce
  combine a line's elements in any order, which is what changes.

Every element is loaded and computed as before; the order of the memory accesses
changes, which Tile IR leaves undefined between token-ordered ops that no token orders
(spec, "Memory Model"): so the loads and stores are weak and their tokens unused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..ir.attrs import DenseElementsAttr, FloatAttr
from ..ir.core import Block, Module, Operation, Region, Value, make_op
from ..ir.rewrite import all_ops, clone_region, collect_uses, defining_op, erase, erase_unused, \
    insert_before, make_splat, splat_value
from ..ir.types import TileType
from .base import Pass, PassContext
from .strips import ACCESSES, INDEX, ROOTS, Computation, computations, resized_view, \
    view_operand


def strip_of(op: Operation, strip: tuple[int, ...]) -> Operation:
    """A constant or broadcast from outside the computation, made at the strip's shape."""
    strip_type = TileType(strip, op.results[0].type.element)
    if op.name == "constant":
        return make_splat(splat_value(op.results[0]), strip_type)
    return make_op("broadcast", list(op.operands), [strip_type], dict(op.attributes))


def identity(attr: object, tile: TileType) -> Operation:
    """A constant filling ``tile`` with a reduce's identity attribute (its exact bits)."""
    if isinstance(attr, FloatAttr):
        data = attr.bits.to_bytes(tile.element.bitwidth // 8, "little")
        return make_op("constant", [], [tile], {"value": DenseElementsAttr(tile, data, True)})
    return make_splat(int(getattr(attr, "value", attr)), tile)


def combine(reduce: Operation, body: Block, accumulators: list[Value],
            strips: list[Value]) -> list[Value]:
    """The reduce's combiner applied to whole strips, element by element, in ``body``."""
    block = reduce.regions[0].blocks[0]
    mapping = dict(zip(block.arguments[0::2], accumulators)) | \
        dict(zip(block.arguments[1::2], strips))
    shape = strips[0].type.shape
    for op in block.ops[:-1]:
        new = body.append(make_op(op.name, [mapping[v] for v in op.operands],
                                  [TileType(shape, r.type.element) for r in op.results],
                                  dict(op.attributes), [], op.operand_segments, op.location))
        mapping.update(zip(op.results, new.results))
    return [mapping[v] for v in block.ops[-1].operands]


class StripLoop:
    """Builds the loop of one computation: constants, views and first indices before the
    root, the computation on one strip in the body."""

    def __init__(self, comp: Computation) -> None:
        self.comp, self.cut, self.body = comp, comp.cut, Block()
        self.iteration = self.body.add_argument(INDEX, "strip")
        self.steps = self.before_loop(make_splat(self.cut.count, INDEX))
        self.mapping: dict[Value, Value] = {}
        self.views: dict[Value, Value] = {}  # a view -> its strip-sized twin
        self.indices: dict[Value, Value] = {}  # an index along d -> index * count + i

    def before_loop(self, op: Operation) -> Value:
        return insert_before(self.comp.root, op).results[0]

    def strip_type(self, v: Value) -> Any:
        strip = self.cut.strip(v.type.shape) if isinstance(v.type, TileType) else None
        return v.type if strip is None else TileType(strip, v.type.element)

    def emit(self, name: str, operands: list[Value], type: Any, at: Operation) -> Value:
        return self.body.append(make_op(name, operands, [type], location=at.location)).results[0]

    def access(self, op: Operation, operands: list[Value]) -> None:
        """An access's (load, store, atomic) view and index along its cut dimension, for
        this strip."""
        at = view_operand(op)
        view = op.operands[at]
        d = self.cut.dims[view.type.tile_shape]
        index = op.operands[at + 1 + d]
        if index not in self.indices:
            first = self.before_loop(make_op("muli", [index, self.steps], [INDEX]))
            self.indices[index] = self.emit("addi", [first, self.iteration], INDEX, op)
        if view not in self.views:
            self.views[view] = resized_view(self.comp.root, view,
                                            self.cut.strip(view.type.tile_shape))
        operands[at], operands[at + 1 + d] = self.views[view], self.indices[index]

    def iota(self, op: Operation) -> Value:
        """A one-dimensional iota's strip: an iota plus the strip's first index."""
        tile = self.strip_type(op.results[0])
        length = self.before_loop(make_splat(tile.shape[0], INDEX))
        start = self.emit("muli", [self.iteration, length], INDEX, op)
        row = self.emit("reshape", [start], TileType((1,), INDEX.element), op)
        starts = self.emit("broadcast", [row], tile, op)
        return self.emit("addi", [self.emit("iota", [], tile, op), starts], tile, op)

    def copy(self, op: Operation, block: Block) -> None:
        """``op`` on this strip, at the end of ``block`` (the loop's body, or the body of
        a loop in the computation)."""
        if op.name == "iota":
            self.mapping[op.results[0]] = self.iota(op)
            return
        operands = [self.mapping.get(v, v) for v in op.operands]
        if op.name in ACCESSES:
            self.access(op, operands)
        regions = [self.loop_body(op)] if op.name == "for" else \
            [clone_region(region) for region in op.regions]
        new = block.append(make_op(op.name, operands, [self.strip_type(r) for r in op.results],
                                   dict(op.attributes), regions, op.operand_segments,
                                   op.location))
        new.source = op.source
        self.mapping.update(zip(op.results, new.results))

    def loop_body(self, loop: Operation) -> Region:
        """The body of a ``for`` in the computation, on this strip."""
        old, body = loop.regions[0].blocks[0], Block()
        for argument in old.arguments:
            self.mapping[argument] = body.add_argument(self.strip_type(argument),
                                                       argument.name_hint)
        for op in old.ops:
            self.copy(op, body)
        return Region([body])

    def build(self) -> list[Operation]:
        """The loop, before the root; returns the ops outside it no longer read."""
        comp, root = self.comp, self.comp.root
        for op in comp.outside:
            self.mapping[op.results[0]] = self.before_loop(
                strip_of(op, self.cut.strip(op.results[0].type.shape)))
        strip_ops = comp.ops[:-1] if root.name == "reduce" else comp.ops
        for op in strip_ops:
            self.copy(op, self.body)
        carried = []
        if root.name == "reduce":
            identities = root.attributes["identities"]
            types = [self.strip_type(v) for v in root.operands]
            carried = [self.before_loop(identity(a, t)) for a, t in
                       zip(getattr(identities, "elements", identities), types)]
            partials = [self.body.add_argument(t, "partial") for t in types]
            strips = [self.mapping[v] for v in root.operands]
            self.body.append(make_op("continue", combine(root, self.body, partials, strips), []))
        else:
            self.body.append(make_op("continue", [], [], location=root.location))
        zero, one = (self.before_loop(make_splat(n, INDEX)) for n in (0, 1))
        loop = insert_before(root, make_op("for", [zero, self.steps, one, *carried],
                                           [v.type for v in carried], {},
                                           [Region([self.body])], [1, 1, 1, len(carried)],
                                           root.location))
        if root.name == "reduce":
            root.operands = list(loop.results)
        for op in reversed(strip_ops):
            erase(op)
        return comp.outside + [defining_op(view) for view in self.views]


@dataclass(frozen=True)
class StripMine(Pass):
    """Large loaded-computed-stored or reduced tiles as loops over strips of them."""

    name = "strip-mine"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        uses = collect_uses(module)
        found = computations([op for op in all_ops(module) if op.name in ROOTS], uses)
        erase_unused([op for comp in found for op in StripLoop(comp).build()], module)
        return bool(found)
