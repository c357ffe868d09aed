"""fold-static-if: replace an ``if`` on a constant condition by the branch it takes.
tile -> tile.

When the condition is a constant (a splat i1, e.g. after fold-constants or a comparison
simplify-grid-queries decided), the ops of the taken region move to just before the
``if`` and the values its ``yield`` returns replace the ``if``'s results. A region that
leaves by another terminator (``continue``, ``break``, ``return`` inside the branch) is
left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Block, Module, Operation, Value
from ..ir.rewrite import all_ops, blocks_of, erase, insert_before, replace_uses, splat_value
from .base import Pass, PassContext


def taken_block(op: Operation) -> Block | None:
    """The block the ``if`` will run, if its condition is a constant."""
    condition = splat_value(op.operands[0])
    blocks = blocks_of(op)
    if condition is None or len(blocks) != 2:
        return None
    block = blocks[0] if bool(condition) else blocks[1]
    if not block.ops:  # an empty branch (implicit yield of nothing)
        return block if not op.results else None
    return block if block.ops[-1].name == "yield" else None


def inline(op: Operation, mapping: dict[Value, Value]) -> bool:
    """Inline the taken branch of ``op``. True if done."""
    block = taken_block(op)
    if block is None:
        return False
    body = block.ops[:-1] if block.ops else []
    for inner in body:
        inner.parent = None
        insert_before(op, inner)
    if block.ops:
        mapping.update(zip(op.results, block.ops[-1].operands))
    erase(op)
    return True


@dataclass(frozen=True)
class FoldStaticIf(Pass):
    """Inline the taken branch of an if whose condition is a constant."""

    name = "fold-static-if"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        mapping: dict[Value, Value] = {}
        changed = False
        for op in list(all_ops(module)):
            op.operands = [mapping.get(v, v) for v in op.operands]
            if op.name == "if" and op.parent is not None:
                changed |= inline(op, mapping)
        replace_uses(module, mapping)
        return changed
