"""cuda-tile checks the rest of the suite did not exercise (issue 18): for each, the smallest
input that brings it about and nanotile's whole message, as cuda-tile's source words it
(lib/Dialect/CudaTile/IR/CudaTile.cpp). Checks that an op's ODS constraints or another
verifier always reach first are run here by calling the rule, as cuda-tile's would run."""

from __future__ import annotations

import pytest

from nanotile.ir import types as T
from nanotile.ir.attrs import (
    CallSiteLoc,
    DivByAttr,
    DICompileUnitAttr,
    DIFileAttr,
    DILocAttr,
    DISubprogramAttr,
    NameLoc,
)
from nanotile.ir.enums import AtomicRMWMode, Signedness
from nanotile.ir.enums import MemoryOrderingSemantics as M
from nanotile.ir.enums import MemoryScope as S
from nanotile.ir.enums import RoundingMode as R
from nanotile.verify.control import _if, _return
from nanotile.verify.engine import RuleError
from nanotile.verify.mma import _mmaf_types
from nanotile.verify.reduce import _aggregate_region
from nanotile.verify.shape import _extract

from .build import EL, Kernel, only_error, ptr_tile, region, tile

I32 = tile((), "i32")
TV = T.TensorViewType(EL["f32"], (None, None), (None, 1))


def divi():
    k = Kernel(tile((8,), "i32"))
    k.op("divi", [k.arg(0), k.arg(0)], [tile((8,), "i32")],
         {"rounding": R.nearest_even, "signedness": Signedness.signed})
    return k.module()


def ftoi():
    k = Kernel(tile((8,)))
    k.op("ftoi", [k.arg(0)], [tile((8,), "i32")],
         {"rounding_mode": R.zero, "signedness": Signedness.signed})
    return k.module()


def pack(name, src, res):
    k = Kernel(src)
    k.op(name, [k.arg(0)], [res])
    return k.module()


def cas_with_mask(mask):
    k = Kernel(ptr_tile((8,)), tile((8,)), mask)
    k.op("atomic_cas_tko", [k.arg(0), k.arg(1), k.arg(1), k.arg(2)],
         [tile((8,)), T.TOKEN], {"memory_ordering_semantics": M.relaxed,
                                 "memory_scope": S.device}, segments=[1, 1, 1, 1, 0])
    return k.module()


def red_view_sys():
    view = T.PartitionViewType((16, 32), T.TensorViewType(EL["f32"], (None, 64), (64, 1)))
    k = Kernel(view, I32, tile((16, 32)))
    k.op("atomic_red_view_tko", [k.arg(0), k.arg(1), k.arg(1), k.arg(2)], [T.TOKEN],
         {"memory_ordering_semantics": M.relaxed, "memory_scope": S.sys,
          "mode": AtomicRMWMode.addf}, segments=[1, 2, 1, 0])
    return k.module()


def tensor_view(shape, strides):
    k = Kernel(ptr_tile((), "f32"), I32, tile((), "i64"))
    k.op("make_tensor_view", [k.arg(0)] + [k.arg(i) for i in shape + strides], [TV],
         segments=[1, len(shape), len(strides)])
    return k.module()


def partition_view_of_another_tensor_view():
    other = T.TensorViewType(EL["f32"], (8,), (1,))
    k = Kernel(other)
    k.op("make_partition_view", [k.arg(0)], [T.PartitionViewType((8, 8), TV)])
    return k.module()


