"""The op format language: one declarative string per op (the op table's ``asm`` column)
says how the op is written, and both directions follow it: grammar_gen.py turns each
format into the op's rule of nanotile/grammar.lark (what the parser reads), and this
module prints ops by it.

It is a small cousin of MLIR's assembly-format language, and follows MLIR's spacing rules
when printing, so ops print exactly as tileirdisasm / cuda-tile-opt print them (including
the two spaces left where a directive printed nothing, as in ``ftof %x  : ...``).

Elements (separated by spaces):
  $x                 operand group x (one value, an optional one, or a comma list)
  type($x,$y)        a type (a list for a variadic group); the first name is printed, the
                     others must agree (operands) or receive it (results)
  type*($x)          one type written for every value of variadic group x
  qtype($x)          like type($x), printed with the dialect prefix (``!cuda_tile.tile<..>``),
                     as MLIR prints a plain ``type($x)`` of an op outside its own format
  @a  /  @a:angle    attribute a in its natural spelling / an enum as ``<value>``
  'kw                a keyword;   , : -> = [ ] ( )  punctuation
  ~  /  _            no space / one space (MLIR's `` and ` `)
  attr-dict          an optional ``{...}`` of extra attributes
  attr-dict-with-keyword   the same, printed ``attributes {...}`` (read with or without
                     the keyword)
  ?( ... )?          optional group, printed when its first operand/attribute/type is
                     present (a unit or defaulted attribute counts as absent)
  !name(args)        a named directive for custom syntax: its grammar rule is written
                     by hand in grammar.lark, its printer is in print_directives.py
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import TYPE_CHECKING, Any

from . import types as T
from .asm_attrs import (
    dense_values_text,
    hints_text,
    predicate_text,
    string_text,
    symbol_text,
    typed_attr_text,
)
from .enums import IntegerOverflow, enum_text
from .optable import AttrDef, OpDef

if TYPE_CHECKING:  # pragma: no cover
    from .printer import OpPrinter

# ---------------------------------------------------------------------------------------
# Enum spellings that differ from the member name


_SPELLING = {IntegerOverflow.none: "none", IntegerOverflow.nsw: "no_signed_wrap",
             IntegerOverflow.nuw: "no_unsigned_wrap", IntegerOverflow.nw: "no_wrap"}


def enum_spelling(member: Enum) -> str:
    """The text of an enum value (``IntegerOverflow.nsw`` is written ``no_signed_wrap``)."""
    return _SPELLING.get(member) or enum_text(member)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# Compiled format elements


@dataclass(frozen=True)
class Elem:
    kind: str  # lit space operand type attr attrdict opt custom
    name: str = ""
    names: tuple[str, ...] = ()
    style: str = ""
    children: tuple[Elem, ...] = ()


def _tokenize_format(fmt: str) -> list[str]:
    return fmt.split()


@cache
def compile_format(fmt: str) -> tuple[Elem, ...]:
    words = _tokenize_format(fmt)
    pos = 0

    def seq(until: str | None) -> list[Elem]:
        nonlocal pos
        items: list[Elem] = []
        while pos < len(words):
            w = words[pos]
            pos += 1
            if w == until:
                return items
            items.append(one(w))
        if until is not None:
            raise ValueError(f"unterminated group in format {fmt!r}")
        return items

    def one(w: str) -> Elem:
        if w == "?(":
            return Elem("opt", children=tuple(seq(")?")))
        if w == "~":
            return Elem("space", style="")
        if w == "_":
            return Elem("space", style=" ")
        if w == "attr-dict":
            return Elem("attrdict")
        if w == "attr-dict-with-keyword":
            return Elem("attrdict", style="keyword")
        if w.startswith("$"):
            return Elem("operand", name=w[1:])
        if w.startswith(("type(", "type*(", "qtype(")):
            inner = w[w.index("(") + 1:-1]
            style = "*" if w.startswith("type*") else "q" if w.startswith("qtype") else ""
            return Elem("type", names=tuple(n.lstrip("$") for n in inner.split(",")),
                        style=style)
        if w.startswith("@"):
            name, _, style = w[1:].partition(":")
            return Elem("attr", name=name, style=style)
        if w.startswith("!"):
            name, _, rest = w[1:].partition("(")
            args = tuple(a.strip().lstrip("$") for a in rest.rstrip(")").split(",") if a)
            return Elem("custom", name=name, names=args)
        if w.startswith("'"):
            return Elem("lit", name=w[1:])
        return Elem("lit", name=w)

    return tuple(seq(None))


# ---------------------------------------------------------------------------------------
# Custom directives


@dataclass(frozen=True)
class Directive:
    """How ``!name(args)`` prints (print_directives.py registers one per name)."""

    print: Callable[[OpPrinter, Any, tuple[str, ...]], str]
    spaced: bool = True  # gets MLIR's leading space like any other element
    present: Callable[[Any, tuple[str, ...]], bool] = lambda op, a: True  # for ?( )?


DIRECTIVES: dict[str, Directive] = {}


# ---------------------------------------------------------------------------------------
# Attribute values in their natural (custom-form) spelling


def attr_value_text(a: AttrDef, v: Any, style: str = "") -> str:
    k = a.kind
    if k == "enum":
        s = enum_spelling(v)
        return f"<{s}>" if style == "angle" else s
    if k == "int":
        return str(v)
    if k == "bool":
        return "true" if v else "false"
    if k == "string":
        return string_text(v)
    if k == "symbol":
        return symbol_text(v)
    if k == "type":
        return str(v)
    if k == "i32_array":
        return "[" + ", ".join(map(str, v)) + "]"
    if k == "bool_array":
        return "[" + ", ".join("true" if x else "false" for x in v) + "]"
    if k == "attr":
        return predicate_text(v)
    if k == "attr_array":
        return "[" + ", ".join(typed_attr_text(x) for x in v) + "]"
    if k == "hints":
        return hints_text(v)
    if k == "dense":
        return f"<{v.type.element}: {dense_values_text(v)}> : {v.type}"
    raise TypeError(f"cannot print attribute kind {k}")


def attr_present(a: AttrDef, attrs: dict[str, Any]) -> bool:
    """Whether an attribute is written: present and not equal to its default."""
    if a.name not in attrs:
        return False
    v = attrs[a.name]
    if a.kind == "unit":
        return bool(v)
    return a.default is None or v != a.default


# ---------------------------------------------------------------------------------------
# Printing with a format (MLIR's spacing rules)


class _PState:
    __slots__ = ("out", "punct", "space")

    def __init__(self) -> None:
        self.out: list[str] = []
        self.space = True
        self.punct = False


def _space_before(v: str, last_punct: bool) -> bool:
    if len(v) != 1 and v != "->":
        return True
    if last_punct:
        return v[0] not in ">)}],"
    return v[0] not in "<>(){}[],"


def print_format(pr: OpPrinter, op: Any, opdef: OpDef, elems: tuple[Elem, ...]) -> str:
    s = _PState()
    _print_elems(pr, op, opdef, elems, s)
    return "".join(s.out)


def _emit(s: _PState, text: str) -> None:
    if s.space or not s.punct:
        s.out.append(" ")
    s.out.append(text)
    s.punct = False
    s.space = True


def _print_elems(pr: OpPrinter, op: Any, opdef: OpDef, elems: tuple[Elem, ...],
                 s: _PState) -> None:
    for e in elems:
        k = e.kind
        if k == "lit":
            v = e.name
            if s.space and _space_before(v, s.punct):
                s.out.append(" ")
            s.out.append(v)
            s.space = not (len(v) == 1 and v in "<({[")
            s.punct = v[0] != "_" and not v[0].isalpha()
        elif k == "space":
            if e.style:
                s.out.append(" ")
                s.punct = False
            else:
                s.punct = True
            s.space = False
        elif k == "attrdict":
            text = pr.extra_attrs(op, opdef)
            if text:
                s.out.append(" attributes " + text if e.style == "keyword" else " " + text)
            s.punct = False
        elif k == "opt":
            if _anchor_present(pr, op, opdef, e.children):
                _print_elems(pr, op, opdef, e.children, s)
        elif k == "operand":
            _emit(s, ", ".join(pr.value(v) for v in pr.group(op, opdef, e.name)))
        elif k == "type":
            vals = pr.group(op, opdef, e.names[0])
            if e.style == "*":
                _emit(s, pr.type(vals[0].type) if vals else "")
            else:
                _emit(s, ", ".join(_type_text(pr, v.type, e.style) for v in vals))
        elif k == "attr":
            a = opdef.attr(e.name)
            assert a is not None
            if a.kind == "unit":
                continue
            _emit(s, attr_value_text(a, op.attributes[a.name], e.style))
        elif k == "custom":
            d = DIRECTIVES[e.name]
            text = d.print(pr, op, e.names)
            if d.spaced:
                _emit(s, text)
            else:
                s.out.append(text)
                s.punct = False
                s.space = True


# ---------------------------------------------------------------------------------------
# Printing with compiled formats: the same element rules as _print_elems, with each
# element's operand group and attribute definition found once per op rather than per
# printed op.

_PStep = Callable[["OpPrinter", Any, _PState], None]


def compile_printer(opdef: OpDef) -> Callable[[OpPrinter, Any], str]:
    """A function printing an op of this row (the text after its name)."""
    entry = _PRINTERS.get(opdef.name)
    if entry is not None and entry[0] is opdef.asm:
        return entry[1]
    elems = compile_format(format_of(opdef))
    steps = _print_steps(opdef, elems)

    def print_op(pr: OpPrinter, op: Any) -> str:
        st = _PState()
        for step in steps:
            step(pr, op, st)
        return "".join(st.out)
    _PRINTERS[opdef.name] = (opdef.asm, print_op)
    return print_op


_PRINTERS: dict[str, tuple[str | None, Callable[[OpPrinter, Any], str]]] = {}


def _group_getter(opdef: OpDef, name: str) -> Callable[[OpPrinter, Any], list[Any]]:
    """Values of operand/result group ``name``; direct indexing where the row allows it."""
    index = next((i for i, od in enumerate(opdef.operands) if od.name == name), None)
    if index is not None and not opdef.has_variable_operands:
        count = len(opdef.operands)

        def single(pr: OpPrinter, op: Any) -> list[Any]:
            if op.operand_segments is None and len(op.operands) == count:
                return [op.operands[index]]
            return pr.group(op, opdef, name)
        return single
    rindex = next((i for i, r in enumerate(opdef.results) if r.name == name), None)
    if index is None and rindex is not None and not any(r.variadic for r in opdef.results):
        def result(pr: OpPrinter, op: Any) -> list[Any]:
            return op.results[rindex:rindex + 1]
        return result
    return lambda pr, op: pr.group(op, opdef, name)


def _print_steps(opdef: OpDef, elems: tuple[Elem, ...]) -> tuple[_PStep, ...]:
    return tuple(s for s in (_print_step(opdef, e) for e in elems) if s is not None)


def _print_step(opdef: OpDef, e: Elem) -> _PStep | None:
    k = e.kind
    if k == "lit":
        v = e.name
        opens = not (len(v) == 1 and v in "<({[")
        punct = v[0] != "_" and not v[0].isalpha()

        def lit(pr: OpPrinter, op: Any, s: _PState) -> None:
            if s.space and _space_before(v, s.punct):
                s.out.append(" ")
            s.out.append(v)
            s.space = opens
            s.punct = punct
        return lit
    if k == "space":
        style = e.style

        def space(pr: OpPrinter, op: Any, s: _PState) -> None:
            if style:
                s.out.append(" ")
                s.punct = False
            else:
                s.punct = True
            s.space = False
        return space
    if k == "operand":
        get = _group_getter(opdef, e.name)

        def operand(pr: OpPrinter, op: Any, s: _PState) -> None:
            _emit(s, ", ".join([pr.value(v) for v in get(pr, op)]))
        return operand
    if k == "type":
        get = _group_getter(opdef, e.names[0])
        if e.style == "*":
            def type_star(pr: OpPrinter, op: Any, s: _PState) -> None:
                vals = get(pr, op)
                _emit(s, pr.type(vals[0].type) if vals else "")
            return type_star

        style = e.style

        def types(pr: OpPrinter, op: Any, s: _PState) -> None:
            _emit(s, ", ".join([_type_text(pr, v.type, style) for v in get(pr, op)]))
        return types
    if k == "attr":
        a = opdef.attr(e.name)
        assert a is not None
        if a.kind == "unit":
            return None
        style = e.style

        def attr(pr: OpPrinter, op: Any, s: _PState) -> None:
            _emit(s, attr_value_text(a, op.attributes[a.name], style))
        return attr
    if k == "opt":
        body = _print_steps(opdef, e.children)
        children = e.children

        def opt(pr: OpPrinter, op: Any, s: _PState) -> None:
            if _anchor_present(pr, op, opdef, children):
                for step in body:
                    step(pr, op, s)
        return opt

    def generic(pr: OpPrinter, op: Any, s: _PState) -> None:  # attr-dict, directives
        _print_elems(pr, op, opdef, (e,), s)
    return generic


def _type_text(pr: OpPrinter, t: Any, style: str) -> str:
    """A type as the printer spells it; style "q" (``qtype``) keeps the dialect prefix."""
    text = pr.type(t)
    if style == "q" and not text.startswith("!") and not isinstance(t, T.ElementType):
        return "!cuda_tile." + text
    return text


def _anchor_present(pr: OpPrinter, op: Any, opdef: OpDef, elems: tuple[Elem, ...]) -> bool:
    for e in elems:
        if e.kind == "operand":
            return bool(pr.group(op, opdef, e.name))
        if e.kind == "type":
            return bool(pr.group(op, opdef, e.names[0]))
        if e.kind == "attr":
            a = opdef.attr(e.name)
            assert a is not None
            return attr_present(a, op.attributes)
        if e.kind == "custom":
            return DIRECTIVES[e.name].present(op, e.names)
    return True


# ---------------------------------------------------------------------------------------
# Where formats live


def format_of(opdef: OpDef) -> str:
    """The op's format string: its op-table ``asm`` column."""
    if opdef.asm is None:
        raise KeyError(f"op '{opdef.name}' has no text format in the op table")
    return opdef.asm


from . import print_directives  # noqa: F401  (registers the named directives)
