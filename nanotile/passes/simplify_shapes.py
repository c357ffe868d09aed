"""simplify-shapes: remove shape ops that do nothing and collapse chains.  tile -> tile.

- ``reshape``, ``broadcast`` or ``permute`` whose result type is its operand's type (for
  ``permute``: the identity permutation) is its operand.
- ``reshape (reshape x)`` is one ``reshape x``; ``broadcast (broadcast x)`` is one
  ``broadcast x`` (a dimension grown from 1 can only have come from 1).
The intermediate ops are left for dce when nothing else uses them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Module, Operation, Value
from ..ir.rewrite import all_ops, defining_op, erase, replace_uses
from .base import Pass, PassContext

_SHAPE_OPS = ("reshape", "broadcast", "permute")


def is_identity(op: Operation) -> bool:
    """The op returns its operand unchanged."""
    if op.operands[0].type != op.results[0].type:
        return False
    permutation = op.attributes.get("permutation")
    return op.name != "permute" or tuple(permutation) == tuple(range(len(permutation)))


def collapse_chain(op: Operation) -> bool:
    """``reshape (reshape x)`` -> ``reshape x`` (same for broadcast). True if changed."""
    inner = defining_op(op.operands[0])
    if inner is None or inner.name != op.name or op.name == "permute":
        return False
    op.operands = [inner.operands[0]]
    return True


@dataclass(frozen=True)
class SimplifyShapes(Pass):
    """Drop no-op reshape/broadcast/permute and merge reshape or broadcast chains."""

    name = "simplify-shapes"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        mapping: dict[Value, Value] = {}
        for op in list(all_ops(module)):
            if op.name not in _SHAPE_OPS:
                continue
            op.operands = [mapping.get(v, v) for v in op.operands]
            while collapse_chain(op):
                changed = True
            if is_identity(op):
                mapping[op.results[0]] = op.operands[0]
                erase(op)
        replace_uses(module, mapping)
        return changed or bool(mapping)
