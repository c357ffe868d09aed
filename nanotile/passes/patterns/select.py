"""select's folder and patterns, after cuda-tile's SelectOp::fold (its rules in their
order) and SelectOp::getCanonicalizationPatterns (SelectI1ToNot of
OpsCanonicalization.td, SelectConsts, SelectToExtI)."""

from __future__ import annotations

from ...ir.core import Operation, Value
from ...ir.enums import ComparisonPredicate, Signedness
from ...ir.types import I1
from .common import (
    constant_bool,
    constant_int,
    defined_by,
    elements,
    is_false,
    is_integer,
    is_true,
    make_constant,
    negate,
)
from .rewriter import Rewriter

_EQUALITY = (ComparisonPredicate.equal, ComparisonPredicate.not_equal)


def fold_select(op: Operation, rw: Rewriter) -> list[Value] | None:
    cond, if_true, if_false = op.operands
    if if_true is if_false:  # select c, x, x => x
        return [if_true]
    truth = constant_bool(cond)
    if truth is not None:  # select true, x, y => x; select false, x, y => y
        return [if_true if truth else if_false]
    if op.results[0].type.element == I1 and is_true(if_true) and is_false(if_false):
        return [cond]  # select c, true, false => c
    compare = defined_by(cond, "cmpi")
    if compare and compare.attributes["comparison_predicate"] in _EQUALITY:
        # select (x == y), x, y => y; select (x != y), x, y => x (either side)
        lhs, rhs = compare.operands
        if (lhs, rhs) in ((if_true, if_false), (if_false, if_true)):
            unequal = compare.attributes["comparison_predicate"] == ComparisonPredicate.not_equal
            return [if_true if unequal else if_false]
    negation = defined_by(cond, "xori")
    if negation and is_true(negation.operands[1]):  # select !c, x, y => select c, y, x
        rw.set_operands(op, [negation.operands[0], if_false, if_true])
        return op.results
    inner = defined_by(if_true, "select")
    if inner and inner.operands[0] is cond:  # select c, (select c, x, y), z => select c, x, z
        rw.set_operands(op, [cond, inner.operands[1], if_false])
        return op.results
    inner = defined_by(if_false, "select")
    if inner and inner.operands[0] is cond:  # select c, x, (select c, y, z) => select c, x, z
        rw.set_operands(op, [cond, if_true, inner.operands[2]])
        return op.results
    return None


def select_i1_to_not(op: Operation, rw: Rewriter) -> bool:
    """select c, false, true => xori c, true"""
    cond, if_true, if_false = op.operands
    if not (is_false(if_true) and is_true(if_false)):
        return False
    negation = rw.create("xori", [cond, if_false], [cond.type], before=op)
    rw.replace_op(op, negation.results)
    return True


def select_consts(op: Operation, rw: Rewriter) -> bool:
    """select of three constants => the constant it picks, element by element"""
    constants = [defined_by(v, "constant") for v in op.operands]
    if not all(constants):
        return False
    cond, if_true, if_false = (c.attributes["value"] for c in constants if c)
    picked = [a if c else b for c, a, b in
              zip(elements(cond), elements(if_true), elements(if_false), strict=True)]
    rw.replace_op(op, [make_constant(rw, op.results[0].type, picked, op)])
    return True


def select_to_exti(op: Operation, rw: Rewriter) -> bool:
    """select c, 1, 0 => exti c unsigned; select c, 0, 1 => exti (xori c, true) unsigned"""
    cond, if_true, if_false = op.operands
    result = op.results[0].type
    if not is_integer(result.element) or result.element == I1:
        return False
    picks = (constant_int(if_true), constant_int(if_false))
    if picks not in ((1, 0), (0, 1)):
        return False
    source = cond if picks == (1, 0) else negate(rw, cond, op)
    extended = rw.create("exti", [source], [result], before=op,
                         attributes={"signedness": Signedness.unsigned})
    rw.replace_op(op, extended.results)
    return True
