"""Types, attribute values and locations of the text format, built while Lark parses.

``ValueBuilder`` holds the Transformer callbacks of grammar.lark's rules that need no
context: each builds an immutable value (a Type, an attribute, a location) from its
children. The SSA values, ops, regions and modules are nanotile/ir/text_reader.py's,
which extends this class. A callback that refuses its input raises ``TextError``; the
reader places it at the text the rule covers (``self.start``) unless it says where.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import MISSING, fields, is_dataclass, replace
from typing import Any, NamedTuple

from lark import Token, Transformer, Tree

from . import attrs as A
from . import types as T
from .asm_attrs import (
    ELEMENT_ALIASES,
    AsmError,
    parse_float_literal,
    parse_int_literal,
    parse_string_literal,
    signed,
    type_text,
)
from .layouts import parse_layout
from .limits import MAX_NESTING
from .type_rules import (
    check_gather_scatter_view_type,
    check_partition_view_type,
    check_pointer_type,
    check_strided_view_type,
    check_tensor_view_type,
    check_tile_type,
)


class TextError(Exception):
    """Input the reader refuses: one or more messages (MLIR sometimes gives two at one
    place), at ``offset`` in the text (None: the start of the rule being read); ``notes``
    go with the first message, at the same place."""

    def __init__(self, messages: str | list[str], offset: int | None = None,
                 notes: tuple[str, ...] = ()) -> None:
        self.messages = [messages] if isinstance(messages, str) else messages
        super().__init__(self.messages[0])
        self.offset = offset
        self.notes = notes


class EnumRaw(NamedTuple):
    """``#cuda_tile.rounding<zero>`` before the op says which enum it must be."""

    name: str
    value: Token


class DenseRaw(NamedTuple):
    """``dense<[1, 2]> : tile<2xi32>`` before the op's attribute kind converts it."""

    values: Any
    type: T.Type | None


class DenseList(list):
    """``[...]`` of dense values, with the offset just after its ``]``."""

    end = 0


class ArrayRaw(NamedTuple):
    """``array<i32: 1, 2>``."""

    element: str
    values: tuple[str, ...]


class AliasRef(NamedTuple):
    """A use of ``#name``, replaced by its definition once the whole file is read."""

    name: str
    offset: int


class DILocRaw(NamedTuple):
    """``di_loc<loc(...) in #scope>`` whose parts may still be alias uses."""

    location: Any
    scope: Any
    offset: int


_WORD_TYPES: dict[str, T.Type] = {**T.ELEMENT_TYPES, "token": T.TOKEN,
                                  **{a: T.ELEMENT_TYPES[n] for a, n in ELEMENT_ALIASES.items()}}

def _struct(cls: type, written: list[tuple[str, Any]]) -> Any:
    """A cuda-tile struct(params) debug-info attribute from its ``key = value`` fields,
    checked as MLIR does: the parameters are the fields of ``cls`` (those with a default
    may be left out), spelled in camelCase (linkage_name: linkageName)."""
    if not written:
        raise TextError("expected a parameter name in struct")
    params = {re.sub("_(.)", lambda m: m[1].upper(), f.name): f for f in fields(cls)}
    out: dict[str, Any] = {}
    for key, value in written:
        if key not in params or params[key].name in out:
            raise TextError(f"duplicate or unknown struct parameter name: {key}")
        out[params[key].name] = value
    for key, field in params.items():
        if field.name not in out and field.default is MISSING:
            raise TextError(f"struct is missing required parameter: {key}")
    return cls(**out)


_I32_MAX = 2**31 - 1
_I64_MAX = 2**63 - 1


def unquote(tok: Any) -> str:
    """A name, or the value of a string literal."""
    text = str(tok)
    return parse_string_literal(text) if text.startswith('"') else text


def _dims(shape: Token | None) -> list[str]:
    """The dimensions of a SHAPE token (`4x?x`)."""
    return str(shape)[:-1].split("x") if shape is not None else []


