"""Control flow, entries, globals, symbols, assume predicates, hints, dominance."""

from __future__ import annotations

from nanotile.ir import types as T
from nanotile.ir.attrs import (
    BoundedAttr,
    DenseElementsAttr,
    DictAttr,
    DivByAttr,
    IntegerAttr,
    OptimizationHintsAttr,
    SameElementsAttr,
    SourceRange,
)
from nanotile.ir.core import Block, Value, make_op

from .build import EL, Kernel, errors, only_error, ptr_tile, region, tile

I32, I1 = tile((), "i32"), tile((), "i1")


def if_kernel(result_types, then_yield, else_yield=None):
    k = Kernel(I1, I32)
    then_r, then_b = region()
    k.op("yield", then_yield(k), [], block=then_b)
    regions = [then_r]
    if else_yield is not None:
        else_r, else_b = region()
        k.op("yield", else_yield(k), [], block=else_b)
        regions.append(else_r)
    k.op("if", [k.arg(0)], result_types, regions=regions)
    return k.module()


def test_if_rules():
    assert errors(if_kernel([I32], lambda k: [k.arg(1)], lambda k: [k.arg(1)])) == []
    assert only_error(if_kernel([I32], lambda k: [k.arg(1)])).endswith(
        "has non-empty return type, must define else branch")
    assert only_error(if_kernel([], lambda k: [k.arg(1)], lambda k: [])).endswith(
        "does not return a value, but then branch yields '!cuda_tile.tile<i32>'")
    assert only_error(if_kernel([I32], lambda k: [k.arg(1)], lambda k: [])).endswith(
        "has return type of '!cuda_tile.tile<i32>' but else branch does not yield anything")
    assert only_error(if_kernel([tile((), "i16")], lambda k: [k.arg(1)],
                                lambda k: [k.arg(1)])).endswith(
        "type does not match yield type, then branch yields '!cuda_tile.tile<i32>' but op "
        "result type is '!cuda_tile.tile<i16>'")


def for_kernel(init_types, iter_types, continue_values, iv_type=I32, results=None):
    k = Kernel(I32, *init_types)
    reg, body = region(iv_type, *iter_types)
    k.op("continue", continue_values(body), [], block=body)
    inits = [k.arg(1 + i) for i in range(len(init_types))]
    k.op("for", [k.arg(0)] * 3 + inits,
         list(init_types) if results is None else results, regions=[reg],
         segments=[1, 1, 1, len(inits)])
    return k.module()


def test_for_rules():
    t = tile((4,))
    assert errors(for_kernel([t], [t], lambda b: [b.arguments[1]])) == []
    assert only_error(for_kernel([t], [t], lambda b: [b.arguments[1]],
                                 iv_type=tile((), "i64"))).startswith(
        "'cuda_tile.for' op expected induction variable to be same type as bounds")
    msg = only_error(for_kernel([t], [t], lambda b: []))
    assert msg == ("`for` is missing a valid terminator. `continue` op should have operand "
                   "types that match the parent loop return types: "
                   "('!cuda_tile.tile<4xf32>'), but found: ()")
    assert only_error(for_kernel([t], [tile((4,), "f16")], lambda b: [])).startswith(
        "`for` is missing")  # the continue is checked before the loop's regions
    view = T.TensorViewType(EL["f32"], (8,), (1,))
    assert "loop-carried value 0 is a tensor_view, which is not supported" in only_error(
        for_kernel([view], [view], lambda b: [b.arguments[1]]))


def test_loop_break_continue():
    k = Kernel(I32)
    reg, body = region(I32)
    k.op("continue", [], [], block=body)
    k.op("loop", [k.arg(0)], [], regions=[reg])
    assert only_error(k.module()) == (
        "`loop` is missing a valid terminator. `continue` op should have operand types that "
        "match the parent loop iter_values: ('!cuda_tile.tile<i32>'), but found: ()")
    k = Kernel(I32)
    k.op("break", [k.arg(0)], [])
    assert only_error(k.module()).endswith(
        "expects parent op to be one of 'cuda_tile.if, cuda_tile.loop'")


