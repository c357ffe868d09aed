"""Which computations strip-mine (nanotile/passes/strip_mine.py) can run strip by strip;
with the view accesses that nothing orders and their resized views, which split-accesses
uses too.

A computation ends at a root: a ``store_view_tko`` or a relaxed ``atomic_red_view_tko``
of the tile, or a ``reduce`` of it along the dimension the strips cut. Everything it
reads of the tile's shape comes from weak partition-view loads through elementwise ops,
reshapes and one-dimensional iotas, each in the root's block and used only by the
computation; the rest are splat constants and broadcasts of extent 1 along the cut
dimension, which a strip can have its own copy of (``outside``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..ir.core import Operation, Value, make_op
from ..ir.enums import MemoryOrderingSemantics
from ..ir.rewrite import defining_op, insert_before, splat_value, traits
from ..ir.types import I32, PartitionViewType, TileType

STRIP_ELEMENTS = 2048  # 16 per thread of a 4-warp CTA, as tileiras' copy loops load
INDEX = TileType((), I32)  # the type of the loop's counter and of the indices it moves
Uses = dict[Value, list[Operation]]


@dataclass(frozen=True)
class Cut:
    """How a computation is cut into strips: its root's tile (``shape``) along dimension
    ``d`` into ``count`` strips of extent ``extent``."""

    shape: tuple[int, ...]
    d: int
    extent: int

    @property
    def count(self) -> int:
        return self.shape[self.d] // self.extent

    def strip(self, shape: tuple[int, ...]) -> tuple[int, ...] | None:
        """The strip of a tile of ``shape``: the root's shape cut along ``d``; another
        shape (met through a reshape, which keeps the row-major order of the elements)
        cut along its first dimension into the same ranges of elements, where ``d`` is
        the first dimension too; None where no strip of ``shape`` is one."""
        if shape == self.shape:
            return (*shape[:self.d], self.extent, *shape[self.d + 1:])
        elements, inner = math.prod(self.shape) // self.count, math.prod(shape[1:])
        if self.d != 0 or not shape or elements % inner:
            return None
        return (elements // inner, *shape[1:])


@dataclass
class Computation:
    """What one strip loop computes: its ops in block order, the last being the root."""

    ops: list[Operation]
    cut: Cut
    outside: list[Operation]  # constants and broadcasts it reads, remade per strip

    @property
    def root(self) -> Operation:
        return self.ops[-1]


def strip_cuts(shape: tuple[int, ...]) -> list[Cut]:
    """The cuts that leave strips of at most STRIP_ELEMENTS elements, the outermost
    dimension first; none for a tile under two strips."""
    total = math.prod(shape)
    cuts = [Cut(shape, d, STRIP_ELEMENTS // (total // extent)) for d, extent in enumerate(shape)
            if extent > 1 and total // extent <= STRIP_ELEMENTS]
    return cuts if total >= 2 * STRIP_ELEMENTS else []


def choose_cut(root: Operation, shape: tuple[int, ...]) -> Cut | None:
    """A reduce's strips cut the dimension it reduces; a store's, the outermost dimension
    not contiguous in memory (stride 1) where another is, so each strip still moves runs
    of consecutive elements (vectors) along it."""
    cuts = strip_cuts(shape)
    if root.name == "reduce":
        return next((cut for cut in cuts if cut.d == root.attributes["dim"]), None)
    view = root.operands[view_operand(root)].type
    strides = view.tensor_view.strides if isinstance(view, PartitionViewType) else ()
    return next((cut for cut in cuts if cut.d >= len(strides) or strides[cut.d] != 1),
                cuts[0] if cuts else None)


ACCESSES = ("load_view_tko", "store_view_tko", "atomic_red_view_tko")
ROOTS = ("store_view_tko", "atomic_red_view_tko", "reduce")


def view_operand(op: Operation) -> int:
    """Where a view access has its view (its indices follow)."""
    return 1 if op.name == "store_view_tko" else 0


def strip_inputs(root: Operation) -> list[Value]:
    """The tiles a root takes from its computation: what it stores, or reduces."""
    if root.name == "atomic_red_view_tko":
        return root.operand_groups()[2]
    return root.operands if root.name == "reduce" else root.operands[:1]


def is_unordered_view_access(op: Operation, uses: Uses) -> bool:
    """A view load, store or atomic reduction that nothing orders: weak (an atomic
    reduction relaxed too: each element's update is atomic by itself, in no order with
    the others), through a partition view without a dim_map that a make_partition_view
    made, its result token unused."""
    at = view_operand(op)
    view = op.operands[at].type
    unordered = (MemoryOrderingSemantics.weak, MemoryOrderingSemantics.relaxed) \
        if op.name == "atomic_red_view_tko" else (MemoryOrderingSemantics.weak,)
    return (op.attributes.get("memory_ordering_semantics") in unordered
            and isinstance(view, PartitionViewType) and view.dim_map is None
            and defining_op(op.operands[at]) is not None and not uses.get(op.results[-1]))


def resized_view(anchor: Operation, view: Value, tile_shape: tuple[int, ...]) -> Value:
    """A partition view like ``view`` (same tensor, padding) with tiles of
    ``tile_shape``, made before ``anchor``."""
    original = defining_op(view)
    made = make_op("make_partition_view", [original.operands[0]],
                   [replace(view.type, tile_shape=tile_shape)], dict(original.attributes),
                   location=original.location)
    return insert_before(anchor, made).results[0]


def is_strippable_access(op: Operation, cut: Cut, uses: Uses) -> bool:
    """An unordered view access (above) of a tile that has a strip, with an i32 index
    along ``cut.d``."""
    at = view_operand(op)
    return (is_unordered_view_access(op, uses)
            and cut.strip(op.operands[at].type.tile_shape) is not None
            and op.operands[at + 1 + cut.d].type == INDEX)


def is_strippable_root(op: Operation, cut: Cut, uses: Uses) -> bool:
    """A store as above, or a reduce (along ``cut.d``: choose_cut) whose body is
    elementwise ops on its own values only (so it can also combine whole strips, element
    by element)."""
    if op.name != "reduce":
        return is_strippable_access(op, cut, uses)
    block = op.regions[0].blocks[0]
    return (all(v.type.shape == cut.shape for v in op.operands)
            and all("elementwise" in traits(inner) for inner in block.ops[:-1])
            and all(v.owner is block or getattr(v.owner, "parent", None) is block
                    for inner in block.ops for v in inner.operands))


def remade_outside(v: Value, cut: Cut) -> Operation | None:
    """A value from outside the computation that a strip can have its own copy of."""
    op = defining_op(v)
    if op is not None and isinstance(v.type, TileType) and cut.strip(v.type.shape) and (
            op.name == "constant" and splat_value(v) is not None or
            op.name == "broadcast" and op.operands[0].type.shape[cut.d] == 1):
        return op
    return None


def runs_on_strips(op: Operation, cut: Cut, uses: Uses) -> bool:
    """A load as above; an elementwise op or a reshape between shapes that have strips;
    a one-dimensional i32 iota cut along its dimension (its strip: an iota plus the
    strip's first index)."""
    if op.name == "load_view_tko":
        return is_strippable_access(op, cut, uses)
    shapes = [v.type.shape for v in (*op.operands, *op.results) if isinstance(v.type, TileType)]
    if op.name == "iota":
        return cut.d == 0 and op.results[0].type.element == I32 and \
            cut.strip(shapes[0]) is not None
    return (op.name == "reshape" or "elementwise" in traits(op)) and \
        all(cut.strip(shape) is not None for shape in shapes)


def computation(root: Operation, uses: Uses) -> Computation | None:
    """The computation ending at ``root`` (a store or a reduce), or None."""
    if root.name not in ROOTS:
        return None
    cut = choose_cut(root, strip_inputs(root)[0].type.shape)
    if cut is None or not is_strippable_root(root, cut, uses):
        return None
    members, outside = {id(root): root}, {}
    pending = list(strip_inputs(root))
    while pending:  # the stores' and loads' views and indices stay as they are
        op = defining_op(pending.pop())
        if op is not None and id(op) in members:
            continue
        if op is None or op.parent is not root.parent or not runs_on_strips(op, cut, uses):
            return None
        members[id(op)] = op
        for operand in op.operands if op.name != "load_view_tko" else ():
            remade = remade_outside(operand, cut)
            if remade is not None:
                outside[id(remade)] = remade
            else:
                pending.append(operand)
    if any(id(user) not in members for op in members.values() if op is not root
           for result in op.results for user in uses.get(result, [])):
        return None
    block_order = {id(op): i for i, op in enumerate(root.parent.ops)}
    ops = sorted(members.values(), key=lambda op: block_order[id(op)])
    return Computation(ops, cut, list(outside.values()))