def _dimension(text: str, tok: Token) -> int:
    value = int(text)
    if value > _I64_MAX:  # MLIR's dimension lists hold int64 values
        raise TextError("invalid dimension", tok.start_pos)
    return value


def int64_literal(tok: Token, prefix: str = "") -> int:
    """A decimal or hexadecimal integer token read as MLIR reads an int64_t (``prefix``:
    an op parser's `custom op '...' `, which its messages start with)."""
    text = str(tok)
    value = int(text, 16) if "x" in text else int(text)
    if not -_I64_MAX - 1 <= value <= _I64_MAX:
        raise TextError(f"{prefix}integer value too large", tok.start_pos)
    return value


def _stride(tok: Token) -> int | None:
    """A tensor_view stride: `?`, or a positive int64 (kDynamic spelled out is not `?`)."""
    if str(tok) == "?":
        return None
    value = int64_literal(tok)
    if value <= 0:
        raise TextError(f"expected strictly positive integer, got {value}", tok.start_pos)
    return value


def _view_dim_map(tile: tuple[int, ...], dim_map: tuple[int, ...] | None) -> Any:
    """None for the identity map of the tile's dimensions (the default, not printed); a
    map of another length stays, for the verifier to refuse."""
    return None if dim_map == tuple(range(len(tile))) else dim_map


def nesting(value: Any) -> int:
    """How deep lists and dictionaries nest in an attribute value (1 for a flat one)."""
    if isinstance(value, A.DictAttr):
        return 1 + max((nesting(v) for _, v in value.entries), default=0)
    if type(value) in (list, tuple):
        return 1 + max((nesting(v) for v in value), default=0)
    return 0


def check_nesting(value: Any, what: str) -> Any:
    if nesting(value) > MAX_NESTING:
        raise TextError(f"{what} nested too deeply (limit {MAX_NESTING})")
    return value