def test_early_exit_through_non_if_parent():
    k = Kernel(tile((8, 4)), I1)
    reg, body = region(tile(()), tile(()))
    inner_r, inner_b = region()
    k.op("break", [], [], block=inner_b)  # a break in an if in a reduce: no loop around
    k.op("if", [k.arg(1)], [], regions=[inner_r], block=body)
    k.op("yield", [body.arguments[0]], [], block=body)
    k.op("reduce", [k.arg(0)], [tile((4,))], {"dim": 0}, regions=[reg])
    diags = verify(k.module())
    expected = ("'cuda_tile.break' op can only be nested within a ancestor chain of "
                "'cuda_tile.loop', 'cuda_tile.if' operations")
    assert [d.message for d in diags] == [expected]
    k = Kernel(tile((8, 4)), I1)
    reg, body = region(tile(()), tile(()))
    inner_r, inner_b = region()
    k.op("continue", [], [], block=inner_b)
    k.op("if", [k.arg(1)], [], regions=[inner_r], block=body)
    k.op("yield", [body.arguments[0]], [], block=body)
    k.op("reduce", [k.arg(0)], [tile((4,))], {"dim": 0}, regions=[reg])
    diags = verify(k.module())
    assert diags[0].message == (
        "'cuda_tile.continue' op can only be nested within a ancestor chain of "
        "'cuda_tile.for', 'cuda_tile.loop', 'cuda_tile.if' operations")
    assert [n.message for n in diags[0].notes] == ["see unexpected ancestor operation"]
    assert diags[0].notes[0].line == k.block.ops[-2].source.line  # points at the reduce


def test_entry_signature():
    k = Kernel(tile((4,)), kind="entry")
    assert only_error(k.module()).endswith(
        "entry op must have scalar types (rank 0 !cuda_tile.tile)")
    k = Kernel(I32, kind="entry", results=(I32,))
    assert "entry op must not return values" in errors(k.module())[0]
    k = Kernel(I32, kind="entry")
    k.op("return", [k.arg(0)], [])
    assert only_error(k.module()).endswith(
        "has 1 operands, but enclosing function (@k) returns 0")


def global_op(shape, el="f32", name="g"):
    value = DenseElementsAttr(tile(shape, el), b"\0" * 4, True)
    return make_op("global", [], [], {"sym_name": name, "value": value})


def test_globals_and_get_global():
    k = Kernel()
    k.op("get_global", [], [ptr_tile((), "f32")], {"name": "g"})
    assert errors(k.module(global_op((4,)))) == []
    assert only_error(Kernel().module(global_op((1, 4)))).endswith("type must have rank 1")
    k = Kernel()
    k.op("get_global", [], [ptr_tile((), "f32")], {"name": "nope"})
    assert only_error(k.module(global_op((4,)))).endswith(
        "'nope' does not reference a valid global")
    k = Kernel()
    k.op("get_global", [], [ptr_tile((), "f16")], {"name": "g"})
    assert only_error(k.module(global_op((4,)))).endswith(
        "pointee type of result type '!cuda_tile.ptr<f16>' does not match type 'f32' of the "
        "global @g")
    assert "redefinition of symbol named 'g'" in errors(
        Kernel().module(global_op((4,)), global_op((4,))))[0]


def assume(t, pred):
    k = Kernel(t)
    k.op("assume", [k.arg(0)], [t], {"predicate": pred})
    return k.module()


def test_assume_predicates():
    assert errors(assume(tile((4,), "i32"), DivByAttr(16))) == []
    assert only_error(assume(tile((4,), "i32"), DivByAttr(12))).endswith(
        "'cuda_tile.div_by' divisor must be a power of 2")
    assert only_error(assume(tile((4,), "f32"), DivByAttr(16))).endswith(
        "'cuda_tile.div_by' is valid only for tile of integer/pointer or tensor_view values")
    assert only_error(assume(tile((4, 8), "i32"), DivByAttr(16, 4, 2))).endswith(
        "'cuda_tile.div_by' every_dim (2) must be >= 0 and < tile rank (2)")
    assert only_error(assume(tile((4, 8), "i32"), SameElementsAttr((1,)))).endswith(
        "expected number of values in 'cuda_tile.same_elements' (1) to match rank of "
        "constrained tile (2)")
    assert only_error(assume(tile((4,), "i8"), BoundedAttr(0, 300))).endswith(
        "'cuda_tile.bounded' expects upper bound to be within [-128, 127]")
    assert only_error(assume(tile((4,), "i8"), BoundedAttr(5, 1))).endswith(
        "expects lower bound to be less than or equal to upper bound")


