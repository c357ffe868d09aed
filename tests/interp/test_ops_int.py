"""Integer ops: signedness, wrap-around, rounding of division, shifts, i1/i4 behaviour and
the overflow flags (checked in debug mode). Expected values come from Python's exact
integers, reduced modulo 2**bits."""

from __future__ import annotations

import numpy as np
import pytest

from nanotile.interp import InterpError
from nanotile.ir.enums import ComparisonPredicate, IntegerOverflow, RoundingMode, Signedness

from .helpers import T, apply

S, U = Signedness.signed, Signedness.unsigned
RNG = np.random.default_rng(7)


def as_signed(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def as_unsigned(v: int, bits: int) -> int:
    return v & ((1 << bits) - 1)


def rand(bits: int, n: int = 64) -> np.ndarray:
    dtype = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}[bits]
    info = np.iinfo(dtype)
    edge = np.array([0, 1, -1, info.min, info.max, info.min + 1, 2, -2], dtype)
    return np.concatenate([edge, RNG.integers(info.min, info.max, n - edge.size,
                                              dtype=dtype, endpoint=True)])


@pytest.mark.parametrize("bits", [8, 16, 32, 64])
@pytest.mark.parametrize("name,fn", [("addi", lambda a, b: a + b), ("subi", lambda a, b: a - b),
                                     ("muli", lambda a, b: a * b)])
def test_wrapping_arithmetic(bits, name, fn):
    a, b = rand(bits), rand(bits)[::-1].copy()
    t = T(a.size, f"i{bits}")
    got = apply(name, [(a, t), (b, t)], t)
    want = [as_signed(fn(int(x), int(y)), bits) for x, y in zip(a, b)]
    assert got.tolist() == want


@pytest.mark.parametrize("bits", [8, 32, 64])
@pytest.mark.parametrize("sign", [S, U])
@pytest.mark.parametrize("mode", [RoundingMode.zero, RoundingMode.positive_inf,
                                  RoundingMode.negative_inf])
def test_divi_rounding(bits, sign, mode):
    if sign == U and mode == RoundingMode.negative_inf:
        pytest.skip("not a valid combination")
    a, b = rand(bits), rand(bits)[::-1].copy()
    b[b == 0] = 3
    if sign == S:  # MIN / -1 is undefined
        b[(b == -1) & (a == np.iinfo(a.dtype).min)] = 5
    t = T(a.size, f"i{bits}")
    got = apply("divi", [(a, t), (b, t)], t, signedness=sign, rounding=mode)
    view = as_signed if sign == S else as_unsigned
    want = []
    for x, y in zip(a.tolist(), b.tolist()):
        x, y = view(x, bits), view(y, bits)
        q_floor = x // y
        exact = q_floor * y == x
        if mode == RoundingMode.negative_inf:
            q = q_floor
        elif mode == RoundingMode.positive_inf:
            q = q_floor if exact else q_floor + 1
        else:
            q = q_floor if exact or (x < 0) == (y < 0) else q_floor + 1
        want.append(as_signed(q, bits))
    assert got.tolist() == want


def test_remi_sign_follows_dividend():
    t = T(4, "i32")
    a = np.array([7, 7, -7, -7], np.int32)
    b = np.array([3, -3, 3, -3], np.int32)
    assert apply("remi", [(a, t), (b, t)], t, signedness=S).tolist() == [1, 1, -1, -1]
    # unsigned: -7 is 2**32 - 7
    got = apply("remi", [(a, t), (b, t)], t, signedness=U)
    assert got.view(np.uint32).tolist() == [7 % 3, 7 % (2**32 - 3), (2**32 - 7) % 3,
                                            (2**32 - 7) % (2**32 - 3)]


def test_cmpi_signed_vs_unsigned():
    t = T(3, "i8")
    a = np.array([-1, 1, -128], np.int8)
    b = np.array([1, -1, 127], np.int8)
    lt = ComparisonPredicate.less_than
    assert apply("cmpi", [(a, t), (b, t)], T(3, "i1"), comparison_predicate=lt,
                 signedness=S).tolist() == [True, False, True]
    assert apply("cmpi", [(a, t), (b, t)], T(3, "i1"), comparison_predicate=lt,
                 signedness=U).tolist() == [False, True, False]


def test_max_min_signedness():
    t = T(2, "i16")
    a = np.array([-5, 3], np.int16)
    b = np.array([4, -9], np.int16)
    assert apply("maxi", [(a, t), (b, t)], t, signedness=S).tolist() == [4, 3]
    assert apply("maxi", [(a, t), (b, t)], t, signedness=U).tolist() == [-5, -9]
    assert apply("mini", [(a, t), (b, t)], t, signedness=U).tolist() == [4, 3]