@pytest.mark.parametrize("module,message", [
    (divi, "'cuda_tile.divi' op invalid rounding mode specified, expect one of "
           "[zero, negative_inf, positive_inf]"),
    (ftoi, "'cuda_tile.ftoi' op invalid rounding mode specified. Only "
           "'nearest_int_to_zero' is supported"),
    # an i1 counts one bit, so four are half a byte
    (lambda: pack("pack", tile((4,), "i1"), tile((1,), "i8")),
     "'cuda_tile.pack' op expects source tile to be byte-aligned"),
    (lambda: pack("unpack", tile((1,), "i8"), tile((4,), "i1")),
     "'cuda_tile.unpack' op expects result tile to be byte-aligned"),
    (lambda: cas_with_mask(tile((4,), "i1")),
     "'cuda_tile.atomic_cas_tko' op failed to verify that all of {pointers, val, cmp and "
     "mask} have same shape"),
    (red_view_sys, "'cuda_tile.atomic_red_view_tko' op memory scope 'sys' is not supported "
                   "for view-based atomic reductions; use 'tl_blk' or 'device' for TMA "
                   "compatibility"),
    # TV has two dynamic sizes and one dynamic stride; arg1 is a tile<i32>, arg2 a tile<i64>
    (lambda: tensor_view([1, 1], []),
     "'cuda_tile.make_tensor_view' op expected 1 dynamic stride operands, got 0"),
    (lambda: tensor_view([1, 2], [1]),
     "'cuda_tile.make_tensor_view' op expected dynamic shape index 1 to be of the same type "
     "as the other dynamic values ('!cuda_tile.tile<i32>'), got '!cuda_tile.tile<i64>'"),
    (lambda: tensor_view([1, 1], [2]),
     "'cuda_tile.make_tensor_view' op expected dynamic stride index 0 to be of the same "
     "type as the other dynamic values ('!cuda_tile.tile<i32>'), got "
     "'!cuda_tile.tile<i64>'"),
    (partition_view_of_another_tensor_view,
     "'cuda_tile.make_partition_view' op expected the type of the provided tensor_view "
     "value ('!cuda_tile.tensor_view<8xf32, strides=[1]>') to be the same as the view's "
     "tensor_view type ('!cuda_tile.tensor_view<?x?xf32, strides=[?,1]>')"),
], ids=["divi", "ftoi", "pack", "unpack", "atomic_cas", "atomic_red_view", "stride_count",
        "shape_types", "stride_types", "partition_view"])
def test_messages(module, message):
    assert only_error(module()) == message


def rule_message(rule, op) -> str | None:
    try:
        rule(op)
    except RuleError as e:
        return e.message
    return None


@pytest.mark.parametrize("index,message", [
    (T.TOKEN, "index 0 must be a Tile type"),
    (tile((2,), "i32"), "index 0 must be a scalar tile, got rank 1"),
    (tile((), "i64"), "index 0 must have i32 element type"),
])
def test_extract_index_checks(index, message):
    """extract's ODS constraint (variadic of 0D tile of i32) comes first in verify_module."""
    k = Kernel(tile((8,)), index)
    op = k.op("extract", [k.arg(0), k.arg(1)], [tile((2,))])
    assert rule_message(_extract, op) == message


def test_extract_rank():
    k = Kernel(tile((8,)), I32)
    op = k.op("extract", [k.arg(0), k.arg(1)], [tile((2, 1))])
    assert only_error(k.module()).endswith(
        "failed to verify that all of {source, result} have same rank")  # ODS, first
    assert rule_message(_extract, op) == "source and result must have the same rank"


def test_entry_returns_nothing():
    """The entry's own rule (no results) comes first in verify_module."""
    k = Kernel(I32, kind="entry", results=(I32,))
    op = k.op("return", [k.arg(0)])
    assert rule_message(_return, op) == (
        "has 1 operands, but entry function must return 0 operands")


def test_if_without_regions():
    k = Kernel(tile((), "i1"))
    op = k.op("if", [k.arg(0)], [])
    assert only_error(k.module()).endswith("expected 2 regions, but found 0")  # ODS, first
    assert rule_message(_if, op) == "must define then branch"


def test_mmaf_input_element_type():
    k = Kernel(tile((8, 8), "i8"), tile((8, 8), "i8"), tile((8, 8)))
    op = k.op("mmaf", [k.arg(0), k.arg(1), k.arg(2)], [tile((8, 8))])
    assert "must be mmaf operand tile type" in only_error(k.module())  # ODS, first
    assert rule_message(_mmaf_types, op) == "unsupported input element type: 'i8'"


