"""Semantics of integer and bitwise ops.

Values are signless two's-complement numbers; each op reads them signed or unsigned as
its ``signedness`` says. Results wrap around modulo 2**bitwidth. The overflow flags
(``nsw``/``nuw``/``nw``) promise that no signed/unsigned wrap happens; a broken promise
is undefined behaviour, which the interpreter reports in debug mode and otherwise ignores
(it returns the wrapped value). Division by zero and signed ``MIN / -1`` are undefined:
debug mode reports them; otherwise the result is 0 (division by zero) or the wrapped value.

Everything is computed on whole tiles; shapes come from the operands, not the op's
result type, so the same functions run the scalar bodies of reduce/scan on whole tiles.
"""

from __future__ import annotations

import numpy as np

from ..ir.core import Operation
from ..ir.enums import ComparisonPredicate, IntegerOverflow, RoundingMode, Signedness
from ..ir.types import ElementType
from .dtypes import int_range, signed, unsigned, wrap
from .errors import InterpError
from .registry import semantics


def _et(op: Operation, i: int = 0) -> ElementType:
    return op.operands[i].type.element


def _is_signed(op: Operation, name: str = "signedness") -> bool:
    return op.attributes.get(name, Signedness.signed) == Signedness.signed


def _check_overflow(tb, op: Operation, exact_signed, exact_unsigned, t: ElementType) -> None:
    """Debug mode: report a broken nsw/nuw promise (exact_* are object arrays or None)."""
    flag = op.attributes.get("overflow", IntegerOverflow.none)
    if not tb.machine.debug or flag == IntegerOverflow.none:
        return
    checks = []
    if flag in (IntegerOverflow.nsw, IntegerOverflow.nw) and exact_signed is not None:
        checks.append(("signed", exact_signed, int_range(t, True)))
    if flag in (IntegerOverflow.nuw, IntegerOverflow.nw) and exact_unsigned is not None:
        checks.append(("unsigned", exact_unsigned, int_range(t, False)))
    for kind, exact, (lo, hi) in checks:
        if any(v < lo or v > hi for v in np.asarray(exact).ravel().tolist()):
            raise InterpError(f"{tb.where}: '{op.name}' with overflow<{flag.name}> wrapped "
                              f"in the {kind} sense (undefined behaviour)")


def _exact(a: np.ndarray, t: ElementType, as_signed: bool) -> np.ndarray:
    return (signed(a, t) if as_signed else unsigned(a, t)).astype(object)


def _arith(fn):
    """addi/subi/muli: wrap-around on the signed view; debug checks the overflow flag."""

    def run(tb, op: Operation, args: list) -> list:
        a, b = args
        t = _et(op)
        if t.bitwidth == 64 and fn is np.multiply:  # wrap via uint64 to avoid warnings
            r = fn(a.view(np.uint64), b.view(np.uint64)).view(np.int64)
        else:
            r = fn(signed(a, t).astype(np.int64), signed(b, t).astype(np.int64))
        if tb.machine.debug and op.attributes.get("overflow", IntegerOverflow.none) != \
                IntegerOverflow.none:
            _check_overflow(tb, op, fn(_exact(a, t, True), _exact(b, t, True)),
                            fn(_exact(a, t, False), _exact(b, t, False)), t)
        return [wrap(r, t)]

    return run


semantics("addi")(_arith(np.add))
semantics("subi")(_arith(np.subtract))
semantics("muli")(_arith(np.multiply))


@semantics("negi")
def _negi(tb, op: Operation, args: list) -> list:
    t = _et(op)
    r = wrap(-signed(args[0], t).astype(np.int64), t)
    _check_overflow(tb, op, -_exact(args[0], t, True), None, t)
    return [r]


@semantics("absi")
def _absi(tb, op: Operation, args: list) -> list:
    t = _et(op)
    return [wrap(np.abs(signed(args[0], t).astype(np.int64)), t)]


def _bitwise(fn):
    def run(tb, op: Operation, args: list) -> list:
        t = _et(op)
        return [wrap(fn(unsigned(args[0], t), unsigned(args[1], t)), t)]

    return run


semantics("andi")(_bitwise(np.bitwise_and))
semantics("ori")(_bitwise(np.bitwise_or))
semantics("xori")(_bitwise(np.bitwise_xor))


def _view(a: np.ndarray, t: ElementType, is_signed: bool) -> np.ndarray:
    return signed(a, t) if is_signed else unsigned(a, t)


_CMP = {
    ComparisonPredicate.equal: np.equal, ComparisonPredicate.not_equal: np.not_equal,
    ComparisonPredicate.less_than: np.less, ComparisonPredicate.less_than_or_equal: np.less_equal,
    ComparisonPredicate.greater_than: np.greater,
    ComparisonPredicate.greater_than_or_equal: np.greater_equal,
}


@semantics("cmpi")
def _cmpi(tb, op: Operation, args: list) -> list:
    t = _et(op)
    s = _is_signed(op)
    fn = _CMP[op.attributes["comparison_predicate"]]
    return [np.asarray(fn(_view(args[0], t, s), _view(args[1], t, s)))]


