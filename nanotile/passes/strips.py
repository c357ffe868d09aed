"""Which computations strip-mine (nanotile/passes/strip_mine.py) can run strip by strip;
with the view accesses that nothing orders and their resized views, which split-accesses
uses too.

A computation ends at its roots: stores (``store_view_tko``, relaxed
``atomic_red_view_tko``) of tiles, or one ``reduce`` along the dimension its strips cut.
Everything it reads of those tiles' shapes comes from weak partition-view loads through
elementwise ops, reshapes, one-dimensional iotas, reduces along another dimension and
``for`` loops that carry such tiles, each in the roots' block (or the body of such a
loop) and used only by the computation; the rest are splat constants and broadcasts of
extent 1 along the cut dimension, which a strip can have its own copy of (``outside``).
Every tile shape in it is cut along one dimension (``Cut.dims``) into the same number of
strips: the shape's strip is the part of each one the same strip computes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..ir.core import Operation, Value, make_op
from ..ir.enums import MemoryOrderingSemantics
from ..ir.rewrite import defining_op, insert_before, splat_number, traits
from ..ir.types import I32, PartitionViewType, TileType

STRIP_ELEMENTS = 2048  # 16 per thread of a 4-warp CTA, as tileiras' copy loops load
INDEX = TileType((), I32)  # the type of the loop's counter and of the indices it moves
Uses = dict[Value, list[Operation]]
Shape = tuple[int, ...]


@dataclass
class Cut:
    """How a computation is cut into ``count`` strips: each tile of shape ``s`` in it
    along dimension ``dims[s]``."""

    count: int
    dims: dict[Shape, int]

    def strip(self, shape: Shape) -> Shape | None:
        """The part of a tile of ``shape`` that one strip computes; None where no strip
        of ``shape`` is one."""
        d = self.dims.get(shape)
        return None if d is None else (*shape[:d], shape[d] // self.count, *shape[d + 1:])


@dataclass
class Computation:
    """What one strip loop computes: its ops in block order (those in the bodies of its
    loops go with their loop), with its roots; the loop goes before the last root."""

    ops: list[Operation]
    roots: list[Operation]
    cut: Cut
    outside: list[Operation]  # constants and broadcasts it reads, remade per strip

    @property
    def root(self) -> Operation:
        return self.roots[-1]


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


def preferred_dims(root: Operation, shape: Shape) -> list[int]:
    """The dimensions to cut a root's tile along, best first. A reduce's strips cut the
    dimension it reduces; a store's, the dimensions not contiguous in memory (stride 1)
    first, so each strip still moves runs of consecutive elements (vectors)."""
    if root.name == "reduce":
        return [root.attributes["dim"]]
    view = root.operands[view_operand(root)].type
    strides = view.tensor_view.strides if isinstance(view, PartitionViewType) else ()
    dims = [d for d, extent in enumerate(shape) if extent > 1]
    return sorted(dims, key=lambda d: d < len(strides) and strides[d] == 1)


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


def is_strippable_access(op: Operation, dims: dict[Shape, int], uses: Uses) -> bool:
    """An unordered view access (above) with an i32 index along the dimension its tile
    is cut along."""
    at = view_operand(op)
    d = dims.get(op.operands[at].type.tile_shape)
    return (is_unordered_view_access(op, uses) and d is not None
            and op.operands[at + 1 + d].type == INDEX)


def is_strippable_reduce_root(op: Operation) -> bool:
    """A reduce whose body is elementwise ops on its own values only (so it can also
    combine whole strips, element by element)."""
    block = op.regions[0].blocks[0]
    return (len({v.type.shape for v in op.operands}) == 1
            and all("elementwise" in traits(inner) for inner in block.ops[:-1])
            and all(v.owner is block or getattr(v.owner, "parent", None) is block
                    for inner in block.ops for v in inner.operands))


class Walk:
    """The ops of the computation ending at some roots, found from the roots back: which
    are members, which are outside, and each tile shape's cut dimension.

    The walk is depth first, operands in order, with a stack of its own rather than
    Python's (a chain of thousands of ops is as deep): ``value`` and ``operand`` answer
    False to reject the computation, or the steps that take what they found further."""

    def __init__(self, uses: Uses) -> None:
        self.uses, self.dims = uses, {}
        self.members: dict[int, Operation] = {}
        self.outside: dict[int, Operation] = {}
        self.blocks: list[object] = []  # where members may be: the roots', loop bodies

    def assign(self, shape: Shape, d: int) -> bool:
        """Cut tiles of ``shape`` along ``d``; False where they are cut along another."""
        return 0 <= d < len(shape) and self.dims.setdefault(shape, d) == d

    def root(self, root: Operation, d: int) -> bool:
        self.members[id(root)] = root
        self.blocks.append(root.parent)
        inputs = strip_inputs(root)
        if not self.assign(inputs[0].type.shape, d):
            return False
        fits = is_strippable_reduce_root(root) if root.name == "reduce" else \
            is_strippable_access(root, self.dims, self.uses)
        return fits and self.run([(self.value, v) for v in inputs])

    def run(self, steps: list[tuple]) -> bool:
        """Take ``steps`` (a method and its arguments), and the steps they lead to, depth
        first; False at the first rejection."""
        stack = steps[::-1]
        while stack:
            method, *arguments = stack.pop()
            found = method(*arguments)
            if found is False:
                return False
            stack.extend(found[::-1])
        return True

    def value(self, v: Value) -> list[tuple] | bool:
        """Takes the op making ``v`` (a tile of a shape with a cut dimension) in, or
        rejects the computation."""
        if v.is_block_argument:  # carried by a member loop (not its counter)
            return [] if v.owner in self.blocks[1:] and v.index > 0 else False
        op = defining_op(v)
        if id(op) in self.members:
            return []
        if op.parent not in self.blocks:
            return False
        self.members[id(op)] = op
        d = self.dims[v.type.shape]
        if op.name == "load_view_tko":
            return [] if is_strippable_access(op, self.dims, self.uses) else False
        if op.name == "iota":
            return [] if d == 0 and v.type.element == I32 and len(v.type.shape) == 1 \
                else False
        if op.name == "for":
            return self.loop(op, d)
        if op.name == "reduce":  # along another dimension: each strip reduces its part
            d += op.attributes["dim"] <= d
        elif op.name == "reshape" and d != 0 or \
                op.name != "reshape" and "elementwise" not in traits(op):
            return False  # a reshape keeps the elements' row-major order: cut at 0 only
        return [(self.operand, u, d) for u in op.operands if isinstance(u.type, TileType)]

    def operand(self, u: Value, d: int) -> list[tuple] | bool:
        """An operand of a member, cut along ``d``: remade outside, or a member."""
        if not self.assign(u.type.shape, d):
            return False
        made = defining_op(u)
        if made is not None and (
                made.name == "constant" and splat_number(u) is not None and
                made.parent in self.blocks or
                made.name == "broadcast" and made.operands[0].type.shape[d] == 1 and
                made.parent is self.blocks[0]):
            self.outside[id(made)] = made
            return []
        return [(self.value, u)]

    def loop(self, op: Operation, d: int) -> list[tuple] | bool:
        """A ``for`` carrying tiles of one type (cut along ``d``): its initial values and
        what its body continues with are taken in; its body's ops must all be."""
        body = op.regions[0].blocks[0]
        if len({r.type for r in op.results}) != 1 or body.terminator.name != "continue":
            return False
        self.blocks.append(body)
        self.members[id(body.terminator)] = body.terminator
        inits = op.operand_groups()[3]
        return [(self.operand, v, d) for v in (*inits, *body.terminator.operands)]

    def is_closed(self, roots: list[Operation]) -> bool:
        """The members' results are used by members only (but the roots'), and every op
        of a member loop's body is a member."""
        members, ends = self.members, {id(root) for root in roots}
        return all(id(user) in members for key, op in members.items() if key not in ends
                   for result in op.results for user in self.uses.get(result, [])) and \
            all(id(inner) in members for body in self.blocks[1:] for inner in body.ops[:-1])


