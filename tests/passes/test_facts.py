"""Facts: what assume-to-facts and simplify-grid-queries record, and the interval logic
canonicalize-cmp-select uses to decide comparisons from bounded facts."""

from __future__ import annotations

import operator

from hypothesis import given
from hypothesis import strategies as st

from nanotile.ir.attrs import BoundedAttr, DivByAttr
from nanotile.ir.enums import ComparisonPredicate as P
from nanotile.loader import load_file
from nanotile.passes.base import PassContext
from nanotile.passes.canonicalize_cmp_select import compare_range
from nanotile.passes.registry import parse_pipeline

from .support import EXAMPLES

OPERATORS = {P.less_than: operator.lt, P.less_than_or_equal: operator.le,
             P.greater_than: operator.gt, P.greater_than_or_equal: operator.ge,
             P.equal: operator.eq, P.not_equal: operator.ne}


@given(st.sampled_from(list(P)), st.integers(-6, 6), st.integers(0, 6), st.integers(-8, 8))
def test_compare_range_only_answers_when_every_value_agrees(predicate, lo, width, k):
    hi = lo + width
    answer = compare_range(predicate, lo, hi, k)
    outcomes = {OPERATORS[predicate](x, k) for x in range(lo, hi + 1)}
    if answer is None:
        assert len(outcomes) == 2
    else:
        assert outcomes == {answer}


def test_assume_to_facts_records_predicates_on_the_assumed_values():
    module = load_file(str(EXAMPLES / "rms_norm.tileirbc"))
    params = module.entries()[0].regions[0].block.arguments
    ctx = PassContext()
    for step in parse_pipeline("assume-to-facts,simplify-grid-queries"):
        step.apply(module, ctx)
    assert ctx.facts_of(params[0]) == [DivByAttr(16)]  # x's base pointer
    assert ctx.facts_of(params[1]) == [BoundedAttr(0, None)]  # x's first dimension
    assert ctx.facts_of(params[4]) == []  # a stride nobody assumed anything about
    bid = next(op for op in module.walk() if op.name == "get_tile_block_id")
    assert ctx.facts_of(bid.results[0], BoundedAttr) == [BoundedAttr(0, None)]


def test_keep_ops_option_records_but_keeps():
    module = load_file(str(EXAMPLES / "axpy.tileirbc"))
    ctx = PassContext()
    (step,) = parse_pipeline("assume-to-facts{keep-ops=true}")
    assert step.apply(module, ctx) is False
    assert any(op.name == "assume" for op in module.walk()) and ctx.facts