def test_reduce_body_without_ops():
    reg, _ = region(I32, I32)
    k = Kernel(tile((4,), "i32"))
    op = k.op("reduce", [k.arg(0)], [I32], {"dim": 0}, regions=[reg])
    assert only_error(k.module()).endswith("expects a non-empty block")  # SingleBlock, first
    assert rule_message(_aggregate_region, op) == "expect non-empty block"


FILE = DIFileAttr("foo.py", "/tmp/")
SUB = DISubprogramAttr(FILE, 1, "test", "k", DICompileUnitAttr(FILE), 2)


def test_function_location_is_no_call_site():
    k = Kernel(I32, kind="entry")
    k.item.location = CallSiteLoc(NameLoc("callee"), NameLoc("caller"))
    # cuda-tile prints the location (func.getLoc(), as MLIR prints a location attribute)
    assert only_error(k.module()) == (
        "'cuda_tile.entry' op invalid function debug info location: "
        'loc(callsite("callee" at "caller")). Function location must not be a CallSiteLoc.')


def test_op_scope_needs_a_function_scope():
    k = Kernel(I32, kind="entry")
    op = k.op("addi", [k.arg(0), k.arg(0)], [I32])
    op.location = DILocAttr(SUB, "/tmp/foo.py", 7, 8)
    assert only_error(k.module()) == (
        "'cuda_tile.addi' op invalid operation debug info scope: #cuda_tile.di_subprogram<"
        "file = #cuda_tile.di_file<\"foo.py\" in \"/tmp/\">, line = 1, name = \"test\", "
        "linkageName = \"k\", compileUnit = #cuda_tile.di_compile_unit<file = "
        "#cuda_tile.di_file<\"foo.py\" in \"/tmp/\">>, scopeLine = 2>. Operation has debug "
        "info scope, but function debug info scope is undefined.")


def test_div_by_every_without_along():
    """The text form has no way to write one without the other; the builders do."""
    k = Kernel(tile((4, 8), "i32"))
    k.op("assume", [k.arg(0)], [tile((4, 8), "i32")],
         {"predicate": DivByAttr(16, every=4, along=None)})
    assert only_error(k.module()) == (
        "'cuda_tile.assume' op 'cuda_tile.div_by' 'every'/'along' must be used in "
        "combination")


def test_for_with_more_iter_values_than_types_is_refused_at_its_name():
    """cuda-tile's ForOp::parse reports this at the op's name (getNameLoc), as it reads
    the header, before the body."""
    from nanotile.diagnostics import CompileError
    from nanotile.ir.parser import parse_text

    text = ("cuda_tile.module @m {\n  entry @k(%n: tile<i32>) {\n"
            "    %c0 = constant <i32: 0> : tile<i32>\n"
            "    %r = for %iv in (%c0 to %n, step %n) : tile<i32> "
            "iter_values(%a = %c0, %b = %c0) -> (tile<i32>) {\n"
            "      continue %a : tile<i32>\n    }\n  }\n}\n")
    with pytest.raises(CompileError) as caught:
        parse_text(text, "k.mlir")
    error = caught.value.diagnostics[0]
    assert error.message == "mismatch in number of loop-carried values and defined values"
    assert (error.line, error.column) == (4, 10)  # `for`


def test_a_duplicate_hint_key_is_refused_after_its_value():
    """cuda-tile's OptimizationHintsAttr::parse finds the duplicate once it has read the
    entry's value, and reports it where it stands: the next token (here the `>`)."""
    from nanotile.diagnostics import CompileError
    from nanotile.ir.parser import parse_text

    header = ("  entry @k() optimization_hints=<sm_100={num_cta_in_cga=2}, "
              "sm_100={num_cta_in_cga=2} > {\n")
    with pytest.raises(CompileError) as caught:
        parse_text("cuda_tile.module @m {\n" + header + "    return\n  }\n}\n", "k.mlir")
    error = caught.value.diagnostics[0]
    assert error.message == "duplicate optimization_hints key `sm_100`"
    assert (error.line, error.column) == (2, header.index(" >") + 2)
