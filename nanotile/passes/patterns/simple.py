"""The ops with one rule each in cuda-tile: addf's pattern (AddFOp::canonicalize) and
assume's folder (AssumeOp::fold)."""

from __future__ import annotations

from ...ir.core import Operation, Value
from .common import defined_by
from .rewriter import Rewriter


def addf_multiply_first(op: Operation, rw: Rewriter) -> bool:
    """addf x, (mulf y, z) => addf (mulf y, z), x: the product on the left, where the
    fused multiply-add rules look for it (not when both sides are products)."""
    lhs, rhs = op.operands
    if not defined_by(rhs, "mulf") or defined_by(lhs, "mulf"):
        return False
    swapped = rw.create("addf", [rhs, lhs], [op.results[0].type], before=op,
                        attributes=dict(op.attributes))
    rw.replace_op(op, swapped.results)
    return True


def fold_assume(op: Operation, rw: Rewriter) -> list[Value] | None:
    """assume P, (assume P, x) => assume P, x: a predicate said twice in a row."""
    producer = defined_by(op.operands[0], "assume")
    if producer and producer.attributes["predicate"] == op.attributes["predicate"]:
        return producer.results
    return None
