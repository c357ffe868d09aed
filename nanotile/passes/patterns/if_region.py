"""if's folder and the patterns that keep one branch or drop one: cuda-tile's IfOp::fold,
RemoveStaticCondition, MoveTerminatorToParent and RemoveEmptyElseBranch.

A branch kept in place of the ``if`` may end in ``return``, ``continue`` or ``break``
(cuda-tile's additions to MLIR's scf.if patterns): then nothing after the ``if`` in its
block can run, and it goes too.
"""

from __future__ import annotations

from ...ir.core import Operation, Value
from .common import constant_bool, defined_by, is_true, leaves_parent, terminator
from .rewriter import Rewriter


def replace_with_region(rw: Rewriter, op: Operation, region: int) -> bool:
    """Put the ops of ``op``'s region ``region`` in its place (replaceOpWithRegion): the
    values a final yield gives replace the results; another final terminator ends the
    block there."""
    block = op.regions[region].blocks[0]
    last = block.ops[-1]
    rw.inline_before(block, op)
    if last.name == "yield":
        rw.replace_op(op, list(last.operands))
        rw.erase_op(last)
    else:
        rw.erase_from(op)
    return True


def fold_if(op: Operation, rw: Rewriter) -> list[Value] | None:
    """if (xori c, true) then A else B => if c then B else A (in place)."""
    if not op.regions[1].blocks:
        return None
    negation = defined_by(op.operands[0], "xori")
    if not negation or not is_true(negation.operands[1]):
        return None
    rw.set_operands(op, [negation.operands[0]])
    then, otherwise = op.regions
    then.blocks, otherwise.blocks = otherwise.blocks, then.blocks
    for region in op.regions:
        for block in region.blocks:
            block.parent = region
    return op.results


def remove_static_condition(op: Operation, rw: Rewriter) -> bool:
    """if true => its then branch; if false => its else branch, or nothing."""
    truth = constant_bool(op.operands[0])
    if truth is None:
        return False
    if truth:
        return replace_with_region(rw, op, 0)
    if op.regions[1].blocks:
        return replace_with_region(rw, op, 1)
    rw.erase_op(op)
    return True


def move_terminator_to_parent(op: Operation, rw: Rewriter) -> bool:
    """if c {A; return} else {B; return} => if c {A; return}; B; return: when both
    branches leave, the else branch can follow the if instead of what did."""
    if not op.regions[1].blocks:
        return False
    if not (leaves_parent(terminator(op, 0)) and leaves_parent(terminator(op, 1))):
        return False
    kept = rw.create("if", [op.operands[0]], [], before=op, regions=2)
    rw.take_region(op, 0, kept, 0)
    return replace_with_region(rw, op, 1)


def remove_empty_else(op: Operation, rw: Rewriter) -> bool:
    """if c {A} else {yield} => if c {A}, for an if without results."""
    otherwise = op.regions[1].blocks
    if op.results or not otherwise or len(otherwise[0].ops) != 1:
        return False
    if leaves_parent(terminator(op, 1)):
        return False
    bare = rw.create("if", list(op.operands), [], before=op, regions=2,
                     attributes=dict(op.attributes))
    rw.take_region(op, 0, bare, 0)
    rw.erase_op(op)
    return True