@pytest.mark.parametrize("bits", [8, 32, 64])
def test_shifts(bits):
    a = rand(bits, 32)
    n = (np.arange(32) % bits).astype(a.dtype)
    t = T(32, f"i{bits}")
    shl = apply("shli", [(a, t), (n, t)], t)
    assert shl.tolist() == [as_signed(int(x) << int(k), bits) for x, k in zip(a, n)]
    sra = apply("shri", [(a, t), (n, t)], t, signedness=S)
    assert sra.tolist() == [int(x) >> int(k) for x, k in zip(a, n)]
    srl = apply("shri", [(a, t), (n, t)], t, signedness=U)
    assert srl.tolist() == [as_signed(as_unsigned(int(x), bits) >> int(k), bits)
                            for x, k in zip(a, n)]


@pytest.mark.parametrize("bits", [8, 16, 32, 64])
def test_mulhii_is_unsigned_high_half(bits):
    a, b = rand(bits), rand(bits)[::-1].copy()
    t = T(a.size, f"i{bits}")
    got = apply("mulhii", [(a, t), (b, t)], t)
    want = [as_signed((as_unsigned(int(x), bits) * as_unsigned(int(y), bits)) >> bits, bits)
            for x, y in zip(a, b)]
    assert got.tolist() == want


def test_mulhii_spec_example():
    t = T((), "i32")
    assert int(apply("mulhii", [(np.int32(-2**31), t), (np.int32(2), t)], t)) == 1


def test_negi_absi_bitwise():
    t = T(3, "i8")
    a = np.array([-128, 5, -3], np.int8)
    assert apply("negi", [(a, t)], t).tolist() == [-128, -5, 3]
    assert apply("absi", [(a, t)], t).tolist() == [-128, 5, 3]
    b = np.array([0x0F, 0x33, -1], np.int8)
    assert apply("andi", [(a, t), (b, t)], t).tolist() == [x & y for x, y in zip(a.tolist(), b.tolist())]
    assert apply("xori", [(a, t), (b, t)], t).tolist() == [x ^ y for x, y in zip(a.tolist(), b.tolist())]
    assert apply("ori", [(a, t), (b, t)], t).tolist() == [x | y for x, y in zip(a.tolist(), b.tolist())]


def test_i1_arithmetic_is_modulo_2():
    t = T(4, "i1")
    a = np.array([0, 0, 1, 1], bool)
    b = np.array([0, 1, 0, 1], bool)
    assert apply("addi", [(a, t), (b, t)], t).tolist() == [False, True, True, False]
    assert apply("muli", [(a, t), (b, t)], t).tolist() == [False, False, False, True]
    # signed i1: true is -1, so true < false
    lt = ComparisonPredicate.less_than
    assert apply("cmpi", [(a, t), (b, t)], t, comparison_predicate=lt,
                 signedness=S).tolist() == [False, False, True, False]


def test_i4_wraps_in_four_bits():
    t = T(3, "i4")
    a = np.array([7, -8, 5], np.int8)
    b = np.array([1, -1, 5], np.int8)
    assert apply("addi", [(a, t), (b, t)], t).tolist() == [-8, 7, -6]
    assert apply("cmpi", [(a, t), (b, t)], T(3, "i1"),
                 comparison_predicate=ComparisonPredicate.greater_than,
                 signedness=U).tolist() == [True, False, False]  # 8 > 15 is false


def test_exti_trunci():
    a = np.array([-1, 127, -128], np.int8)
    s = apply("exti", [(a, T(3, "i8"))], T(3, "i32"), signedness=S)
    u = apply("exti", [(a, T(3, "i8"))], T(3, "i32"), signedness=U)
    assert s.tolist() == [-1, 127, -128] and u.tolist() == [255, 127, 128]
    big = np.array([0x1234_5678, -1, 0x80], np.int32)
    assert apply("trunci", [(big, T(3, "i32"))], T(3, "i8")).tolist() == [0x78, -1, -128]


@pytest.mark.parametrize("flag,a,b,bad", [
    (IntegerOverflow.nsw, 2**31 - 1, 1, True), (IntegerOverflow.nsw, -1, 1, False),
    (IntegerOverflow.nuw, -1, 1, True), (IntegerOverflow.nuw, 2**31 - 1, 1, False),
    (IntegerOverflow.nw, 5, 6, False)])
def test_overflow_flags_checked_in_debug_mode(flag, a, b, bad):
    t = T((), "i32")
    args = [(np.int32(a), t), (np.int32(b), t)]
    got = apply("addi", args, t, overflow=flag)  # normal mode: wraps silently
    assert int(got) == as_signed(a + b, 32)
    if bad:
        with pytest.raises(InterpError, match="overflow<"):
            apply("addi", args, t, debug=True, overflow=flag)
    else:
        assert int(apply("addi", args, t, debug=True, overflow=flag)) == as_signed(a + b, 32)


def test_division_by_zero_reported_in_debug_mode():
    t = T((), "i32")
    args = [(np.int32(4), t), (np.int32(0), t)]
    with pytest.raises(InterpError, match="divides by zero"):
        apply("divi", args, t, debug=True, signedness=S)
