"""Control flow (if / for / loop with break and continue), the grid, print_tko, assert
and assume (checked in debug mode)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from nanotile.interp import InterpError, run
from nanotile.ir.attrs import BoundedAttr, DivByAttr
from nanotile.ir.enums import ComparisonPredicate, MemoryOrderingSemantics, Signedness
from nanotile.ir.types import TOKEN

from .helpers import I1, I32, Kernel, P, T
from .test_memory import store


def scalar_store(k: Kernel, base, value, ty: str = "i32") -> None:
    store(k, base, k.op("reshape", [value], T(1, ty)), 1, ty)


def cmp(k: Kernel, pred: ComparisonPredicate, a, b):
    return k.op("cmpi", [a, b], I1, comparison_predicate=pred, signedness=Signedness.signed)


def test_for_loop_with_if_inside():
    # sum over i in [lb, ub) step 3 of (i if i even else -i)
    for lb, ub in [(0, 20), (5, 6), (7, 7), (-4, 9)]:
        out = np.zeros(1, np.int32)
        k = Kernel([P("i32")])
        c = k.i32
        with k.region([I32, I32]) as (body, (i, acc)):
            two = c(2)
            rem = k.op("remi", [i, two], I32, signedness=Signedness.signed)
            even = cmp(k, ComparisonPredicate.equal, rem, c(0))
            with k.region([]) as (then, _):
                k.op("yield", [k.op("addi", [acc, i], I32)])
            with k.region([]) as (other, _):
                k.op("yield", [k.op("subi", [acc, i], I32)])
            new = k.op("if", [even], [I32], regions=[then, other])[0]
            k.op("continue", [new])
        total = k.op("for", [c(lb), c(ub), c(3), c(0)], [I32], regions=[body])[0]
        scalar_store(k, k.args[0], total)
        run(k.module(), "k", 1, out)
        assert out[0] == sum(i if i % 2 == 0 else -i for i in range(lb, ub, 3))


def test_for_unsigned_comparison():
    out = np.zeros(1, np.int32)
    k = Kernel([P("i32")])
    c = k.i32
    with k.region([I32, I32]) as (body, (_, acc)):
        k.op("continue", [k.op("addi", [acc, c(1)], I32)])
    # -2 as unsigned is 2**32 - 2: from 2**32 - 4 to it is 2 iterations (signed: none)
    n = k.op("for", [c(-4), c(-2), c(1), c(0)], [I32], regions=[body], unsignedCmp=True)[0]
    scalar_store(k, k.args[0], n)
    run(k.module(), "k", 1, out)
    assert out[0] == 2


def test_loop_break_and_continue_from_nested_if():
    # x = 1; count = 0; loop { if x > 1000: break count; x = 3x (continue) ... }
    out = np.zeros(1, np.int32)
    k = Kernel([P("i32")])
    c = k.i32
    with k.region([I32, I32]) as (body, (x, count)):
        big = cmp(k, ComparisonPredicate.greater_than, x, c(1000))
        with k.region([]) as (then, _):
            k.op("break", [count])
        with k.region([]) as (other, _):
            k.op("yield", [])
        k.op("if", [big], [], regions=[then, other])
        k.op("continue", [k.op("muli", [x, c(3)], I32), k.op("addi", [count, c(1)], I32)])
    n = k.op("loop", [c(1), c(0)], [I32], regions=[body])[0]
    scalar_store(k, k.args[0], n)
    run(k.module(), "k", 1, out)
    assert out[0] == 7  # 3**7 = 2187 is the first power of 3 above 1000


def test_grid_ids_3d():
    out = np.full(2 * 3 * 4, -1, np.int32)
    k = Kernel([P("i32")])
    x, y, z = k.op("get_tile_block_id", [], [I32, I32, I32])
    nx, ny, _ = k.op("get_num_tile_blocks", [], [I32, I32, I32])
    lin = k.op("addi", [x, k.op("muli", [nx, k.op("addi", [y, k.op("muli", [ny, z], I32)],
                                                          I32)], I32)], I32)
    val = k.op("addi", [k.op("muli", [x, k.const(np.int32(100), I32)], I32),
                        k.op("addi", [k.op("muli", [y, k.const(np.int32(10), I32)], I32), z],
                             I32)], I32)
    p = k.op("offset", [k.args[0], lin], T((), P("i32")))
    k.op("store_ptr_tko", [p, val], TOKEN, segments=[1, 1, 0, 0],
         memory_ordering_semantics=MemoryOrderingSemantics.weak)
    run(k.module(), "k", (2, 3, 4), out)
    want = [100 * xx + 10 * yy + zz for zz in range(4) for yy in range(3) for xx in range(2)]
    assert out.tolist() == want


def test_print_tko_formats_scalars_and_tiles():
    k2 = Kernel([I32])
    f = k2.const(np.float32(3.14159), T((), "f32"))
    k2.op("print_tko", [k2.args[0], f], TOKEN, segments=[2, 0], str="x=%u f=%.3f 100%%\n")
    buf = io.StringIO()
    run(k2.module(), "k", 1, np.int32(-1), out=buf)
    assert buf.getvalue() == "x=4294967295 f=3.142 100%\n"
    buf = io.StringIO()
    k3 = Kernel([I32])
    t3 = k3.const(np.array([[1, 2], [3, 4]], np.int32), T((2, 2), "i32"))
    k3.op("print_tko", [k3.args[0], t3], TOKEN, segments=[2, 0], str="b%d %d\n")
    run(k3.module(), "k", 2, np.int32(7), out=buf)
    assert buf.getvalue() == "b7 [[1, 2], [3, 4]]\n" * 2


def test_assert_names_the_tile_block():
    k = Kernel([I32])
    x, _, _ = k.op("get_tile_block_id", [], [I32, I32, I32])
    ok = cmp(k, ComparisonPredicate.not_equal, x, k.args[0])
    k.op("assert", [ok], None, message="x must differ")
    run(k.module(), "k", 3, np.int32(5))  # passes
    with pytest.raises(InterpError, match=r"tile block \(2, 0, 0\).*x must differ"):
        run(k.module(), "k", 3, np.int32(2))


@pytest.mark.parametrize("pred,value,holds", [
    (DivByAttr(16), 32, True), (DivByAttr(16), 40, False),
    (BoundedAttr(0, None), 5, True), (BoundedAttr(0, None), -1, False),
    (BoundedAttr(None, 10), 11, False)])
def test_assume_checked_in_debug_mode(pred, value, holds):
    k = Kernel([I32])
    k.op("assume", [k.args[0]], I32, predicate=pred)
    run(k.module(), "k", 1, np.int32(value))  # never checked outside debug mode
    if holds:
        run(k.module(), "k", 1, np.int32(value), debug=True)
    else:
        with pytest.raises(InterpError, match="assume predicate does not hold"):
            run(k.module(), "k", 1, np.int32(value), debug=True)


def test_assume_div_by_on_pointer_checks_address():
    k = Kernel([P("f32")])
    k.op("assume", [k.args[0]], T((), P("f32")), predicate=DivByAttr(16))
    run(k.module(), "k", 1, np.zeros(4, np.float32), debug=True)  # bases are 256-aligned


def test_runaway_loop_is_reported():
    k = Kernel([])
    with k.region([I32]) as (body, (x,)):
        k.op("continue", [x])
    k.op("loop", [k.i32(0)], [I32], regions=[body])
    with pytest.raises(InterpError, match="ran more than 1000 iterations"):
        run(k.module(), "k", 1, max_iterations=1000)


def test_print_hex_float_and_unsigned():
    k = Kernel([])
    f = k.const(np.float32(1.5), T((), "f32"))
    k.op("print_tko", [f, f], TOKEN, segments=[2, 0], str="%a|%A\n")
    buf = io.StringIO()
    run(k.module(), "k", 1, out=buf)
    assert buf.getvalue() == "0x1.8p+0|0X1.8P+0\n"  # as C's printf (and vprintf) writes %a


def test_a_malformed_op_is_reported_with_its_name():
    k = Kernel([])
    src = k.const(np.arange(4, dtype=np.int32), T(4, "i32"))
    k.op("reshape", [src], T(3, "i32"))  # 4 elements cannot become 3
    with pytest.raises(InterpError, match=r"tile block \(0, 0, 0\): 'reshape' failed"):
        run(k.module(), "k", 1)


def block_zero_breaks(counter_in_loop: bool) -> Kernel:
    """loop { n = *p + 1; *p = n; if (block id x == 0 [or n > 3]) break; }: only tile
    block 0 leaves the loop unless the condition also reads the loop's counter."""
    k = Kernel([P("i32")])
    x, _, _ = k.op("get_tile_block_id", [], [I32, I32, I32])
    first = cmp(k, ComparisonPredicate.equal, x, k.i32(0))
    with k.region([]) as (body, _):
        one = k.op("reshape", [k.op("load_ptr_tko", [k.args[0]], [T((), "i32"), TOKEN],
                                    segments=[1, 0, 0, 0],
                                    memory_ordering_semantics=MemoryOrderingSemantics.weak)[0]],
                   T((), "i32"))
        n = k.op("addi", [one, k.i32(1)], I32)
        scalar_store(k, k.args[0], n)
        leave = first
        if counter_in_loop:
            leave = k.op("ori", [first, cmp(k, ComparisonPredicate.greater_than, n, k.i32(3))],
                         I1)
        with k.region([]) as (then, _):
            k.op("break", [])
        with k.region([]) as (other, _):
            k.op("yield", [])
        k.op("if", [leave], [], regions=[then, other])
        k.op("continue", [])
    k.op("loop", [], [], regions=[body])
    return k


def test_a_loop_only_block_zero_leaves_is_reported_at_once():
    """Tile block 1 of a grid of 2 can never break: NeverEnds as it enters the loop (not
    after max_iterations), naming the block; one tile block runs."""
    from nanotile.interp import NeverEnds

    k = block_zero_breaks(counter_in_loop=False)
    counter = np.zeros(1, np.int32)
    with pytest.raises(NeverEnds, match=r"tile block \(1, 0, 0\): 'loop'.* never ends"):
        run(k.module(), "k", 2, counter)
    assert counter[0] == 1  # block 0 ran once round its loop; block 1 not at all
    counter[0] = 0
    run(k.module(), "k", 1, counter)
    assert counter[0] == 1


def test_a_break_that_depends_on_the_loop_is_not_judged():
    k = block_zero_breaks(counter_in_loop=True)
    counter = np.zeros(1, np.int32)
    run(k.module(), "k", 2, counter)  # block 1 leaves when the counter passes 3
    assert counter[0] == 4
