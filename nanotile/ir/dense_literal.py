"""The values of a constant as cuda-tile reads them: ``<f32: [[1.0, 2.0], [3.0, 4.0]]>``.

cuda-tile's parser of ``constant`` and ``global`` (parseDenseTypedElementsAttr) reads a
number type, then each value as that type's literal, inferring the shape from the nesting
of the brackets; the tile type written after it must have that shape (or any shape, for
one value: a splat). This module checks a literal the grammar has read, in the order
that parser reads it, with its messages (``prefix`` is the op parser's
``custom op 'cuda_tile.constant' ``; MLIR's own literal parser words some without it).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from lark import Token

from . import types as T
from .asm_attrs import type_text, value_bits
from .text_values import DenseList, TextError

# The element types cuda-tile's constants take, as its message lists them; f8E5M3FNU
# is 13.4's.
DENSE_ELEMENTS = ("i1", "i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "tf32",
                  "f8E4M3FN", "f8E5M2", "f8E8M0FNU", "f4E2M1FN")
_ACCEPTED = frozenset(DENSE_ELEMENTS) | {"f8E5M3FNU"}
_EXPECT_ELEMENT = ("expect element type to be one of " + " or ".join(DENSE_ELEMENTS)
                   + " values, but got ")
_WORD = re.compile(r"[A-Za-z_][\w$.]*\Z")
_I64 = (-(1 << 63), (1 << 63) - 1)
# cuda-tile's validateIntegerBounds: the union of the signed and unsigned ranges (i64:
# whatever an int64 holds)
_BOUNDS = {1: (-1, 1), 8: (-128, 255), 16: (-32768, 65535), 32: (-(1 << 31), (1 << 32) - 1)}


def check_element(elem: T.Type, prefix: str, at: int) -> None:
    """The type written before the values: a number type (``at``: just after it)."""
    if isinstance(elem, T.OpaqueType) and _WORD.match(elem.text):  # no type at all
        raise TextError([f"{prefix}unknown type: {elem.text}",
                         f"{prefix}{_EXPECT_ELEMENT}'<<NULL TYPE>>'"], at)
    if not (isinstance(elem, T.ElementType) and elem.name in _ACCEPTED):
        raise TextError(f"{prefix}{_EXPECT_ELEMENT}'{type_text(elem, True)}'", at)


def literal_shape(value: object, elem: T.ElementType, prefix: str,
                  next_token: Callable[[int], int]) -> tuple[int, ...]:
    """The shape the brackets give (``()`` for one value), each value checked as it is
    read; ``next_token(offset)`` is where the token after ``offset`` starts."""
    if not isinstance(value, list):
        check_number(value, elem, prefix)
        return ()
    rest: tuple[int, ...] | None = None  # the shape of its first list item
    for item in _items(value, elem, prefix):
        if not isinstance(item, list):
            check_number(item, elem, prefix)  # a number beside lists: not compared
            continue
        first = None
        for sub in _items(item, elem, prefix):
            shape = literal_shape(sub, elem, prefix, next_token)
            if first is None:
                first = shape
            elif shape != first:  # reported after the item: a list, or a number's token
                end = sub.end if isinstance(sub, DenseList) else sub.start_pos + len(sub)
                raise _inconsistent(prefix, next_token(end))
        shape = (len(item), *first)  # type: ignore[misc]
        if rest is None:
            rest = shape
        elif shape != rest:
            raise _inconsistent(prefix, next_token(item.end))
    return (len(value), *(rest or ()))


def _items(values: list, elem: T.ElementType, prefix: str) -> list:
    """A list's items: at least one (`[]` is a value missing before its `]`)."""
    if not values:
        missing = Token("RSQB", "]")
        missing.start_pos = getattr(values, "end", 1) - 1
        check_number(missing, elem, prefix)
    return values


def _inconsistent(prefix: str, at: int) -> TextError:
    return TextError(f"{prefix}tensor literal is invalid; ranks are not consistent between "
                     "elements", at)


def check_number(tok: Token, elem: T.ElementType, prefix: str) -> None:
    """One value, read as the element type's literal."""
    if elem.is_float:
        _check_float(tok, elem)
    else:
        _check_int(tok, elem, prefix)


def _check_int(tok: Token, elem: T.ElementType, prefix: str) -> None:
    text, at = str(tok), tok.start_pos
    if text in ("true", "false"):
        if elem.bitwidth != 1:
            raise TextError(f"{prefix}expected integer value", at)
        return
    if tok.type not in ("SIGNED_INT", "HEX") or text.startswith("+"):
        # AsmParser::parseInteger says it, then the constant's parser says it again
        raise TextError([f"{prefix}expected integer value"] * 2, at)
    value = int(text, 16) if "x" in text else int(text)
    if not _I64[0] <= value <= _I64[1]:
        raise TextError([f"{prefix}integer value too large", f"{prefix}expected integer value"],
                        at)
    low, high = _BOUNDS.get(elem.bitwidth, _I64)
    if not low <= value <= high:
        raise TextError(f"{prefix}integer constant out of range for type", at)


def _check_float(tok: Token, elem: T.ElementType) -> None:
    """MLIR's Parser::parseFloatFromLiteral (its words, without the op's prefix)."""
    text, at = str(tok), tok.start_pos
    if tok.type == "FLOAT":  # one too large for its type is infinite
        return
    if tok.type == "SIGNED_INT" and not text.startswith("+"):
        raise TextError("unexpected decimal integer literal for a floating point value",
                        at, notes=("add a trailing dot to make the literal a float",))
    if tok.type == "HEX":
        if text.startswith("-"):
            raise TextError("hexadecimal float literal should not have a leading minus", at)
        if int(text, 16).bit_length() > value_bits(elem):
            raise TextError("hexadecimal float constant out of range for type", at)
        return
    if text not in ("inf", "nan"):
        raise TextError("expected floating point literal", at)