class ValueBuilder(Transformer):
    """Callbacks for types, constants, attributes and locations (no state)."""

    start = 0  # offsets of the text of the rule being reduced (set by the parser)
    end = 0
    stack_starts: Sequence[int] = ()  # the parser's stack of offsets: the rule's
    size = 0                          # children start at its last `size` entries

    def __default__(self, data: str, children: list[Any], meta: Any) -> Any:
        """A rule without a callback of its own (values, types, iter_values, ...) stands
        for the list of its children, as text_lalr's loop has it; Lark's own loop splices
        the Tree of a `_rule` into its parent's children."""
        return Tree(data, children, meta) if data.startswith("_") else children

    def child_start(self, i: int) -> int:
        """Where child ``i`` of the rule being reduced starts (counting every part of
        the rule, punctuation too; -1: the part before the rule; ``size - 1``: its last)."""
        k = len(self.stack_starts) - self.size + i
        if -1 <= i < self.size and 0 <= k < len(self.stack_starts):
            return self.stack_starts[k]
        return self.start

    # ------------------------------------------------------------------------ types
    def element(self, c: list[Token]) -> T.Type:
        name = str(c[0])
        return _WORD_TYPES.get(name) or T.OpaqueType(name)  # tile_type says what is wrong

    def word_type(self, c: list[Token]) -> T.Type:
        t = _WORD_TYPES.get(str(c[0]))
        if t is None:
            raise TextError(f"expected valid keyword (a type), found '{c[0]}'")
        return t

    def opaque_type(self, c: list[Token]) -> T.Type:
        return T.OpaqueType(str(c[0]))

    def tile_type(self, c: list[Any]) -> T.Type:
        shape_tok, elem, layout = c
        dims = _dims(shape_tok)
        if "?" in dims:
            raise TextError("expected static shape", shape_tok.start_pos)
        shape = tuple(int(d) for d in dims)
        message = check_tile_type(shape, elem)
        if message:
            raise TextError(message)
        if layout is None:
            return T.TileType(shape, elem)
        try:
            return T.TileType(shape, elem, parse_layout(str(layout), shape))
        except (ValueError, KeyError, IndexError) as e:
            detail = f"missing field {e}" if isinstance(e, KeyError) else str(e)
            raise TextError(f"invalid layout {layout}: {detail}", layout.start_pos) from None

    def ptr_type(self, c: list[Any]) -> T.Type:
        message = check_pointer_type(c[0])
        if message:
            raise TextError(message)
        return T.PointerType(c[0])

    def tensor_view(self, c: list[Any]) -> T.Type:
        """cuda-tile's TensorViewType::parse: strides after the element type exactly when
        the rank is not 0; then the type's own rules, reported at its `<`."""
        shape_tok, elem, strides = c
        shape = tuple(None if d == "?" else _dimension(d, shape_tok)
                      for d in _dims(shape_tok))
        items, at = strides if strides is not None else (None, 0)
        values: tuple[int | None, ...] = ()
        if not shape and strides is not None:
            if items is not None:
                raise TextError("strides must not be provided for 0-d tiles", at)
            raise TextError("unexpected token after element type in 0-d tensor_view",
                            self.child_start(self.size - 1))
        if shape:
            if items is None:
                raise TextError("expected 'strides'", self.child_start(self.size - 1))
            values = tuple(_stride(t) for t in items)
        return self._checked(check_tensor_view_type(elem, shape, values),
                             T.TensorViewType(elem, shape, values))

    def view_strides(self, c: list[Any]) -> tuple[list[Token] | None, int]:
        """What follows a tensor_view's element type: the strides as written (None for a
        lone comma) and where the part after the keyword `strides` starts."""
        return (c[0], self.child_start(2))

    def tile_dims(self, c: list[Token]) -> tuple[int, ...]:
        """`(8x8)`: each dimension a positive i32 (cuda-tile's parseViewTileShape)."""
        tok = c[0]
        dims = tuple(_dimension(d, tok) for d in str(tok).split("x")) if tok is not None else ()
        for i, d in enumerate(dims):
            if d <= 0 or d > _I32_MAX:
                raise TextError(f"tile dimension {i} exceeds i32 limitations (got {d}, "
                                f"expected strictly positive and less than or equal to "
                                f"{_I32_MAX})", self.start)
        return dims

    def padding(self, c: list[Token]) -> T.PaddingValue:
        try:
            return T.PaddingValue[str(c[0])]
        except KeyError:
            names = ", ".join(p.name for p in T.PaddingValue)
            raise TextError(f'invalid padding_value attribute specification. Got "{c[0]}" '
                            f"but expect one of: {names}", self.child_start(2)) from None

    def _view_base(self, t: T.Type, after: int) -> T.TensorViewType:
        """The view's tensor_view; anything else is refused where the part after it starts
        (the rule's ``after``-th part from its end)."""
        if not isinstance(t, T.TensorViewType):
            raise TextError(f"expected 'tensor_view' type, but got '{type_text(t, True)}'",
                            self.child_start(self.size - after))
        return t

    def _checked(self, message: str | None, view: T.Type) -> T.Type:
        """A view type (a tensor_view too), unless its own rules refuse it (reported at
        its `<`)."""
        if message:
            raise TextError(message, self.child_start(1))
        return view

    def partition_view(self, c: list[Any]) -> T.Type:
        dims, pad, base, dim_map = c
        base = self._view_base(base, 1 if dim_map is None else 2)  # [dim_map] ">" after it
        return self._checked(check_partition_view_type(dims, base, dim_map, pad),
                             T.PartitionViewType(dims, base, _view_dim_map(dims, dim_map), pad))

    def strided_view(self, c: list[Any]) -> T.Type:
        dims, strides, pad, base, dim_map = c
        base = self._view_base(base, 1 if dim_map is None else 2)
        return self._checked(check_strided_view_type(dims, strides, base, dim_map, pad),
                             T.StridedViewType(dims, strides, base, _view_dim_map(dims, dim_map),
                                               pad))

    def gather_scatter_view(self, c: list[Any]) -> T.Type:
        dims, pad, base, sparse_dim = c
        base = self._view_base(base, 5)  # "," "sparse_dim" "=" INT ">" after it
        return self._checked(
            check_gather_scatter_view_type(dims, base, int(sparse_dim), pad),
            T.GatherScatterViewType(dims, base, int(sparse_dim), pad))

    def function_type(self, c: list[Any]) -> T.FunctionType:
        ins, out = c
        outs = out if isinstance(out, list) else [out] if out is not None else []
        return T.FunctionType(tuple(ins or ()), tuple(outs))

    # ------------------------------------------------------------------------ constants
    def dense_list(self, c: list[Any]) -> list[Any]:
        values = DenseList(c)
        values.end = self.end
        return check_nesting(values, "constant")

    def number_attr(self, c: list[Any]) -> Any:
        """``1.0 : f32`` / ``0 : i32`` / ``true`` -> FloatAttr / IntegerAttr."""
        tok, ty = c
        text = str(tok)
        if text in ("true", "false"):
            return A.IntegerAttr(int(text == "true"), T.I1 if ty is None else ty)
        if ty is None:
            ty = T.F64 if ("." in text or "e" in text.lower()) and "0x" not in text else T.I64
        elif not isinstance(ty, T.ElementType):
            raise TextError(f"expected an element type, got '{ty}'")
        try:
            if ty.is_float:
                return A.FloatAttr(parse_float_literal(text, ty), ty)
            if "." in text:
                raise AsmError(f"expected integer value for type {ty}")
            return A.IntegerAttr(signed(parse_int_literal(text, ty), ty.bitwidth), ty)
        except AsmError as e:
            raise TextError(e.message, tok.start_pos) from None

    def int_list(self, c: list[Token]) -> tuple[int, ...]:
        return tuple(int(str(x) == "true") if str(x) in ("true", "false") else int(x)
                     for x in c)

    def dense_attr(self, c: list[Any]) -> DenseRaw:
        values, ty = c
        return DenseRaw([] if values is None else values, ty)

    def array_attr(self, c: list[Any]) -> ArrayRaw:
        return ArrayRaw(str(c[0]), tuple(str(x) for x in c[1:]))

    def enum_attr(self, c: list[Token]) -> EnumRaw:
        return EnumRaw(str(c[0]), c[1])

    def attr_list(self, c: list[Any]) -> list[Any]:
        return check_nesting(c, "attribute")

    # ------------------------------------------------------------------------ predicates
    def div_by(self, c: list[Token]) -> A.DivByAttr:
        return A.DivByAttr(*(None if x is None else int(x) for x in c))

    def bounded(self, c: list[Token]) -> A.BoundedAttr:
        return A.BoundedAttr(*(None if str(x) == "?" else int(x) for x in c))  # lo, hi

    def same_elements(self, c: list[Any]) -> A.SameElementsAttr:
        return A.SameElementsAttr(c[0])

    # ------------------------------------------------------------------------ hints
    def hint_entry(self, c: list[Any]) -> tuple[str, Any]:
        key, value = unquote(c[0]), c[1]
        text = str(value)  # typed as bytecode holds them (cuTile writes hint integers as i32)
        if value is None or text in ("true", "false"):
            return (key, A.BoolAttr(value is None or text == "true"))
        if isinstance(value, A.DictAttr):
            return (key, value)
        if text.startswith('"'):
            return (key, A.StringAttr(parse_string_literal(text)))
        return (key, A.IntegerAttr(int(text), T.I32))

    def hint_dict(self, c: list[Any]) -> A.DictAttr:
        return check_nesting(A.DictAttr(tuple(c)), "optimization hints")

    def hint_target(self, c: list[Any]) -> tuple[str, A.DictAttr, int]:
        key, value = c
        name = unquote(key)
        if not isinstance(value, A.DictAttr):
            shown = str(value) if str(value) in ("true", "false") or str(value).startswith('"') \
                else f"{value} : i64"
            raise TextError(f"custom op 'cuda_tile.entry' expected dictionary attribute for "
                            f"optimization_hints entry `{name}` got value={shown}", self.end)
        return (name, value, self.end)

    def hints(self, c: list[Any]) -> A.OptimizationHintsAttr:
        seen: set[str] = set()
        for name, _, end in c:
            if name in seen:
                # where cuda-tile's parser stands once it has read the entry's value: the
                # next token (`,` or `>`)
                at = len(self.text) - len(self.text[end:].lstrip())  # type: ignore[attr-defined]
                raise TextError(f"duplicate optimization_hints key `{name}`", at)
            seen.add(name)
        return A.OptimizationHintsAttr(tuple((n, d) for n, d, _ in c))

    # ------------------------------------------------------------------------ locations
    def file_loc(self, c: list[Token]) -> A.FileLineColLoc:
        return A.FileLineColLoc(parse_string_literal(str(c[0])), int(c[1]), int(c[2]))

    def name_loc(self, c: list[Any]) -> A.NameLoc:
        return A.NameLoc(parse_string_literal(str(c[0])), c[1])

    def unknown_loc(self, c: list[Any]) -> A.UnknownLoc:
        return A.UnknownLoc()

    def callsite_loc(self, c: list[Any]) -> A.CallSiteLoc:
        return A.CallSiteLoc(c[0], c[1])

    def fused_loc(self, c: list[Any]) -> A.FusedLoc:
        return A.FusedLoc(tuple(c))

    def alias_ref(self, c: list[Token]) -> AliasRef:
        return AliasRef(str(c[0]), c[0].start_pos)

    # ------------------------------------------------------------------------ debug info
    def di_file(self, c: list[Token]) -> A.DIFileAttr:
        return A.DIFileAttr(parse_string_literal(str(c[0])), parse_string_literal(str(c[1])))

    def di_compile_unit(self, c: list[Any]) -> A.DICompileUnitAttr:
        return _struct(A.DICompileUnitAttr, c)

    def di_field(self, c: list[Any]) -> tuple[str, Any]:
        value = c[1]
        if isinstance(value, Token):
            text = str(value)
            value = parse_string_literal(text) if text.startswith('"') else int(text)
        return (str(c[0]), value)

    def di_subprogram(self, c: list[Any]) -> A.DISubprogramAttr:
        return _struct(A.DISubprogramAttr, c)

    def di_lexical_block(self, c: list[Any]) -> A.DILexicalBlockAttr:
        return _struct(A.DILexicalBlockAttr, c)

    def di_loc(self, c: list[Any]) -> Any:
        return DILocRaw(c[0], c[1], self.start)


