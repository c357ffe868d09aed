"""loop-split: split a ``for`` loop where an ``if`` compares the induction variable with
a loop invariant.  tile -> tile.

cuda-tile's LoopSplit. For ``if (iv > x)`` in ``for iv in (lb to ub, step s)``, the loop
becomes one over ``[lb, min(p, ub))`` running the else branch, then one over
``[max(p, lb), ub)`` running the then branch from the first one's results; ``p = x + 1``
(``x`` for >=; < and <= swap the branches), rounded up to ``lb + k * s`` unless the step
is the constant 1. Each ``if`` on the ``cmpi`` directly in the body is inlined; its other
users get a constant.

As in cuda-tile, the ``cmpi`` must be <, <=, > or >= in the loop's signedness, between
the induction variable and a value defined outside the loop. The threshold (option
``split-threshold``, or ``cuda_tile.loop_split = N`` on the entry, the ``for`` or the
``if``: the nearest wins) is 0: never, 1: always, N: if some ``if`` on the ``cmpi`` has a
branch of N ops or more (terminator aside) or a load, store, mma, reduce, if or for.
Inner loops go first; a loop is split once per run, at its first such ``if`` in
post-order. As cuda-tile's, the split point is computed in the loop's type: wrong near
the type's largest value, and in unsigned loops below ``lb`` for a step not dividing 2^bits
(tests/passes/test_loop_split.py). Unlike cuda-tile, a block argument of the loop is not
invariant (cuda-tile would use it outside the loop).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..ir.core import Block, Module, Operation, Region, Value, make_op
from ..ir.enums import ComparisonPredicate as P
from ..ir.enums import RoundingMode, Signedness
from ..ir.rewrite import clone_op, defining_op, erase, insert_before, make_splat, splat_value
from ..ir.types import I1, TileType
from .base import Pass, PassContext
from .loop_invariant_code_motion import defined_inside

# iv on the right: ``x < iv`` is ``iv > x``
_MIRRORED = {P.less_than: P.greater_than, P.less_than_or_equal: P.greater_than_or_equal,
             P.greater_than: P.less_than, P.greater_than_or_equal: P.less_than_or_equal}
_HEAVY = {"load_ptr_tko", "load_view_tko", "store_ptr_tko", "store_view_tko", "mmaf", "mmai",
          "reduce", "if", "for"}


@dataclass
class Split:
    """Where to split a loop: ``iv <predicate> bound``, tested by ``cmp``."""

    cmp: Operation
    predicate: P
    bound: Value
    ifs: list[Operation]  # the ifs on ``cmp`` directly in the loop body, to inline
    keep_cmp: bool  # ``cmp`` has other users (they get a constant)


def hint(op: Operation) -> int | None:
    """The op's ``cuda_tile.loop_split`` threshold, if it has one."""
    attr = op.attributes.get("loop_split", op.attributes.get("cuda_tile.loop_split"))
    return None if attr is None else int(getattr(attr, "value", attr))


def post_order(block: Block) -> Iterator[Operation]:
    """Ops nested first, as MLIR's walk; ops inserted next to the current one are skipped."""
    for op in list(block.ops):
        for inner in (block for region in op.regions for block in region.blocks):
            yield from post_order(inner)
        yield op


def normalize(loop: Operation, cmp: Operation) -> tuple[P, Value] | None:
    """``cmp`` as ``iv <predicate> bound``, or None."""
    unsigned = bool(loop.attributes.get("unsignedCmp"))
    if (cmp.attributes["signedness"] == Signedness.unsigned) != unsigned:
        return None
    iv = loop.regions[0].block.arguments[0]
    predicate = cmp.attributes["comparison_predicate"]
    lhs, rhs = cmp.operands
    if lhs is iv:
        return predicate, rhs
    if rhs is iv and predicate in _MIRRORED:
        return _MIRRORED[predicate], lhs
    return None


def worth_it(if_op: Operation, threshold: int) -> bool:
    """A branch of ``threshold`` ops or more, or a heavy op (cuda-tile's profitability)."""
    if threshold == 1:
        return True
    ops = [[op for block in region.blocks for op in block.ops] for region in if_op.regions]
    heavy = any(op.name in _HEAVY for branch in ops for op in branch)
    return heavy or max(len(branch) - 1 for branch in ops) >= threshold


