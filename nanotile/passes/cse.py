"""cse: common subexpression elimination, with constant uniquing.  tile -> tile (kept).

Two pure ops with the same name, attributes, result types and operands compute the same
value; the later one is replaced by the earlier one when the earlier one dominates it
(same block, or an enclosing block). Operands of commutative ops are compared as a set.
Constants are first moved to the top of their entry body (``hoist-constants``), so equal
constants anywhere in a kernel become one. Ops with regions (reduce, scan, if...) are
left alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..ir.core import Block, Module, Operation, Value
from ..ir.rewrite import attr_key, blocks_of, bodies, erase, replace_uses, traits
from .base import Pass, PassContext

# Bodies of these ops only use their own arguments: nothing is merged across their edge.
_SELF_CONTAINED = {"reduce", "scan"}
_COMMUTATIVE = {"addi", "muli", "andi", "ori", "xori", "maxi", "mini", "mulhii",
                "addf", "mulf", "maxf", "minf"}


def cse_key(op: Operation) -> tuple[Any, ...] | None:
    """What makes two ops interchangeable, or None if ``op`` must not be merged."""
    if op.regions or not op.results or "pure" not in traits(op):
        return None
    base = attr_key(op)
    if base is None:
        return None
    operands: tuple[Any, ...] = tuple(id(v) for v in op.operands)
    if op.name in _COMMUTATIVE:
        operands = tuple(sorted(operands))
    return base + (operands,)


def hoist_constants(module: Module) -> bool:
    """Move every ``constant`` to the top of its entry body, keeping their order."""
    moved = False
    for item in module.items:
        if not item.regions:
            continue
        body = item.regions[0].block
        constants = [op for op in all_ops_of(item) if op.name == "constant"]
        if body.ops[:len(constants)] == constants:
            continue
        for op in constants:
            erase(op)
        for op in constants:
            op.parent = body
        body.ops[0:0] = constants
        moved = True
    return moved


def all_ops_of(op: Operation) -> list[Operation]:
    """Ops nested in ``op``, not entering reduce/scan bodies (kept self-contained)."""
    out = []
    for inner in (inner for block in blocks_of(op) for inner in block.ops):
        out.append(inner)
        if inner.name not in _SELF_CONTAINED:
            out.extend(all_ops_of(inner))
    return out


@dataclass(frozen=True)
class CommonSubexpressionElimination(Pass):
    """Merge identical pure ops (equal constants included) into the first one."""

    name = "cse"
    hoist_constants: bool = True  # move constants to the top of the kernel first

    def apply(self, module: Module, ctx: PassContext) -> bool:
        changed = hoist_constants(module) if self.hoist_constants else False
        mapping: dict[Value, Value] = {}
        for body in bodies(module):
            self._visit(body, {}, mapping)
        replace_uses(module, mapping)
        return changed or bool(mapping)

    def key(self, op: Operation) -> tuple[Any, ...] | None:
        """What makes two ops interchangeable here (None: never merged)."""
        return cse_key(op)

    def _visit(self, block: Block, known: dict[Any, Operation],
               mapping: dict[Value, Value]) -> None:
        """Merge within ``block``; ``known`` holds the ops of the enclosing scopes."""
        scope = dict(known)
        for op in list(block.ops):
            # operands may name values merged earlier: compare against their survivors
            op.operands = [_resolve(v, mapping) for v in op.operands]
            key = self.key(op)
            if key is not None and key in scope:
                mapping.update(zip(op.results, scope[key].results))
                erase(op)
                continue
            if key is not None:
                scope[key] = op
            inherited = {} if op.name in _SELF_CONTAINED else scope
            for inner in blocks_of(op):
                self._visit(inner, inherited, mapping)


def _resolve(v: Value, mapping: dict[Value, Value]) -> Value:
    while v in mapping:
        v = mapping[v]
    return v