# ---------------------------------------------------------------------------------------
# Alias uses, resolved once the file is read


def has_refs(x: Any) -> bool:
    if isinstance(x, AliasRef | DILocRaw):
        return True
    if type(x) is tuple:
        return any(has_refs(v) for v in x)
    if is_dataclass(x) and not isinstance(x, type):
        return any(has_refs(getattr(x, f.name)) for f in fields(x))
    return False


def resolve_refs(x: Any, lookup: Any, depth: int = 0) -> Any:
    """``x`` with every AliasRef replaced by ``lookup(ref)``'s value."""
    if depth > MAX_NESTING:
        raise TextError(f"locations nested too deeply (limit {MAX_NESTING})")
    if isinstance(x, AliasRef):
        return lookup(x)
    if isinstance(x, DILocRaw):
        loc = resolve_refs(x.location, lookup, depth + 1)
        if not isinstance(loc, A.FileLineColLoc):
            raise TextError("di_loc needs a file:line:col location", x.offset)
        scope = resolve_refs(x.scope, lookup, depth + 1)
        return A.DILocAttr(scope, loc.filename, loc.line, loc.column)
    if type(x) is tuple:
        return tuple(resolve_refs(v, lookup, depth + 1) for v in x)
    if is_dataclass(x) and not isinstance(x, type) and has_refs(x):
        return replace(x, **{f.name: resolve_refs(getattr(x, f.name), lookup, depth + 1)
                             for f in fields(x)})
    return x
