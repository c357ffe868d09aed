"""Elementwise arithmetic and conversion rules, and the op-table type constraints."""

from __future__ import annotations

import pytest

from nanotile.ir.enums import (
    ComparisonOrdering,
    ComparisonPredicate,
    IntegerOverflow,
    RoundingMode,
    Signedness,
)

from .build import Kernel, errors, only_error, tile

R = RoundingMode
CMPF = {"comparison_predicate": ComparisonPredicate.less_than,
        "comparison_ordering": ComparisonOrdering.ordered}
CMPI = {"comparison_predicate": ComparisonPredicate.less_than,
        "signedness": Signedness.signed}


def binary(name, t, attrs=None, result=None):
    k = Kernel(t, t)
    k.op(name, [k.arg(0), k.arg(1)], [result or t], attrs)
    return k.module()


def test_valid_arith_passes():
    assert errors(binary("addf", tile((2, 4)), {"rounding_mode": R.zero})) == []
    assert errors(binary("addi", tile((8,), "i32"))) == []


def test_operand_type_constraint_message():
    msg = only_error(binary("addi", tile((2, 4, 8), "f32")))
    assert msg == ("'cuda_tile.addi' op operand #0 must be tile of i1 or i8 or i16 or i32 or "
                   "i64 values, but got '!cuda_tile.tile<2x4x8xf32>'")
    msg = only_error(binary("addf", tile((2, 4, 8), "f8E5M2")))
    assert "operand #0 must be tile of f16 or bf16 or f32 or f64 values" in msg


def test_result_type_constraint_message():
    k = Kernel(tile((8,), "f32"))
    k.op("ftoi", [k.arg(0)], [tile((8,), "i4")], {"signedness": Signedness.signed})
    assert "'cuda_tile.ftoi' op result #0 must be tile of i1 or i8 or i16 or i32 or i64" \
        in only_error(k.module())


def test_all_types_match_trait():
    k = Kernel(tile((4,), "i16"), tile((4,), "i32"))
    k.op("addi", [k.arg(0), k.arg(1)], [tile((4,), "i16")])
    assert only_error(k.module()).endswith(
        "failed to verify that all of {lhs, rhs, result} have same type")


@pytest.mark.parametrize("mode", [R.approx, R.full])
def test_ieee_rounding_only(mode):
    msg = only_error(binary("addf", tile((4,)), {"rounding_mode": mode}))
    assert msg.endswith("op invalid rounding mode specified, expect one of "
                        "[nearest_even, zero, negative_inf, positive_inf]")


def test_flush_to_zero_only_on_f32():
    msg = only_error(binary("mulf", tile((4,), "f16"), {"flush_to_zero": True}))
    assert msg.endswith("flush_to_zero modifier only supported for f32 data type, but got: "
                        "'f16'")
    assert errors(binary("mulf", tile((4,), "f32"), {"flush_to_zero": True})) == []


def test_divf_modifiers():
    assert only_error(binary("divf", tile((4,), "f16"), {"rounding_mode": R.approx})).endswith(
        "approx modifier only supported for f32 data type, but got: 'f16'")
    assert only_error(binary("divf", tile((4,), "bf16"), {"rounding_mode": R.full})).endswith(
        "full modifier only supported for f32 data type, but got: 'bf16'")
    assert only_error(binary("divf", tile((4,)), {"rounding_mode": R.nearest_int_to_zero})
                      ).endswith("op invalid rounding mode specified, expect one of "
                                 "[nearest_even, zero, negative_inf, positive_inf, approx, full]")


@pytest.mark.parametrize("mode", [R.full, R.nearest_int_to_zero])
def test_sqrt_rounding(mode):
    """cuda-tile's SqrtOp::verify: the IEEE modes and approx, not full."""
    k = Kernel(tile((4,)))
    k.op("sqrt", [k.arg(0)], [tile((4,))], {"rounding_mode": mode})
    assert only_error(k.module()).endswith(
        "op invalid rounding mode specified, expect one of "
        "[nearest_even, zero, negative_inf, positive_inf, approx]")


