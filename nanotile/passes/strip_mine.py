"""strip-mine: a large tile that is loaded, computed element by element and stored becomes a
loop over strips of it.  tile -> tile.

A 128x128 copy held whole gives each of 128 threads 128 elements: as many loads, stores,
addresses and masks in straight-line code, long PTX that ptxas is slow to compile.
tileiras compiles such a copy to a loop of 16 loads per thread; this pass makes the same
loop at the tile level. A ``store_view_tko`` of a tile of at least twice STRIP_ELEMENTS
elements, whose value is computed from ``load_view_tko`` results by elementwise ops only,
becomes a ``for`` over ``count`` strips: the outermost dimension ``d`` whose cut leaves
strips of at most STRIP_ELEMENTS elements is cut into ``count`` pieces, every access gets
a partition view of strip-sized tiles (made before the loop) and index ``index[d] *
count + i`` in iteration ``i``, and the computation runs on strips.

Every element is loaded, computed and stored as before, so the values stored are the
same; only the order of the memory accesses changes, which Tile IR leaves undefined
between token-ordered ops that no token orders (spec, "Memory Model"). So the pass
applies only where nothing else can notice:
- the loads and the store are weak, of partition views without a ``dim_map``, and
  nothing uses their result tokens;
- every op of the computation is in the store's block and used only by the computation;
- the other values the computation reads are splat constants (made again at the strip's
  shape) or broadcasts of a value of extent 1 along ``d`` (broadcast to the strip).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..ir.core import Block, Module, Operation, Region, Value, make_op
from ..ir.enums import MemoryOrderingSemantics
from ..ir.rewrite import (all_ops, collect_uses, defining_op, erase, insert_before, make_splat,
                          splat_value, traits)
from ..ir.types import PartitionViewType, TileType
from .base import Pass, PassContext

STRIP_ELEMENTS = 2048  # 16 per thread of a 4-warp CTA, as tileiras' copy loops load


@dataclass
class Computation:
    """What one strip loop computes: its ops in block order, the last being the store."""

    ops: list[Operation]
    shape: tuple[int, ...]
    outside: list[Operation]  # constants and broadcasts it reads, remade per strip


def strip_dimension(shape: tuple[int, ...]) -> tuple[int, int] | None:
    """The dimension to cut and the strip's extent along it, or None (too small)."""
    total = math.prod(shape)
    cuts = [(d, STRIP_ELEMENTS // (total // extent)) for d, extent in enumerate(shape)
            if extent > 1 and total // extent <= STRIP_ELEMENTS]
    return cuts[0] if cuts and total >= 2 * STRIP_ELEMENTS else None


def is_strippable_access(op: Operation, shape: tuple[int, ...], d: int, index: Value) -> bool:
    """A weak view load or store of a whole ``shape`` tile through a partition view without
    a dim_map, its index along ``d`` of ``index``'s type (the caller checks its token)."""
    at = 0 if op.name == "load_view_tko" else 1
    view = op.operands[at].type
    return (op.attributes.get("memory_ordering_semantics") == MemoryOrderingSemantics.weak
            and isinstance(view, PartitionViewType) and view.dim_map is None
            and view.tile_shape == shape and defining_op(op.operands[at]) is not None
            and op.operands[at + 1 + d].type == index.type)


def remade_outside(v: Value, shape: tuple[int, ...], d: int) -> Operation | None:
    """A value from outside the computation that a strip can have its own copy of."""
    op = defining_op(v)
    if op is not None and isinstance(v.type, TileType) and v.type.shape == shape and (
            op.name == "constant" and splat_value(v) is not None or
            op.name == "broadcast" and op.operands[0].type.shape[d] == 1):
        return op
    return None


def computes_strips(op: Operation, shape: tuple[int, ...], d: int, index: Value,
                    uses: dict[Value, list[Operation]]) -> bool:
    """A load (its token unused) or an elementwise op of the tile's shape."""
    if op.name == "load_view_tko":
        return not uses.get(op.results[1]) and is_strippable_access(op, shape, d, index)
    return "elementwise" in traits(op) and op.results[0].type.shape == shape


def computation(store: Operation, uses: dict[Value, list[Operation]]) -> Computation | None:
    """The ops ``store`` may be strip-mined with, or None."""
    shape = store.operands[0].type.shape
    cut = strip_dimension(shape)
    if cut is None or uses.get(store.results[0]) or \
            not is_strippable_access(store, shape, cut[0], store.operands[2 + cut[0]]):
        return None
    d, index = cut[0], store.operands[2 + cut[0]]
    members, outside, pending = {id(store): store}, {}, [store.operands[0]]
    while pending:  # the store's and loads' other operands (views, indices) stay as they are
        op = defining_op(pending.pop())
        if op is not None and id(op) in members:
            continue
        if op is None or op.parent is not store.parent or \
                not computes_strips(op, shape, d, index, uses):
            return None
        members[id(op)] = op
        for operand in op.operands if op.name != "load_view_tko" else ():
            remade = remade_outside(operand, shape, d)
            if remade is not None:
                outside[id(remade)] = remade
            else:
                pending.append(operand)
    if any(id(user) not in members for op in members.values() if op is not store
           for result in op.results for user in uses.get(result, [])):
        return None
    block_order = {id(op): i for i, op in enumerate(store.parent.ops)}
    ops = sorted(members.values(), key=lambda op: block_order[id(op)])
    return Computation(ops, shape, list(outside.values()))


def strip_view(store: Operation, view: Value, strip: tuple[int, ...],
               views: dict[Value, Value]) -> Value:
    """A partition view of the same tensor with strip-sized tiles (one per view)."""
    if view not in views:
        original = defining_op(view)
        made = make_op("make_partition_view", [original.operands[0]],
                       [replace(view.type, tile_shape=strip)], dict(original.attributes),
                       location=original.location)
        views[view] = insert_before(store, made).results[0]
    return views[view]


def strip_of(op: Operation, strip: tuple[int, ...]) -> Operation:
    """A constant or broadcast from outside the computation, made at the strip's shape."""
    strip_type = TileType(strip, op.results[0].type.element)
    if op.name == "constant":
        return make_splat(splat_value(op.results[0]), strip_type)
    return make_op("broadcast", list(op.operands), [strip_type], dict(op.attributes))


def strip_mine(comp: Computation) -> list[Operation]:
    """Replace the computation by a loop over its strips, made where the store was;
    returns the ops outside it that it no longer reads."""
    store = comp.ops[-1]
    d, extent = strip_dimension(comp.shape)
    count = comp.shape[d] // extent
    strip = (*comp.shape[:d], extent, *comp.shape[d + 1:])
    index_type = store.operand_groups()[2][d].type

    def before_loop(op: Operation) -> Value:
        return insert_before(store, op).results[0]

    zero, one, steps = (before_loop(make_splat(n, index_type)) for n in (0, 1, count))
    body, mapping, views, indices = Block(), {}, {}, {}
    iteration = body.add_argument(index_type, "strip")
    for op in comp.outside:
        mapping[op.results[0]] = before_loop(strip_of(op, strip))
    for op in comp.ops:
        operands = [mapping.get(v, v) for v in op.operands]
        if op.name in ("load_view_tko", "store_view_tko"):
            at = 0 if op.name == "load_view_tko" else 1
            index = op.operands[at + 1 + d]
            if index not in indices:  # index * count + iteration, once per index
                first = before_loop(make_op("muli", [index, steps], [index_type]))
                step = make_op("addi", [first, iteration], [index_type], location=op.location)
                indices[index] = body.append(step).results[0]
            operands[at] = strip_view(store, op.operands[at], strip, views)
            operands[at + 1 + d] = indices[index]
        types = [TileType(strip, r.type.element) if isinstance(r.type, TileType) and
                 r.type.shape == comp.shape else r.type for r in op.results]
        new = body.append(make_op(op.name, operands, types, dict(op.attributes), [],
                                  op.operand_segments, op.location))
        new.source = op.source
        mapping.update(zip(op.results, new.results))
    body.append(make_op("continue", [], [], location=store.location))
    insert_before(store, make_op("for", [zero, steps, one], [], {}, [Region([body])],
                                 [1, 1, 1, 0], store.location))
    for op in reversed(comp.ops):
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
    """Large load-compute-store tiles as loops over strips of STRIP_ELEMENTS elements."""

    name = "strip-mine"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        uses = collect_uses(module)
        stores = [op for op in all_ops(module) if op.name == "store_view_tko"]
        found = [c for c in (computation(store, uses) for store in stores) if c is not None]
        erase_unused([op for comp in found for op in strip_mine(comp)], module)
        return bool(found)
