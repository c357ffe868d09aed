"""Elementwise arithmetic, math and conversion rules: rounding modes allowed per op,
flush_to_zero / approx / full only on f32, integer overflow flags, width changes.
"""

from __future__ import annotations

from nanotile.ir.core import Operation
from nanotile.ir.enums import IntegerOverflow, RoundingMode, Signedness
from nanotile.ir.types import ElementType, TileType, Type

from .engine import attr, error_and_go_on, fail, q, rule

R = RoundingMode
IEEE = (R.nearest_even, R.zero, R.negative_inf, R.positive_inf)


def result_element(op: Operation) -> Type | None:
    t = op.results[0].type if op.results else None
    return t.element if isinstance(t, TileType) else t


def _f32_only(op: Operation, modifier: str) -> None:
    """``flush_to_zero``/``approx``/``full`` are only defined on f32 results."""
    el = result_element(op)
    if not (isinstance(el, ElementType) and el.name == "f32"):
        raise fail(f"{modifier} modifier only supported for f32 data type, but got: {q(el)}")


def check_ftz(op: Operation) -> None:
    if op.attributes.get("flush_to_zero"):
        _f32_only(op, "flush_to_zero")


def _modes(modes: tuple[RoundingMode, ...]) -> str:
    return ", ".join(m.name for m in modes)


@rule("addf", "subf", "mulf", "fma")
def _ieee_rounding(op: Operation) -> None:
    mode = attr(op, "rounding_mode")
    if mode not in IEEE:
        raise fail(f"invalid rounding mode specified, expect one of [{_modes(IEEE)}]")
    check_ftz(op)


@rule("exp2", "maxf", "minf", "rsqrt")
def _ftz_only(op: Operation) -> None:
    check_ftz(op)


@rule("divf")
def _divf(op: Operation) -> None:
    allowed = IEEE + (R.approx, R.full)
    mode = attr(op, "rounding_mode")
    if mode not in allowed:
        raise fail(f"invalid rounding mode specified, expect one of [{_modes(allowed)}]")
    _div_sqrt_modifiers(op, mode)


@rule("sqrt")
def _sqrt(op: Operation) -> None:
    allowed = IEEE + (R.approx,)
    mode = attr(op, "rounding_mode")
    if mode not in allowed:
        raise fail(f"invalid rounding mode specified, expect one of [{_modes(allowed)}]")
    _div_sqrt_modifiers(op, mode)


def _div_sqrt_modifiers(op: Operation, mode: RoundingMode) -> None:
    check_ftz(op)
    if mode is R.approx:
        _f32_only(op, "approx")
    if mode is R.full:
        _f32_only(op, "full")


@rule("exp", "tanh")
def _approx_or_full(op: Operation) -> None:
    mode = attr(op, "rounding_mode")
    if mode not in (R.approx, R.full):
        if op.name == "tanh":  # cuda-tile's TanHOp::verify emits it and goes on
            error_and_go_on("invalid rounding mode specified, expect one of [approx, full]",
                            op)
            return
        raise fail("invalid rounding mode specified, expect one of [approx, full]")
    if mode is R.approx:
        _f32_only(op, "approx")


@rule("divi")
def _divi(op: Operation) -> None:
    mode = attr(op, "rounding")
    if mode not in (R.zero, R.negative_inf, R.positive_inf):
        raise fail("invalid rounding mode specified, expect one of "
                   "[zero, negative_inf, positive_inf]")
    if mode is R.negative_inf and attr(op, "signedness") is Signedness.unsigned:
        raise fail("rounding mode 'negative_inf' is not allowed with 'unsigned' flag")


@rule("negi")
def _negi(op: Operation) -> None:
    if attr(op, "overflow") is IntegerOverflow.nuw:
        raise fail("'no_unsigned_wrap' overflow flag is not supported")


def _int_width(t: Type) -> int:
    el = t.element if isinstance(t, TileType) else t
    return el.bitwidth if isinstance(el, ElementType) else 0


@rule("exti")
def _exti(op: Operation) -> None:
    if _int_width(op.results[0].type) <= _int_width(op.operands[0].type):
        raise fail("extending to smaller or identical integer")


@rule("trunci")
def _trunci(op: Operation) -> None:
    if _int_width(op.results[0].type) >= _int_width(op.operands[0].type):
        raise fail("truncating to larger or identical integer")


@rule("ftoi")
def _ftoi(op: Operation) -> None:
    mode = op.attributes.get("rounding_mode")
    if mode is not None and mode is not R.nearest_int_to_zero:
        raise fail("invalid rounding mode specified. Only 'nearest_int_to_zero' is "
                   "supported")


# ftof: the 13.3 dialect source only allows nearest_even (and zero/positive_inf into
# f8E8M0FNU), but cuTile 1.7 writes zero, negative_inf, positive_inf and nearest_away
# and tileiras 13.4 compiles them (corpus/cutile-tests test_cast__*), so the 13.4 rule
# is followed: the IEEE modes and nearest_away.
FTOF_MODES = IEEE + (R.nearest_away,)


@rule("ftof")
def _ftof(op: Operation) -> None:
    if op.operands[0].type == op.results[0].type:
        raise fail("converting tiles must not be a no-op")
    mode = attr(op, "rounding_mode")
    el = result_element(op)
    if isinstance(el, ElementType) and el.name == "f8E8M0FNU":
        if mode not in (R.zero, R.positive_inf):
            raise fail("invalid rounding mode specified for conversion to f8E8M0FNU. Only "
                       "'zero' and 'positive_inf' are supported")
    elif mode not in FTOF_MODES:
        raise fail(f"invalid rounding mode specified, expect one of [{_modes(FTOF_MODES)}]")


@rule("itof")
def _itof(op: Operation) -> None:
    el = result_element(op)
    if isinstance(el, ElementType) and el.name == "f8E8M0FNU":
        raise fail("integer to f8E8M0FNU conversion is not supported, please first "
                   "convert to another float type")
    if attr(op, "rounding_mode") is not R.nearest_even:
        raise fail("invalid rounding mode specified. Only 'nearest_even' is supported")


def bit_width(el: Type) -> int:
    """Storage width of an element type (tf32 occupies 32 bits)."""
    if isinstance(el, ElementType):
        return el.bitwidth
    return 64  # pointers


def value_width(el: Type) -> int:
    """Width as the reference's rules count it: tf32 has 19 significant bits."""
    if isinstance(el, ElementType) and el.name == "tf32":
        return 19
    return bit_width(el)


@rule("bitcast")
def _bitcast(op: Operation) -> None:
    src, res = op.operands[0].type, op.results[0].type
    if not (isinstance(src, TileType) and isinstance(res, TileType)):
        return
    ws, wr = value_width(src.element), value_width(res.element)
    if ws != wr:
        raise fail(f"types must be equal width, cannot convert {q(src)} of width {ws} "
                   f"to type {q(res)} of width {wr}")


@rule("select")
def _select(op: Operation) -> None:
    res = op.results[0].type
    if isinstance(res, TileType) and str(res.element) == "f4E2M1FN":
        raise fail("cannot operate on sub-byte type F4E2M1FN")
