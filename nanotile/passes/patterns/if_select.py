"""The if patterns about the values an if yields: cuda-tile's RemoveUnusedResults,
ReplaceYieldWithValue and ConvertToSelect (MLIR's scf.if patterns, where a branch may
also end in return, continue or break: it yields nothing, and the values the other
branch yields are the if's results whenever they are used)."""

from __future__ import annotations

from ...ir.core import Operation, Region, Value
from ...ir.types import TileType
from .common import constant_bool, negate, select_of, terminator
from .rewriter import Rewriter


def _yields(op: Operation | None) -> bool:
    return op is not None and op.name == "yield"


def _region_of(v: Value) -> Region | None:
    block = v.owner if v.is_block_argument else getattr(v.owner, "parent", None)
    return block.parent if block is not None else None


def remove_unused_results(op: Operation, rw: Rewriter) -> bool:
    """An if some of whose results are unused => an if without them."""
    ends = terminator(op, 0), terminator(op, 1)
    if not op.results or not any(map(_yields, ends)):
        return False
    used = [r for r in op.results if rw.used(r)]
    if len(used) == len(op.results):
        return False
    smaller = rw.create("if", list(op.operands), [r.type for r in used], before=op, regions=2)
    for index in (0, 1):
        block = rw.add_block(smaller, index)
        rw.merge(op.regions[index].blocks[0], block)
        end = block.ops[-1]
        if end.name == "yield":
            rw.set_operands(end, [end.operands[r.index] for r in used])
    for old, new in zip(used, smaller.results):
        rw.replace_all_uses(old, new)
    rw.erase_op(op)
    return True


def replace_yield_with_value(op: Operation, rw: Rewriter) -> bool:
    """A result both branches yield the same value for is that value; one yielded as
    true/false is the condition, as false/true its negation (an i1 result of the
    condition's type: cuda-tile also takes a shaped i1 result, which the condition
    could not replace)."""
    ends = terminator(op, 0), terminator(op, 1)
    if not op.results or not all(map(_yields, ends)):
        return False
    cond = op.operands[0]
    changed = False
    for a, b, result in zip(ends[0].operands, ends[1].operands, op.results):
        if not rw.used(result):
            continue
        if a is b:
            rw.replace_all_uses(result, a)
            changed = True
            continue
        picks = constant_bool(a), constant_bool(b)
        if result.type != cond.type or picks not in ((False, True), (True, False)):
            continue
        rw.replace_all_uses(result, cond if picks[0] else negate(rw, cond, op))
        changed = True
    return changed


def convert_to_select(op: Operation, rw: Rewriter) -> bool:
    """A result yielded from values defined outside the if => a select of them (or the
    value, when it is the same on both sides); the if keeps the other results. Tiles
    only: a token cannot be selected."""
    ends = terminator(op, 0), terminator(op, 1)
    if not op.results or not any(map(_yields, ends)):
        return False
    # a branch that leaves yields nothing: take the other branch's values for it
    true_end = ends[0] if _yields(ends[0]) else ends[1]
    false_end = ends[1] if _yields(ends[1]) else ends[0]
    pairs = list(zip(true_end.operands, false_end.operands))
    if not all(isinstance(r.type, TileType) for r in op.results):
        return False
    true_region, false_region = true_end.parent.parent, false_end.parent.parent
    inside = [_region_of(a) is true_region or _region_of(b) is false_region
              for a, b in pairs]
    if all(inside):
        return False
    cond = op.operands[0]
    kept = rw.create("if", [cond], [a.type for (a, _), k in zip(pairs, inside) if k],
                     before=op, regions=2)
    rw.take_region(op, 0, kept, 0)
    rw.take_region(op, 1, kept, 1)
    results: list[Value] = []
    true_kept: list[Value] = []
    false_kept: list[Value] = []
    for (a, b), k in zip(pairs, inside):
        if k:
            results.append(kept.results[len(true_kept)])
            true_kept.append(a)
            false_kept.append(b)
        else:
            results.append(a if a is b else select_of(rw, cond, a, b, before=kept))
    for end, values in ((ends[0], true_kept), (ends[1], false_kept)):
        if _yields(end):
            rw.create("yield", values, [], before=end)
            rw.erase_op(end)
    rw.replace_op(op, results)
    return True