def test_divi_rounding_and_signedness():
    t = tile((4,), "i32")
    ok = {"signedness": Signedness.signed, "rounding": R.negative_inf}
    assert errors(binary("divi", t, ok)) == []
    bad = {"signedness": Signedness.unsigned, "rounding": R.negative_inf}
    assert only_error(binary("divi", t, bad)).endswith(
        "rounding mode 'negative_inf' is not allowed with 'unsigned' flag")


def test_unary_math_rounding():
    k = Kernel(tile((4,), "f16"))
    k.op("tanh", [k.arg(0)], [tile((4,), "f16")], {"rounding_mode": R.zero})
    assert "expect one of [approx, full]" in only_error(k.module())
    k = Kernel(tile((4,), "f16"))
    k.op("exp", [k.arg(0)], [tile((4,), "f16")], {"rounding_mode": R.approx})
    assert "approx modifier only supported for f32" in only_error(k.module())


def test_negi_no_unsigned_wrap():
    k = Kernel(tile((4,), "i32"))
    k.op("negi", [k.arg(0)], [tile((4,), "i32")], {"overflow": IntegerOverflow.nuw})
    assert only_error(k.module()).endswith("'no_unsigned_wrap' overflow flag is not supported")


def test_cmp_result_and_predicates():
    k = Kernel(tile((2, 2), "f32"))
    k.op("cmpf", [k.arg(0), k.arg(0)], [tile((2,), "i1")], CMPF)
    assert only_error(k.module()).endswith("failed to verify that Result type has i1 element "
                                           "type and same shape as operands")
    k = Kernel(tile((), "i16"))
    k.op("cmpi", [k.arg(0), k.arg(0)], [tile((), "i16")], CMPI)
    assert "result #0 must be tile of i1 values" in only_error(k.module())


@pytest.mark.parametrize("name,src,dst,message", [
    ("exti", "i32", "i16", "extending to smaller or identical integer"),
    ("trunci", "i16", "i32", "truncating to larger or identical integer"),
    ("bitcast", "i32", "f16", "types must be equal width"),
])
def test_width_changes(name, src, dst, message):
    k = Kernel(tile((4,), src))
    k.op(name, [k.arg(0)], [tile((4,), dst)], {"signedness": Signedness.signed})
    assert message in only_error(k.module())


def test_required_attributes():
    k = Kernel(tile((4,), "i32"))
    k.op("cmpi", [k.arg(0), k.arg(0)], [tile((4,), "i1")],
         {"comparison_predicate": ComparisonPredicate.equal})
    assert only_error(k.module()) == "'cuda_tile.cmpi' op requires attribute 'signedness'"


def test_conversion_rounding():
    k = Kernel(tile((4,), "i32"))
    k.op("itof", [k.arg(0)], [tile((4,), "f32")],
         {"rounding_mode": R.negative_inf, "signedness": Signedness.signed})
    assert only_error(k.module()).endswith(
        "invalid rounding mode specified. Only 'nearest_even' is supported")
    k = Kernel(tile((4,), "f32"))
    k.op("ftof", [k.arg(0)], [tile((4,), "f8E8M0FNU")], {"rounding_mode": R.nearest_even})
    assert "Only 'zero' and 'positive_inf' are supported" in only_error(k.module())
    # cuTile 1.7 writes directed rounding on ftof and tileiras 13.4 accepts it.
    k = Kernel(tile((4,), "f32"))
    k.op("ftof", [k.arg(0)], [tile((4,), "f64")], {"rounding_mode": R.negative_inf})
    assert errors(k.module()) == []


def test_select_rejects_f4():
    k = Kernel(tile((4,), "i1"), tile((4,), "f4E2M1FN"))
    k.op("select", [k.arg(0), k.arg(1), k.arg(1)], [tile((4,), "f4E2M1FN")])
    assert only_error(k.module()).endswith("cannot operate on sub-byte type F4E2M1FN")
