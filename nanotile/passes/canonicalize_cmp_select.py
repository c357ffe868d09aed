"""canonicalize-cmp-select: canonical forms of comparisons and selects.  tile -> tile.

- ``cmpi``/``cmpf`` with a constant on the left and none on the right swap their operands
  and mirror the predicate (``5 < x`` becomes ``x > 5``), so later passes only look right.
- ``cmpi`` of a value with itself is a constant (``x <= x`` is true, ``x < x`` is false).
- ``select c, x, x`` is ``x``; a select on a constant condition is the chosen operand.
- ``select (xori c, true), a, b`` becomes ``select c, b, a``.
- ``select c, true, false`` on i1 is ``c``.
- a signed ``cmpi`` of a value against a constant is decided when the value's
  ``bounded`` fact (recorded by assume-to-facts or simplify-grid-queries) settles it,
  e.g. ``n >= 0`` for ``n`` assumed ``bounded<0, ?>``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.attrs import BoundedAttr
from ..ir.core import Module, Operation, Value
from ..ir.enums import ComparisonPredicate as P
from ..ir.enums import Signedness
from ..ir.rewrite import (
    all_ops,
    defining_op,
    erase,
    insert_before,
    make_splat,
    replace_uses,
    splat_number,
)
from .base import Pass, PassContext

_MIRROR = {P.less_than: P.greater_than, P.greater_than: P.less_than,
           P.less_than_or_equal: P.greater_than_or_equal,
           P.greater_than_or_equal: P.less_than_or_equal,
           P.equal: P.equal, P.not_equal: P.not_equal}
_REFLEXIVE_TRUE = {P.equal, P.less_than_or_equal, P.greater_than_or_equal}


def swap_constant_lhs(op: Operation) -> bool:
    """Put the constant operand of a comparison on the right. True if changed."""
    lhs, rhs = op.operands
    if splat_number(lhs) is None or splat_number(rhs) is not None:
        return False
    op.operands = [rhs, lhs]
    predicate = op.attributes["comparison_predicate"]
    op.attributes["comparison_predicate"] = _MIRROR[predicate]
    return True


def compare_range(predicate: P, lo: float, hi: float, k: int) -> bool | None:
    """``x <predicate> k`` for every x in [lo, hi], when all of them give one answer."""
    always = {P.less_than: hi < k, P.less_than_or_equal: hi <= k, P.greater_than: lo > k,
              P.greater_than_or_equal: lo >= k, P.equal: lo == hi == k,
              P.not_equal: hi < k or lo > k}
    never = {P.less_than: lo >= k, P.less_than_or_equal: lo > k, P.greater_than: hi <= k,
             P.greater_than_or_equal: hi < k, P.equal: hi < k or lo > k,
             P.not_equal: lo == hi == k}
    if always[predicate]:
        return True
    return False if never[predicate] else None


def decided_by_facts(op: Operation, ctx: PassContext) -> bool | None:
    """The value of a signed ``cmpi x, C`` if the bounds known for x settle it."""
    x, c = op.operands
    constant = splat_number(c)
    if constant is None or op.attributes.get("signedness") != Signedness.signed:
        return None
    for fact in ctx.facts_of(x, BoundedAttr):
        lo = float("-inf") if fact.lower is None else fact.lower
        hi = float("inf") if fact.upper is None else fact.upper
        answer = compare_range(op.attributes["comparison_predicate"], lo, hi, int(constant))
        if answer is not None:
            return answer
    return None


def _is_true(v: Value) -> bool:
    value = splat_number(v)
    return value is not None and v.type.element.name == "i1" and bool(value)


def _is_false(v: Value) -> bool:
    value = splat_number(v)
    return value is not None and v.type.element.name == "i1" and not bool(value)


def simplify_select(op: Operation) -> Value | Operation | None:
    """A value replacing the select, an edited select, or None when nothing applies."""
    cond, a, b = op.operands
    if a is b:
        return a
    if splat_number(cond) is not None:
        return a if bool(splat_number(cond)) else b
    if a.type == op.results[0].type == cond.type and _is_true(a) and _is_false(b):
        return cond
    negation = defining_op(cond)
    if negation is not None and negation.name == "xori" and _is_true(negation.operands[1]):
        op.operands = [negation.operands[0], b, a]
        return op
    return None


@dataclass(frozen=True)
class CanonicalizeCmpSelect(Pass):
    """Constants to the right of comparisons; trivial and negated selects simplified."""

    name = "canonicalize-cmp-select"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        mapping: dict[Value, Value] = {}
        for op in list(all_ops(module)):
            op.operands = [mapping.get(v, v) for v in op.operands]
            if op.name in ("cmpi", "cmpf"):
                changed |= swap_constant_lhs(op)
            truth = None
            if op.name == "cmpi" and op.operands[0] is op.operands[1]:
                truth = op.attributes["comparison_predicate"] in _REFLEXIVE_TRUE
            elif op.name == "cmpi":
                truth = decided_by_facts(op, ctx)
            if truth is not None:
                constant = insert_before(op, make_splat(truth, op.results[0].type))
                mapping[op.results[0]] = constant.results[0]
                erase(op)
            elif op.name == "select":
                result = simplify_select(op)
                if isinstance(result, Value):
                    mapping[op.results[0]] = result
                    erase(op)
                changed |= result is not None
        replace_uses(module, mapping)
        return changed or bool(mapping)
