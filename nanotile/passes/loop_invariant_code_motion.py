"""loop-invariant-code-motion: hoist invariant pure ops out of ``for`` bodies.  tile -> tile.

An op at the top level of a ``for`` body whose operands are all defined outside the loop
computes the same value on every iteration; it is moved just before the ``for``. Only
pure ops without regions move, and integer division/remainder only by a non-zero
constant (a loop that runs zero times must not start trapping). Inner loops are treated
first, so an op can leave several nested loops in one run.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Module, Operation, Value
from ..ir.rewrite import all_ops, blocks_of, erase, insert_before, is_pure, splat_number
from .base import Pass, PassContext

_MAY_TRAP = {"divi", "remi"}


def movable(op: Operation) -> bool:
    """Pure, region-free, and safe to run even when the loop body would not run."""
    if op.regions or not is_pure(op):
        return False
    if op.name in _MAY_TRAP:
        divisor = splat_number(op.operands[1])
        return divisor is not None and int(divisor) != 0
    return True


def defined_inside(loop: Operation) -> set[Value]:
    """Every value defined in the loop's body (block arguments and nested results)."""
    inside: set[Value] = set()
    for op in loop.walk():
        inside.update(arg for block in blocks_of(op) for arg in block.arguments)
        if op is not loop:
            inside.update(op.results)
    return inside


def hoist_from(loop: Operation) -> int:
    """Move the invariant ops of one ``for`` before it; returns how many moved."""
    inside = defined_inside(loop)
    moved = 0
    for op in list(loop.regions[0].block.ops):
        if not movable(op) or any(v in inside for v in op.operands):
            continue
        erase(op)
        insert_before(loop, op)
        inside.difference_update(op.results)
        moved += 1
    return moved


@dataclass(frozen=True)
class LoopInvariantCodeMotion(Pass):
    """Hoist pure ops that do not depend on the loop out of for loops."""

    name = "loop-invariant-code-motion"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        loops = [op for op in all_ops(module) if op.name == "for"]
        moved = 0
        for loop in reversed(loops):  # inner loops come later in textual order
            moved += hoist_from(loop)
        return moved > 0