def cut_count(dims: dict[Shape, int]) -> int | None:
    """How many strips leave each at most STRIP_ELEMENTS elements of the largest tile;
    None where that is under two or does not divide every cut dimension."""
    count = max(math.prod(shape) for shape in dims) // STRIP_ELEMENTS
    if count < 2 or any(shape[d] % count for shape, d in dims.items()):
        return None
    return count


def walk_root(root: Operation, uses: Uses) -> Walk | None:
    """The walk back from ``root`` along the first of its preferred dimensions that
    works, or None."""
    inputs = strip_inputs(root)
    if not inputs or not isinstance(inputs[0].type, TileType):
        return None
    for d in preferred_dims(root, inputs[0].type.shape):
        walk = Walk(uses)
        if walk.root(root, d) and cut_count(walk.dims) is not None:
            return walk
    return None


def computations(roots: list[Operation], uses: Uses) -> list[Computation]:
    """The computations ending at ``roots``: reduces first, each by itself in block
    order; then stores, the walks back from those that share ops merged into one. None
    takes an op of a computation found before it."""
    found: list[Computation] = []
    taken: set[int] = set()

    def accept(group: list[tuple[Operation, Walk]]) -> None:
        merged = merged_computation(group)
        if merged is not None:
            found.append(merged)
            taken.update(key for _, walk in group for key in walk.members)

    walks = [(root, walk_root(root, uses)) for root in roots]
    for root, walk in walks:
        if root.name == "reduce" and walk is not None and not taken.intersection(walk.members):
            accept([(root, walk)])
    groups: list[list[tuple[Operation, Walk]]] = []
    for root, walk in walks:
        if root.name == "reduce" or walk is None or taken.intersection(walk.members):
            continue
        shared = [g for g in groups if any(k in w.members for _, w in g for k in walk.members)]
        groups = [g for g in groups if g not in shared] + \
            [[item for g in shared for item in g] + [(root, walk)]]
    for group in groups:
        accept(group)
    return found


def merged_computation(group: list[tuple[Operation, Walk]]) -> Computation | None:
    """One computation of the walks in ``group``, or None where they disagree (or are
    more than one reduce)."""
    walk, roots = Walk(group[0][1].uses), [root for root, _ in group]
    for _, part in group:
        if any(walk.dims.setdefault(shape, d) != d for shape, d in part.dims.items()):
            return None
        walk.members |= part.members
        walk.outside |= part.outside
        walk.blocks += [block for block in part.blocks if block not in walk.blocks]
    count = cut_count(walk.dims)
    if count is None or not walk.is_closed(roots) or len(roots) > 1 and (
            any(root.name == "reduce" for root in roots) or
            any(root.parent is not roots[0].parent for root in roots)):
        return None
    order = {id(op): i for i, op in enumerate(roots[0].parent.ops)}
    ops = sorted((op for op in walk.members.values() if id(op) in order),
                 key=lambda op: order[id(op)])
    roots.sort(key=lambda op: order[id(op)])
    return Computation(ops, roots, Cut(count, walk.dims), list(walk.outside.values()))
