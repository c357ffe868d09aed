"""SSA dominance: every operand is defined before its use, in the same block or in a
block that encloses it. Tile IR regions have one block and entries are isolated from
above, so a value is visible in the rest of its block and in regions nested there."""

from __future__ import annotations

from nanotile.ir.core import Block, Module, Operation, Value

from .engine import fail


def check_dominance(module: Module) -> None:
    # Items are isolated from above; test inputs may also hold bare ops at the top level
    # (MLIR's implicit module), which see the results of the ops before them.
    top: set[int] = set()
    for item in module.items:
        if item.name in ("entry", "testing$func"):
            for region in item.regions:
                for block in region.blocks:
                    _check_block(block, set())
        else:
            _check_op(item, top)
            top.update(id(r) for r in item.results)


def _name(v: Value) -> str:
    return f"%{v.name_hint}" if v.name_hint else "an operand"


def _check_block(block: Block, visible: set[int]) -> None:
    scope = set(visible)
    scope.update(id(a) for a in block.arguments)
    for op in block.ops:
        _check_op(op, scope)
        scope.update(id(r) for r in op.results)


def _check_op(op: Operation, scope: set[int]) -> None:
    for i, v in enumerate(op.operands):
        if id(v) not in scope:
            raise fail(f"operand #{i} does not dominate this use", at=op,
                       notes=[]) from None
    for region in op.regions:
        for block in region.blocks:
            _check_block(block, scope)