def hinted_entry(hints):
    k = Kernel(ptr_tile((), "f32"), kind="entry")
    k.item.attributes["optimization_hints"] = hints
    return k.module()


def test_optimization_hints_only_when_asked():
    hints = OptimizationHintsAttr((("sm_100a", DictAttr((("num_cta_in_cga",
                                                           IntegerAttr(2, EL["i64"])),))),))
    module = hinted_entry(hints)
    assert verify(module) == []
    diags = verify(module, hint_warnings=True)
    assert [(d.severity, d.message) for d in diags] == [("warning",
                                                          "unknown hint key sm_100a")]
    diags = verify(module, hint_warnings=True, hint_errors=True)
    assert [d.severity for d in diags] == ["warning", "error"]
    assert diags[1].message.endswith("Optimization hints verification failed")
    bad = OptimizationHintsAttr((("sm_100", DictAttr((("num_cta_in_cga",
                                                        IntegerAttr(7, EL["i64"])),))),))
    assert [d.message for d in verify(hinted_entry(bad), hint_warnings=True)] == [
        "expected power-of-two ≤ 16 for sm_100.num_cta_in_cga"]


def verify(module, **kw):
    from nanotile.verify import verify_module
    return verify_module(module, **kw)


def test_dominance():
    k = Kernel(I32)
    stray = Value(I32, Block(), 0, "x")  # defined nowhere in this kernel
    k.op("addi", [k.arg(0), stray], [I32])
    assert only_error(k.module()).endswith("operand #1 does not dominate this use")
    k = Kernel(I32)
    later = k.op("addi", [k.arg(0), k.arg(0)], [I32])
    first = k.op("addi", [later.results[0], k.arg(0)], [I32])
    k.block.ops.reverse()  # use before definition
    assert first is k.block.ops[0]
    assert "does not dominate" in only_error(k.module())


def test_ops_without_position_report_at_their_parent():
    k = Kernel(I32, results=(I32,))
    ret = k.op("return", [], [])
    ret.source = None  # as for an implicit terminator added by the parser
    diags = verify(k.module(terminate=False))
    assert [d.message for d in diags] == [
        "'cuda_tile.return' op has 0 operands, but enclosing function (@k) returns 1"]
    assert diags[0].line is None
    k.item.source = SourceRange("t.mlir", 1, 1)
    assert verify(k.module(terminate=False))[0].line == 1


def test_a_block_ends_in_a_terminator():
    """MLIR's block check, on leaving the block: the last op shown in generic form
    (tileiras prints the same line for an entry read from bytecode without its return)."""
    k = Kernel(I32, kind="entry")
    k.op("addi", [k.arg(0), k.arg(0)], [I32])
    assert only_error(k.module(terminate=False)) == (
        'block with no terminator, has %0 = "cuda_tile.addi"(%arg0, %arg0) : '
        "(!cuda_tile.tile<i32>, !cuda_tile.tile<i32>) -> !cuda_tile.tile<i32>")
    assert errors(k.module()) == []  # the same body with its return


def test_a_block_is_not_empty():
    """MLIR's SingleBlock trait, before the op's own rules."""
    assert only_error(Kernel(I32, kind="entry").module(terminate=False)) == (
        "'cuda_tile.entry' op expects a non-empty block")
    then_region, _ = region()
    k = Kernel(I1)
    k.op("if", [k.arg(0)], [], regions=[then_region])
    assert only_error(k.module()) == "'cuda_tile.if' op expects a non-empty block"