@semantics("maxi", "mini")
def _minmax(tb, op: Operation, args: list) -> list:
    t = _et(op)
    s = _is_signed(op)
    fn = np.maximum if op.name == "maxi" else np.minimum
    return [wrap(fn(_view(args[0], t, s), _view(args[1], t, s)), t)]


def _division_operands(tb, op: Operation, args: list):
    """(lhs, rhs, t, signed) as int64/uint64 with zero divisors replaced (and reported)."""
    t = _et(op)
    s = _is_signed(op)
    a, b = _view(args[0], t, s), _view(args[1], t, s)
    wide = np.int64 if s else np.uint64
    a, b = a.astype(wide), b.astype(wide)
    zero = b == 0
    if zero.any():
        if tb.machine.debug:
            raise InterpError(f"{tb.where}: '{op.name}' divides by zero (undefined behaviour)")
        b = np.where(zero, wide(1), b)
    return a, b, zero, t, s


@semantics("divi")
def _divi(tb, op: Operation, args: list) -> list:
    a, b, zero, t, s = _division_operands(tb, op, args)
    mode = op.attributes.get("rounding", RoundingMode.zero)
    if s:
        lo, _ = int_range(t, True)
        if tb.machine.debug and ((a == lo) & (b == -1)).any():
            raise InterpError(f"{tb.where}: 'divi' signed overflow (MIN / -1)")
        # int64 floor division cannot overflow except for i64 MIN // -1: wrap that lane.
        special = (a == np.iinfo(np.int64).min) & (b == -1)
        bb = np.where(special, np.int64(1), b)
        q = np.floor_divide(a, bb)
        exact = (q * bb) == a
        if mode == RoundingMode.zero:
            q = np.where(~exact & ((a < 0) != (bb < 0)), q + 1, q)
        elif mode == RoundingMode.positive_inf:
            q = np.where(~exact, q + 1, q)
        q = np.where(special, a, q)
    else:
        q = np.floor_divide(a, b)
        if mode == RoundingMode.positive_inf:
            q = np.where(q * b != a, q + np.uint64(1), q)
    return [wrap(np.where(zero, 0, q), t)]


@semantics("remi")
def _remi(tb, op: Operation, args: list) -> list:
    a, b, zero, t, s = _division_operands(tb, op, args)
    if s:
        r = np.fmod(a, np.where(b == -1, np.int64(1), b))  # fmod: sign of the dividend
    else:
        r = np.remainder(a, b)
    return [wrap(np.where(zero, 0, r), t)]


# Ops.td reads the amount as unsigned and says nothing of amounts >= the bit width; the
# arithmetic (x * 2^n mod 2^N, x / 2^n rounded down) gives 0 or the sign, as PTX's
# clamping shl/shr do, so that is the rule for every amount (an i64 one >= 2^32 too).
@semantics("shli")
def _shli(tb, op: Operation, args: list) -> list:
    t = _et(op)
    a, n = unsigned(args[0], t).astype(np.uint64), unsigned(args[1], t).astype(np.uint64)
    big = n >= t.bitwidth
    r = np.where(big, np.uint64(0), a << np.where(big, np.uint64(0), n))
    if tb.machine.debug and op.attributes.get("overflow", IntegerOverflow.none) != \
            IntegerOverflow.none:
        ea, en = _exact(args[0], t, True), np.asarray(n).astype(object)
        eu = _exact(args[0], t, False)
        _check_overflow(tb, op, ea * (2 ** en), eu * (2 ** en), t)
    return [wrap(r, t)]


@semantics("shri")
def _shri(tb, op: Operation, args: list) -> list:
    t = _et(op)
    n = unsigned(args[1], t).astype(np.int64)
    n = np.minimum(n, t.bitwidth - 1 if _is_signed(op) else 63)
    if _is_signed(op):
        r = signed(args[0], t).astype(np.int64) >> n
    else:
        big = unsigned(args[1], t).astype(np.int64) >= t.bitwidth
        r = np.where(big, np.uint64(0), unsigned(args[0], t).astype(np.uint64) >> n.astype(np.uint64))
    return [wrap(r, t)]


@semantics("mulhii")
def _mulhii(tb, op: Operation, args: list) -> list:
    t = _et(op)
    a, b = unsigned(args[0], t), unsigned(args[1], t)
    if t.bitwidth <= 32:
        hi = (a.astype(np.uint64) * b.astype(np.uint64)) >> np.uint64(t.bitwidth)
        return [wrap(hi, t)]
    # 64 x 64 -> high 64 bits from 32-bit halves (exact, vectorised).
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a = a.astype(np.uint64)
    b = b.astype(np.uint64)
    al, ah, bl, bh = a & m32, a >> s32, b & m32, b >> s32
    ll, lh, hl, hh = al * bl, al * bh, ah * bl, ah * bh
    mid = (ll >> s32) + (lh & m32) + (hl & m32)
    hi = hh + (lh >> s32) + (hl >> s32) + (mid >> s32)
    return [wrap(hi, t)]
