"""What several of cuda-tile's patterns ask of a value, and the ops they build (its
CudaTile.cpp, "Common helpers for canonicalization")."""

from __future__ import annotations

from typing import Any

from ...ir.asm_attrs import pack_elements, unpack_elements
from ...ir.attrs import DenseElementsAttr
from ...ir.core import Operation, Value
from ...ir.rewrite import defining_op, splat_number
from ...ir.types import I1, ElementType, TileType
from .rewriter import Rewriter


def constant_bool(v: Value) -> bool | None:
    """The value of a constant i1 tile that is a splat or has one element, else None."""
    value = splat_number(v)
    if value is None or v.type.element != I1:
        return None
    return bool(value)


def is_true(v: Value) -> bool:
    return constant_bool(v) is True


def is_false(v: Value) -> bool:
    return constant_bool(v) is False


def constant_int(v: Value) -> int | None:
    """The value of a constant integer tile that is a splat or has one element."""
    value = splat_number(v)
    if value is None or not v.type.element.is_int:
        return None
    return int(value)


def leaves_parent(op: Operation | None) -> bool:
    """A terminator after which nothing more of the enclosing block runs (cuda-tile's
    isTerminatorForParent: return, continue, break; not yield)."""
    return op is not None and op.name in ("return", "continue", "break")


def terminator(op: Operation, region: int) -> Operation | None:
    """The last op of ``op``'s region ``region``, None when the region is empty."""
    blocks = op.regions[region].blocks
    return blocks[-1].ops[-1] if blocks and blocks[-1].ops else None


def elements(attr: DenseElementsAttr) -> list[int]:
    """The bit patterns of every element of a dense constant (a splat repeated)."""
    count = attr.type.num_elements
    if attr.splat:
        return unpack_elements(attr.data, attr.type.element, 1) * count
    return unpack_elements(attr.data, attr.type.element, count)


def constant_key(op: Operation) -> tuple[Any, ...]:
    """What makes two constants equal: their type and value (a one-element constant is
    its element, however it was written)."""
    attr = op.attributes["value"]
    if attr.splat or attr.type.num_elements == 1:
        return op.results[0].type, tuple(unpack_elements(attr.data, attr.type.element, 1))
    return op.results[0].type, attr.data


def make_constant(rw: Rewriter, type: TileType, bits: list[int], before: Operation) -> Value:
    """A constant of ``type`` with these element bit patterns (a splat when all equal)."""
    splat = len(set(bits)) == 1
    data = pack_elements(bits[:1] if splat else bits, type.element)
    attr = DenseElementsAttr(type, data, splat)
    return rw.create("constant", [], [type], before=before, attributes={"value": attr}).results[0]


def negate(rw: Rewriter, cond: Value, before: Operation) -> Value:
    """``xori cond, true`` (cuda-tile's createXOrForValue), with a new constant true."""
    i1 = TileType(cond.type.shape, I1)
    true = make_constant(rw, i1, [1], before)
    return rw.create("xori", [cond, true], [i1], before=before).results[0]


def select_of(rw: Rewriter, cond: Value, if_true: Value, if_false: Value,
              before: Operation) -> Value:
    """``select`` on the 0-d condition of an ``if`` (cuda-tile's createSelectOpByType): a
    tile of rank r first reshapes the condition to r dimensions of 1, then broadcasts it."""
    shape = if_true.type.shape
    if shape:
        ones = TileType((1,) * len(shape), I1)
        cond = rw.create("reshape", [cond], [ones], before=before).results[0]
        cond = rw.create("broadcast", [cond], [TileType(shape, I1)], before=before).results[0]
    return rw.create("select", [cond, if_true, if_false], [if_true.type],
                     before=before).results[0]


def defined_by(v: Value, name: str) -> Operation | None:
    """The op named ``name`` that defines ``v``, if that is what defines it."""
    op = defining_op(v)
    return op if op is not None and op.name == name else None


def is_integer(element: Any) -> bool:
    return isinstance(element, ElementType) and element.is_int
