"""strip-mine: a large tile that is loaded, computed element by element and stored or
reduced becomes a loop over strips of it.  tile -> tile.

A 128x128 copy held whole gives each of 128 threads 128 elements: as many loads, stores,
addresses and masks in straight-line code, long PTX that ptxas is slow to compile.
tileiras compiles such a copy to a loop of 16 loads per thread; this pass makes the same
loop at the tile level. A tile of at least twice STRIP_ELEMENTS elements, computed from
``load_view_tko`` results by elementwise ops (nanotile/passes/strips.py says which), is
cut along a dimension ``d`` that leaves strips of at most STRIP_ELEMENTS elements (the
outermost one not contiguous in memory, strips.choose_cut), and a ``for`` over the
``count`` strips runs the computation on one strip at a time: every access gets a partition view of strip-sized tiles (made before the loop) and
index ``index[d] * count + i`` in iteration ``i``. What the loop does with a strip:
- the computation ends in a ``store_view_tko``: stores it;
- it ends in a ``reduce`` along ``d``: combines it, element by element with the reduce's
  body, into accumulators (loop-carried, starting at the identities); the reduce then
  reduces the accumulators, a strip instead of the whole tile. The spec lets a reduce
  combine a line's elements in any order, which is what changes.

Every element is loaded and computed as before; the order of the memory accesses
changes, which Tile IR leaves undefined between token-ordered ops that no token orders
(spec, "Memory Model"): so the loads and stores are weak and their tokens unused.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..ir.attrs import DenseElementsAttr, FloatAttr
from ..ir.core import Block, Module, Operation, Region, Value, make_op
from ..ir.rewrite import all_ops, collect_uses, defining_op, erase, insert_before, make_splat, \
    splat_value
from ..ir.types import TileType
from .base import Pass, PassContext
from .strips import INDEX, Computation, computation, view_operand


def strip_view(root: Operation, view: Value, strip: tuple[int, ...],
               views: dict[Value, Value]) -> Value:
    """A partition view of the same tensor with strip-sized tiles (one per view)."""
    if view not in views:
        original = defining_op(view)
        made = make_op("make_partition_view", [original.operands[0]],
                       [replace(view.type, tile_shape=strip)], dict(original.attributes),
                       location=original.location)
        views[view] = insert_before(root, made).results[0]
    return views[view]


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


def strip_mine(comp: Computation) -> list[Operation]:
    """Replace the computation by a loop over its strips, made before its root; returns
    the ops outside it that it no longer reads."""
    root = comp.root
    d, extent = comp.cut
    count = comp.shape[d] // extent
    strip = (*comp.shape[:d], extent, *comp.shape[d + 1:])

    def before_loop(op: Operation) -> Value:
        return insert_before(root, op).results[0]

    zero, one, steps = (before_loop(make_splat(n, INDEX)) for n in (0, 1, count))
    body, mapping, views, indices = Block(), {}, {}, {}
    iteration = body.add_argument(INDEX, "strip")
    for op in comp.outside:
        mapping[op.results[0]] = before_loop(strip_of(op, strip))
    for op in comp.ops[:-1] if root.name == "reduce" else comp.ops:
        operands = [mapping.get(v, v) for v in op.operands]
        if op.name in ("load_view_tko", "store_view_tko"):
            at = view_operand(op)
            index = op.operands[at + 1 + d]
            if index not in indices:  # index * count + iteration, once per index
                first = before_loop(make_op("muli", [index, steps], [INDEX]))
                step = make_op("addi", [first, iteration], [INDEX], location=op.location)
                indices[index] = body.append(step).results[0]
            operands[at] = strip_view(root, op.operands[at], strip, views)
            operands[at + 1 + d] = indices[index]
        types = [TileType(strip, r.type.element) if isinstance(r.type, TileType) and
                 r.type.shape == comp.shape else r.type for r in op.results]
        new = body.append(make_op(op.name, operands, types, dict(op.attributes), [],
                                  op.operand_segments, op.location))
        new.source = op.source
        mapping.update(zip(op.results, new.results))
    carried = []
    if root.name == "reduce":
        types = [TileType(strip, v.type.element) for v in root.operands]
        carried = [before_loop(identity(a, t)) for a, t in
                   zip(getattr(root.attributes["identities"], "elements",
                               root.attributes["identities"]), types)]
        accumulators = [body.add_argument(t, "partial") for t in types]
        strips = [mapping[v] for v in root.operands]
        body.append(make_op("continue", combine(root, body, accumulators, strips), []))
    else:
        body.append(make_op("continue", [], [], location=root.location))
    loop = insert_before(root, make_op("for", [zero, steps, one, *carried],
                                       [v.type for v in carried], {}, [Region([body])],
                                       [1, 1, 1, len(carried)], root.location))
    if root.name == "reduce":
        root.operands = list(loop.results)
    for op in reversed(comp.ops[:-1] if root.name == "reduce" else comp.ops):
        erase(op)
    return comp.outside + [defining_op(view) for view in views]


def erase_unused(ops: list[Operation], module: Module) -> None:
    """Remove the ops (pure: constants, broadcasts, views) nothing uses any more."""
    uses = collect_uses(module)
    for op in {id(op): op for op in ops}.values():
        if op.parent is not None and not any(uses.get(r) for r in op.results):
            erase(op)


@dataclass(frozen=True)
class StripMine(Pass):
    """Large loaded-computed-stored or reduced tiles as loops over strips of them."""

    name = "strip-mine"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        uses = collect_uses(module)
        roots = [op for op in all_ops(module) if op.name in ("store_view_tko", "reduce")]
        found = [c for c in (computation(root, uses) for root in roots) if c is not None]
        erase_unused([op for comp in found for op in strip_mine(comp)], module)
        return bool(found)