def find_split(loop: Operation, if_op: Operation, threshold: int) -> Split | None:
    if threshold == 0:
        return None
    cmp = defining_op(if_op.operands[0])
    normal = normalize(loop, cmp) if cmp is not None and cmp.name == "cmpi" else None
    if normal is None or normal[1] in defined_inside(loop) or normal[0] not in _MIRRORED:
        return None
    condition = cmp.results[0]
    users = [op for op in loop.walk() for v in op.operands if v is condition]
    ifs = [op for op in users if op.name == "if" and op.parent is loop.regions[0].block]
    if not any(worth_it(op, threshold) for op in users if op.name == "if"):
        return None
    return Split(cmp, normal[0], normal[1], ifs, len(ifs) < len(users))


def inline_branch(if_op: Operation, then: bool, into: Block, mapping: dict) -> bool:
    """Copy a branch of ``if_op`` into ``into``; True if it ends the iteration."""
    index = 0 if then else 1
    region = if_op.regions[index] if index < len(if_op.regions) else Region()
    for op in region.block.ops if region.blocks else []:  # an absent else does nothing
        if op.name == "yield":
            mapping.update(zip(if_op.results, (mapping.get(v, v) for v in op.operands)))
            continue
        into.append(clone_op(op, mapping))
        if op.name == "continue":
            return True
    return False


def copy_loop(loop: Operation, split: Split, bounds: tuple[Value, Value],
              inits: list[Value], then: bool) -> Operation:
    """The loop over ``bounds`` with the ``then`` (or else) branch of the split ifs."""
    body, copy = loop.regions[0].block, Block()
    mapping = {arg: copy.add_argument(arg.type, arg.name_hint) for arg in body.arguments}
    for op in body.ops:
        if op is split.cmp:
            if split.keep_cmp:
                known = copy.append(make_splat(then, TileType((), I1)))
                known.location, known.source = op.location, op.source
                mapping[op.results[0]] = known.results[0]
        elif not any(op is i for i in split.ifs):
            copy.append(clone_op(op, mapping))
        elif inline_branch(op, then, copy, mapping):
            break
    attrs = {"unsignedCmp": True} if loop.attributes.get("unsignedCmp") else {}
    new = make_op("for", [*bounds, loop.operands[2], *inits], loop.result_types, attrs,
                  [Region([copy])], [1, 1, 1, len(inits)], loop.location)
    new.source = loop.source
    return insert_before(loop, new)


def split_loop(item: Operation, loop: Operation, split: Split) -> None:
    """Replace ``loop`` by its two halves (cuda-tile's performLoopSplit)."""
    lb, ub, step, *inits = loop.operands
    sign = Signedness.unsigned if loop.attributes.get("unsignedCmp") else Signedness.signed

    def emit(name: str, operands: list[Value], **attrs: object) -> Value:
        op = make_op(name, operands, [step.type], attrs, location=loop.location)
        return insert_before(loop, op).results[0]

    point = split.bound
    if split.predicate in (P.greater_than, P.less_than_or_equal):
        point = emit("addi", [point, insert_before(loop, make_splat(1, step.type)).results[0]])
    if splat_value(step) != 1:  # align the split point on the iterations: lb + k * step
        k = emit("divi", [emit("subi", [point, lb]), step], signedness=sign,
                 rounding=RoundingMode.positive_inf)
        point = emit("addi", [lb, emit("muli", [k, step])])
    first_end = emit("mini", [point, ub], signedness=sign)
    second_start = emit("maxi", [point, lb], signedness=sign)
    then_second = split.predicate in (P.greater_than, P.greater_than_or_equal)
    first = copy_loop(loop, split, (lb, first_end), inits, not then_second)
    second = copy_loop(loop, split, (second_start, ub), first.results, then_second)
    mapping = dict(zip(loop.results, second.results))
    for op in item.walk():
        op.operands = [mapping.get(v, v) for v in op.operands]
    erase(loop)


def try_split(item: Operation, loop: Operation, threshold: int) -> bool:
    """Split ``loop`` at the first if (post-order) that allows it; True if done."""
    for_hint = hint(loop)
    for op in post_order(loop.regions[0].block):
        if op.name != "if":
            continue
        own = next((h for h in (hint(op), for_hint) if h is not None), threshold)
        split = find_split(loop, op, own)
        if split is not None:
            split_loop(item, loop, split)
            return True
    return False


@dataclass(frozen=True)
class LoopSplit(Pass):
    """Split a for loop where an if compares its induction variable with an invariant."""

    name = "loop-split"
    split_threshold: int = 1  # 0: never split, 1: always, N: a branch of N ops or more

    def apply(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        for item in module.items:
            entry_hint = hint(item)
            threshold = self.split_threshold if entry_hint is None else entry_hint
            for op in [op for region in item.regions for op in post_order(region.block)]:
                if op.name == "for" and op.parent is not None:
                    changed |= try_split(item, op, threshold)
        return changed
