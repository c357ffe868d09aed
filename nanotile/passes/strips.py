"""Which computations strip-mine (nanotile/passes/strip_mine.py) can run strip by strip.

A computation ends at a root: a ``store_view_tko`` of the tile, or a ``reduce`` of it
along the dimension the strips cut. Everything it reads of the tile's shape comes from
weak partition-view loads through elementwise ops, each in the root's block and used
only by the computation; the rest are splat constants and broadcasts of extent 1 along
the cut dimension, which a strip can have its own copy of (``outside``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..ir.core import Operation, Value
from ..ir.enums import MemoryOrderingSemantics
from ..ir.rewrite import defining_op, splat_value, traits
from ..ir.types import I32, PartitionViewType, TileType

STRIP_ELEMENTS = 2048  # 16 per thread of a 4-warp CTA, as tileiras' copy loops load
INDEX = TileType((), I32)  # the type of the loop's counter and of the indices it moves
Uses = dict[Value, list[Operation]]


@dataclass
class Computation:
    """What one strip loop computes: its ops in block order, the last being the root."""

    ops: list[Operation]
    shape: tuple[int, ...]
    cut: tuple[int, int]  # the dimension cut, and the strips' extent along it
    outside: list[Operation]  # constants and broadcasts it reads, remade per strip

    @property
    def root(self) -> Operation:
        return self.ops[-1]


def strip_cuts(shape: tuple[int, ...]) -> list[tuple[int, int]]:
    """The dimensions whose cut leaves strips of at most STRIP_ELEMENTS elements, outermost
    first, each with the strip's extent along it; none for a tile under two strips."""
    total = math.prod(shape)
    cuts = [(d, STRIP_ELEMENTS // (total // extent)) for d, extent in enumerate(shape)
            if extent > 1 and total // extent <= STRIP_ELEMENTS]
    return cuts if total >= 2 * STRIP_ELEMENTS else []


def choose_cut(root: Operation, shape: tuple[int, ...]) -> tuple[int, int] | None:
    """A reduce's strips cut the dimension it reduces; a store's, the outermost dimension
    not contiguous in memory (stride 1) where another is, so each strip still moves runs
    of consecutive elements (vectors) along it."""
    cuts = strip_cuts(shape)
    if root.name == "reduce":
        return next((cut for cut in cuts if cut[0] == root.attributes["dim"]), None)
    view = root.operands[1].type
    strides = view.tensor_view.strides if isinstance(view, PartitionViewType) else ()
    return next((cut for cut in cuts if cut[0] >= len(strides) or strides[cut[0]] != 1),
                cuts[0] if cuts else None)


def view_operand(op: Operation) -> int:
    """Where a view load or store has its view (its indices follow)."""
    return 0 if op.name == "load_view_tko" else 1


def is_strippable_access(op: Operation, shape: tuple[int, ...], d: int, uses: Uses) -> bool:
    """A weak view load or store of a whole ``shape`` tile through a partition view
    without a dim_map, an i32 index along ``d``, and a result token nobody uses."""
    at = view_operand(op)
    view = op.operands[at].type
    return (op.attributes.get("memory_ordering_semantics") == MemoryOrderingSemantics.weak
            and isinstance(view, PartitionViewType) and view.dim_map is None
            and view.tile_shape == shape and defining_op(op.operands[at]) is not None
            and op.operands[at + 1 + d].type == INDEX and not uses.get(op.results[-1]))


def is_strippable_root(op: Operation, shape: tuple[int, ...], d: int, uses: Uses) -> bool:
    """A store as above, or a reduce (along ``d``: choose_cut) whose body is elementwise ops on its own
    values only (so it can also combine whole strips, element by element)."""
    if op.name == "store_view_tko":
        return is_strippable_access(op, shape, d, uses)
    block = op.regions[0].blocks[0] if op.name == "reduce" else None
    return (block is not None and all(v.type.shape == shape for v in op.operands)
            and all("elementwise" in traits(inner) for inner in block.ops[:-1])
            and all(v.owner is block or getattr(v.owner, "parent", None) is block
                    for inner in block.ops for v in inner.operands))


def remade_outside(v: Value, shape: tuple[int, ...], d: int) -> Operation | None:
    """A value from outside the computation that a strip can have its own copy of."""
    op = defining_op(v)
    if op is not None and isinstance(v.type, TileType) and v.type.shape == shape and (
            op.name == "constant" and splat_value(v) is not None or
            op.name == "broadcast" and op.operands[0].type.shape[d] == 1):
        return op
    return None


def runs_on_strips(op: Operation, shape: tuple[int, ...], d: int, uses: Uses) -> bool:
    """A load as above, or an elementwise op of the tile's shape."""
    if op.name == "load_view_tko":
        return is_strippable_access(op, shape, d, uses)
    return "elementwise" in traits(op) and op.results[0].type.shape == shape


def computation(root: Operation, uses: Uses) -> Computation | None:
    """The computation ending at ``root`` (a store or a reduce), or None."""
    if root.name not in ("store_view_tko", "reduce"):
        return None
    shape = root.operands[0].type.shape
    cut = choose_cut(root, shape)
    if cut is None or not is_strippable_root(root, shape, cut[0], uses):
        return None
    d = cut[0]
    members, outside = {id(root): root}, {}
    pending = list(root.operands if root.name == "reduce" else root.operands[:1])
    while pending:  # the stores' and loads' views and indices stay as they are
        op = defining_op(pending.pop())
        if op is not None and id(op) in members:
            continue
        if op is None or op.parent is not root.parent or not runs_on_strips(op, shape, d, uses):
            return None
        members[id(op)] = op
        for operand in op.operands if op.name != "load_view_tko" else ():
            remade = remade_outside(operand, shape, d)
            if remade is not None:
                outside[id(remade)] = remade
            else:
                pending.append(operand)
    if any(id(user) not in members for op in members.values() if op is not root
           for result in op.results for user in uses.get(result, [])):
        return None
    block_order = {id(op): i for i, op in enumerate(root.parent.ops)}
    ops = sorted(members.values(), key=lambda op: block_order[id(op)])
    return Computation(ops, shape, cut, list(outside.values()))
