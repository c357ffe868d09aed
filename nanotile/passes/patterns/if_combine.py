"""The if patterns that make one if of two: cuda-tile's CombineIfs (two ifs in a row on
the same condition, or on a condition and its negation) and CombineNestedIfs (an if
whose then branch only holds another if: one if on both conditions)."""

from __future__ import annotations

from ...ir.core import Block, Operation, Region, Value
from ...ir.rewrite import defining_op, parent_op
from ...ir.types import TileType
from .common import defined_by, is_true, leaves_parent, select_of, terminator
from .rewriter import Rewriter


def _negates(v: Value, of: Value) -> bool:
    negation = defined_by(v, "xori")
    return bool(negation) and is_true(negation.operands[1]) and negation.operands[0] is of


def _within(op: Operation, region: Region) -> bool:
    while op is not None and op.parent is not None:
        if op.parent.parent is region:
            return True
        op = parent_op(op)
    return False


def _append_branch(rw: Rewriter, source: Block, dest: Block) -> None:
    """``source``'s ops after ``dest``'s; two final yields become one yielding both."""
    first = dest.ops[-1] if dest.ops[-1].name == "yield" else None
    second = source.ops[-1] if source.ops[-1].name == "yield" else None
    rw.merge(source, dest)
    if first and second:
        rw.append(dest, "yield", [*first.operands, *second.operands], like=second)
    for end in (first, second):
        if end:
            rw.erase_op(end)


def combine_ifs(second: Operation, rw: Rewriter) -> bool:
    """if c {A} else {B}; if c {C} else {D} => if c {A; C} else {B; D}"""
    block = second.parent
    at = block.ops.index(second)
    first = block.ops[at - 1] if at else None
    if first is None or first.name != "if":
        return False
    cond = first.operands[0]
    then, otherwise = (r.blocks[0] if r.blocks else None for r in second.regions)
    next_then = next_else = None  # second's blocks to run after first's then / else
    if second.operands[0] is cond:
        next_then, next_else = then, otherwise
    if _negates(second.operands[0], cond) or _negates(cond, second.operands[0]):
        next_then, next_else = otherwise, then
    if leaves_parent(terminator(first, 0)):
        next_then = None
    if leaves_parent(terminator(first, 1)):
        next_else = None
    if next_then is None and next_else is None:
        return False
    for index, branch in ((0, next_then), (1, next_else)):
        if branch is None or not first.regions[index].blocks:
            continue
        values = terminator(first, index).operands
        for result, value in zip(first.results, values):
            for user in [u for u in rw.users.get(result, []) if _within(u, branch.parent)]:
                rw.set_operands(user, [value if v is result else v for v in user.operands])
    types = [r.type for r in first.results + second.results]
    both = rw.create("if", [cond], types, before=second, regions=2)
    rw.take_region(first, 0, both, 0)
    if next_then is not None:
        _append_branch(rw, next_then, both.regions[0].blocks[-1])
    rw.take_region(first, 1, both, 1)
    if next_else is not None and not both.regions[1].blocks:
        rw.take_region(second, second.regions.index(next_else.parent), both, 1)
    elif next_else is not None:
        _append_branch(rw, next_else, both.regions[1].blocks[-1])
    count = len(first.results)
    rw.replace_op(first, both.results[:count])
    rw.replace_op(second, both.results[count:])
    return True


def combine_nested_ifs(op: Operation, rw: Rewriter) -> bool:
    """if a {if b {A}} => if (andi a, b) {A}; a value the outer if yields from outside
    becomes a select on a."""
    then = op.regions[0].blocks[0]
    otherwise = op.regions[1].blocks[0] if op.regions[1].blocks else None
    if len(then.ops) != 2 or (otherwise and len(otherwise.ops) != 1):
        return False
    inner = then.ops[0]
    if inner.name != "if":
        return False
    inner_else = inner.regions[1].blocks[0] if inner.regions[1].blocks else None
    if inner_else and len(inner_else.ops) != 1:
        return False
    if any(leaves_parent(end) for end in (then.ops[-1], terminator(op, 1), terminator(inner, 1))):
        return False
    if leaves_parent(terminator(inner, 0)) and (otherwise or inner_else):
        return False
    then_values = list(then.ops[-1].operands)
    else_values = list(otherwise.ops[-1].operands) if otherwise else []
    to_select = []
    for i, value in enumerate(then_values):
        if defining_op(value) is inner:
            if inner_else is None or inner_else.ops[-1].operands[value.index] \
                    is not else_values[i]:
                return False
            then_values[i] = terminator(inner, 0).operands[value.index]
            continue
        if value.owner is not None and getattr(value.owner, "parent", None) is then:
            return False
        if not isinstance(value.type, TileType):
            return False
        to_select.append(i)
    outer_cond, inner_cond = op.operands[0], inner.operands[0]
    both = rw.create("andi", [outer_cond, inner_cond], [outer_cond.type], before=op)
    merged = rw.create("if", [both.results[0]], [r.type for r in op.results], before=op,
                       regions=2)
    block = rw.add_block(merged, 0)
    results = list(merged.results)
    for i in to_select:
        results[i] = select_of(rw, outer_cond, then_values[i], else_values[i], before=merged)
    rw.merge(inner.regions[0].blocks[0], block)
    end = block.ops[-1]
    if end.name == "yield":
        rw.create("yield", then_values, [], before=end)
        rw.erase_op(end)
    if else_values:
        rw.append(rw.add_block(merged, 1), "yield", else_values, like=op)
    rw.replace_op(op, results)
    return True
