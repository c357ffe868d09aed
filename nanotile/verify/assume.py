"""assume: the predicate (div_by, same_elements, bounded) must fit the value it
constrains."""

from __future__ import annotations

from nanotile.ir.attrs import BoundedAttr, DivByAttr, SameElementsAttr
from nanotile.ir.core import Operation
from nanotile.ir.types import ElementType, PointerType, TensorViewType, TileType

from .engine import fail, rule


def _int_or_ptr(t) -> bool:
    return isinstance(t, TileType) and (
        isinstance(t.element, PointerType)
        or (isinstance(t.element, ElementType) and t.element.is_int))


@rule("assume")
def _assume(op: Operation) -> None:
    pred = op.attributes.get("predicate")
    t = op.operands[0].type if op.operands else None
    if isinstance(pred, DivByAttr):
        _div_by(pred, t)
    elif isinstance(pred, SameElementsAttr):
        _same_elements(pred, t)
    elif isinstance(pred, BoundedAttr):
        _bounded(pred, t)
    elif pred is None:
        raise fail("requires attribute 'predicate'")
    else:  # e.g. an integer read from bytecode: ODS's message for an interface constraint
        raise fail("attribute 'predicate' failed to satisfy constraint: "
                   "AssumePredicateAttrInterface instance")


def _div_by(p: DivByAttr, t) -> None:
    name = "'cuda_tile.div_by'"
    d = p.divisor
    if d <= 0 or d & (d - 1):
        raise fail(f"{name} divisor must be a power of 2")
    if (p.every is None) != (p.along is None):
        raise fail(f"{name} 'every'/'along' must be used in combination")
    if d > 1 << 62:
        raise fail(f"{name} divisor is too large")
    if isinstance(t, TensorViewType):
        if p.every is not None:
            raise fail(f"{name} 'every'/'along' cannot be used if the constrained value is a "
                       "tensor_view")
        return
    if not isinstance(t, TileType):
        raise fail(f"{name} is valid only for tile of integer/pointer or tensor_view values")
    if t.rank == 0 and p.every is not None:
        raise fail(f"{name} 'every'/'along' cannot be used if the constrained value is a "
                   "0D tile")
    if not _int_or_ptr(t):
        raise fail(f"{name} is valid only for tile of integer/pointer or tensor_view values")
    if p.every is None:
        return
    if p.along < 0 or p.along >= t.rank:
        raise fail(f"{name} every_dim ({p.along}) must be >= 0 and < tile rank ({t.rank})")
    if p.every < 0 or p.every > t.shape[p.along]:
        raise fail("expected 'cuda_tile.div_by' every_dim to be within 0 and the size of "
                   f"the respective dimension ({t.shape[p.along]})")


def _same_elements(p: SameElementsAttr, t) -> None:
    name = "'cuda_tile.same_elements'"
    if not _int_or_ptr(t):
        raise fail(f"{name} is valid only for tile of integer/pointer values")
    if len(p.values) != t.rank:
        raise fail(f"expected number of values in {name} ({len(p.values)}) to match rank "
                   f"of constrained tile ({t.rank})")
    for i, v in enumerate(p.values):
        if v < 0 or v > t.shape[i]:
            raise fail(f"expected {name} value {i} to be within 0 and the size of the "
                       f"respective dimension ({t.shape[i]})")


def _bounded(p: BoundedAttr, t) -> None:
    name = "'cuda_tile.bounded'"
    if not (isinstance(t, TileType) and isinstance(t.element, ElementType)
            and t.element.is_int):
        raise fail(f"{name} is valid only for tile of integer values")
    w = t.element.bitwidth
    lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
    if w == 1:
        lo, hi = -1, 0
    if p.lower is not None and not lo <= p.lower <= hi:
        raise fail(f"{name} expects lower bound to be within [{lo}, {hi}]")
    if p.upper is not None and not lo <= p.upper <= hi:
        raise fail(f"{name} expects upper bound to be within [{lo}, {hi}]")
    if p.lower is not None and p.upper is not None and p.lower > p.upper:
        raise fail(f"{name} expects lower bound to be less than or equal to upper bound")
