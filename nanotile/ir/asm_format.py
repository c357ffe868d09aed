"""The op format language: one declarative string per op (the op table's ``asm`` column),
interpreted by one engine that both parses an op's text and prints it.

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
                     present (a unit or defaulted attribute counts as absent); parsed when
                     the next token can start its first element
  !name(args)        a named directive for custom syntax (see DIRECTIVES)
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
    from .asm_print import OpPrinter
    from .parser import OpParser, OpState

# ---------------------------------------------------------------------------------------
# Enum spellings that differ from the member name


_SPELLING = {IntegerOverflow.none: "none", IntegerOverflow.nsw: "no_signed_wrap",
             IntegerOverflow.nuw: "no_unsigned_wrap", IntegerOverflow.nw: "no_wrap"}


def enum_spelling(member: Enum) -> str:
    """The text of an enum value (``IntegerOverflow.nsw`` is written ``no_signed_wrap``)."""
    return _SPELLING.get(member) or enum_text(member)  # type: ignore[arg-type]


def enum_parse(cls: type[Enum], text: str) -> Enum | None:
    return _enum_table(cls).get(text)


@cache
def _enum_table(cls: type[Enum]) -> dict[str, Enum]:
    """Spelling -> member; the first member with a spelling wins, as a linear search."""
    table: dict[str, Enum] = {}
    for m in cls:
        table.setdefault(enum_spelling(m), m)
        table.setdefault(enum_text(m), m)
    return table


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
    parse: Callable[[OpParser, OpState, tuple[str, ...]], None]
    print: Callable[[OpPrinter, Any, tuple[str, ...]], str]
    can_start: Callable[[OpParser, tuple[str, ...]], bool] = lambda p, a: False
    spaced: bool = True  # gets MLIR's leading space like any other element
    present: Callable[[Any, tuple[str, ...]], bool] = lambda op, a: True


DIRECTIVES: dict[str, Directive] = {}


def directive(name: str, **kw: Any) -> Callable[[Callable], Callable]:
    def deco(parse_fn: Callable) -> Callable:
        DIRECTIVES[name] = Directive(parse=parse_fn, **kw)
        return parse_fn
    return deco


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
# Parsing with a format


def parse_format(p: OpParser, st: OpState, elems: tuple[Elem, ...]) -> None:
    for e in elems:
        _parse_elem(p, st, e)


def _parse_elem(p: OpParser, st: OpState, e: Elem) -> None:
    k = e.kind
    if k == "lit":
        p.expect(e.name)
    elif k == "operand":
        od = st.opdef.operand(e.name)
        if od is None:
            raise AssertionError(f"format of {st.opdef.name} names unknown operand {e.name}")
        if od.kind == "variadic":
            st.operands[e.name] = p.parse_operand_list()
        else:
            st.operands[e.name] = [p.parse_operand()]
    elif k == "type":
        _parse_type_elem(p, st, e)
    elif k == "attr":
        a = st.opdef.attr(e.name)
        assert a is not None, (st.opdef.name, e.name)
        if a.kind == "unit":
            st.attrs[a.name] = True
        else:
            st.attrs[a.name] = parse_attr_value(p, a, e.style)
    elif k == "attrdict":
        if p.at("{"):
            st.attrs.update(p.parse_extra_attr_dict(st.opdef))
    elif k == "opt":
        if _can_start(p, st, e.children[0]):
            parse_format(p, st, e.children)
    elif k == "custom":
        DIRECTIVES[e.name].parse(p, st, e.names)


# ---------------------------------------------------------------------------------------
# Formats compiled to closures (the parser's hot path)
#
# parse_format interprets a format's elements one by one, looking each operand and
# attribute up by name on every op. compile_parser does that work once per op: each
# element becomes a closure with its operand/attribute definitions bound, and the common
# cases (one operand, one cached type) take a short path; anything else falls back to
# the interpreting code above, so both read exactly the same language.

_Step = Callable[["OpParser", "OpState"], None]


def compile_parser(opdef: OpDef) -> _Step:
    """A function reading the op's text (after its name) into an OpState."""
    entry = _PARSERS.get(opdef.name)
    if entry is not None and entry[0] is opdef.asm:
        return entry[1]
    fn = _sequence(opdef, compile_format(format_of(opdef)))
    _PARSERS[opdef.name] = (opdef.asm, fn)
    return fn


_PARSERS: dict[str, tuple[str | None, _Step]] = {}  # op name -> (its format, parser)


def _sequence(opdef: OpDef, elems: tuple[Elem, ...]) -> _Step:
    steps = tuple(s for s in (_step(opdef, e) for e in elems) if s is not None)
    if len(steps) == 1:
        return steps[0]

    def run(p: OpParser, st: OpState) -> None:
        for step in steps:
            step(p, st)
    return run


def _step(opdef: OpDef, e: Elem) -> _Step | None:
    k = e.kind
    if k == "space":
        return None
    if k == "lit":
        return _lit_step(e.name)
    if k == "operand":
        return _operand_step(opdef, e)
    if k == "type" and e.style != "*":
        return _type_step(opdef, e)
    if k == "attr":
        a = opdef.attr(e.name)
        assert a is not None, (opdef.name, e.name)
        if a.kind == "unit":
            def unit(p: OpParser, st: OpState) -> None:
                st.attrs[name] = True
            name = a.name
            return unit
        style = e.style

        def attr(p: OpParser, st: OpState) -> None:
            st.attrs[a.name] = parse_attr_value(p, a, style)
        return attr
    if k == "opt":
        first = e.children[0]
        body = _sequence(opdef, e.children)
        if first.kind == "lit":
            word = first.name

            def opt_lit(p: OpParser, st: OpState) -> None:
                if p.at(word):
                    body(p, st)
            return opt_lit

        def opt(p: OpParser, st: OpState) -> None:
            if _can_start(p, st, first):
                body(p, st)
        return opt
    if k == "attrdict":
        def attrdict(p: OpParser, st: OpState) -> None:
            t = p.toks[p.pos]
            if t.text == "{" and t.kind == "p":
                st.attrs.update(p.parse_extra_attr_dict(st.opdef))
        return attrdict
    if k == "custom":
        d, names = DIRECTIVES[e.name], e.names

        def custom(p: OpParser, st: OpState) -> None:
            d.parse(p, st, names)
        return custom

    def generic(p: OpParser, st: OpState) -> None:
        _parse_elem(p, st, e)
    return generic


def _lit_step(text: str) -> _Step:
    def lit(p: OpParser, st: OpState) -> None:
        t = p.toks[p.pos]
        if t.text == text and t.kind in "pwn":
            p.pos += 1
        else:
            p.expect(text)
    return lit


def _operand_step(opdef: OpDef, e: Elem) -> _Step:
    od = opdef.operand(e.name)
    if od is None:
        raise AssertionError(f"format of {opdef.name} names unknown operand {e.name}")
    name = e.name
    if od.kind == "variadic":
        def operands(p: OpParser, st: OpState) -> None:
            st.operands[name] = p.parse_operand_list()
        return operands

    def operand(p: OpParser, st: OpState) -> None:
        t = p.toks[p.pos]
        if t.kind == "v":
            v = p.scopes[-1].get(t.text[1:])  # the innermost scope first, as lookup_value
            if v is not None:
                p.pos += 1
                st.operands[name] = [v]
                return
        st.operands[name] = [p.parse_operand()]
    return operand


def _type_step(opdef: OpDef, e: Elem) -> _Step:
    """``type($x, ...)``: the short path reads one cached type for single values."""
    from .parser import _TYPE_CACHE

    def generic(p: OpParser, st: OpState) -> None:
        _parse_type_elem(p, st, e)

    kinds = []
    for n in e.names:
        is_operand = opdef.operand(n) is not None
        result = next((r for r in opdef.results if r.name == n), None)
        if is_operand == (result is not None):
            return generic  # unknown or ambiguous name: let the general code decide
        if result is not None and result.variadic:
            return generic
        if is_operand and opdef.operand(n).kind == "variadic":  # type: ignore[union-attr]
            return generic
        kinds.append((n, is_operand))
    names = tuple(kinds)
    cache = _TYPE_CACHE

    def one_type(p: OpParser, st: OpState) -> None:
        operands = st.operands
        for n, is_operand in names:  # every value single: all absent or one each
            if is_operand and len(operands.get(n, ())) != 1:
                return generic(p, st)
        tok = p.toks[p.pos]
        ty = cache.get(tok.text)
        if ty is None:
            ty = p.parse_type()
        else:
            p.pos += 1
        for n, is_operand in names:
            if is_operand:
                st.checks.append((operands[n][0], ty, tok))
            else:
                st.rtypes[n] = [ty]
    return one_type


def _can_start(p: OpParser, st: OpState, e: Elem) -> bool:
    k = e.kind
    if k == "lit":
        return p.at(e.name)
    if k == "operand":
        return p.peek().kind == "v"
    if k == "type":
        return p.at_type()
    if k == "attr":
        a = st.opdef.attr(e.name)
        assert a is not None
        tok = p.peek()
        if a.kind == "enum":  # any keyword: a wrong one is reported as a wrong value
            return tok.kind == "w"
        if a.kind in ("int",):
            return tok.kind == "n"
        if a.kind == "hints":
            return tok.kind == "A"
        return False
    if k == "custom":
        return DIRECTIVES[e.name].can_start(p, e.names)
    return False


def _parse_type_elem(p: OpParser, st: OpState, e: Elem) -> None:
    first = e.names[0]
    if e.style == "*":
        tok = p.peek()
        t = p.parse_type()
        if st.opdef.name == "get_tensor_shape":
            src = st.operands["src"][0].type
            if not isinstance(src, T.TensorViewType):
                from .asm_attrs import type_text

                raise p.error(f"expected tensor_view, got '{type_text(src, True)}'", tok)
        for name in e.names:
            if name in st.operands:
                for v in st.operands[name]:
                    st.checks.append((v, t, tok))
            else:  # as many results as the operand's index space has dimensions
                st.rtypes[name] = [t] * st.infer_count(name)
        return
    if first in st.operands:
        count: int | None = len(st.operands[first])
    else:
        count = st.result_count(first)
    tok = p.peek()
    types = p.parse_type_list(count)
    for name in e.names:
        if name in st.operands:
            vals = st.operands[name]
            if len(vals) != len(types):
                raise p.error(f"expected {len(vals)} types, got {len(types)}", tok)
            for v, t in zip(vals, types):
                st.checks.append((v, t, tok))
        else:
            n = st.result_count(name)
            if n is not None and n != len(types):
                raise p.error(f"expected {n} result types, got {len(types)}", tok)
            st.rtypes[name] = list(types)


_ENUM_WHAT = {"signedness": "signedness", "signedness_lhs": "signedness",
              "signedness_rhs": "signedness", "comparison_predicate": "'comparison_predicate'",
              "comparison_ordering": "'comparison_ordering'"}
_MEMORY_ENUMS = ("memory_ordering_semantics", "memory_scope")
_LIST_FIRST = {"signed": 0, "ordered": 0}
# loads and stores read their memory keywords with their own messages
_CUSTOM_MEMORY_OPS = ("load_ptr_tko", "store_ptr_tko", "load_view_tko", "store_view_tko")  # MLIR lists these before their opposites


def enum_errors(opname: str, a: AttrDef, text: str, is_keyword: bool) -> list[str]:
    """MLIR's messages for a bad enum keyword (both, when it is not a keyword at all)."""
    names = [enum_spelling(m) for m in a.enum]  # type: ignore[union-attr]
    names.sort(key=lambda n: _LIST_FIRST.get(n, 1))
    what = _ENUM_WHAT.get(a.name)
    if what is None:  # enums read by MLIR's generated attribute parser
        if a.name in _MEMORY_ENUMS and is_keyword and opname in _CUSTOM_MEMORY_OPS:
            return [(f'invalid {a.name} attribute specification. Got "{text}" but expect '
                     f'one of: {", ".join(names)}')]
        return [(f"expected string or keyword containing one of the following enum values "
                 f"for attribute '{a.name}' [{', '.join(names)}]")]
    one_of = (f"custom op 'cuda_tile.{opname}' expected {what} to be one of: "
              "{" + ", ".join(f"'{n}'" for n in names) + "}")
    if is_keyword:
        return [one_of]
    return [f"custom op 'cuda_tile.{opname}' expected valid keyword", one_of]


def parse_attr_value(p: OpParser, a: AttrDef, style: str = "") -> Any:
    """Parse one attribute written in its natural (custom-form) spelling."""
    tok = p.peek()
    k = a.kind
    if k == "enum":
        t = p.next()
        if style == "angle":
            text = t.text[1:-1].strip() if t.kind == "A" else ""
        else:
            text = t.text if t.kind == "w" else ""
        m = enum_parse(a.enum, text) if text else None  # type: ignore[arg-type]
        if m is None:
            raise p.errors(enum_errors(p.current_op, a, t.text, bool(text)), t)
        return m
    if k == "int":
        t = p.next()
        if t.kind != "n" or not t.text.lstrip("-").isdigit():
            raise p.error(f"expected integer value for {a.name}", t)
        return int(t.text)
    if k == "bool":
        t = p.next()
        if t.text not in ("true", "false"):
            raise p.error(f"expected 'true' or 'false' for {a.name}", t)
        return t.text == "true"
    if k == "string":
        t = p.next()
        if t.kind != "q":
            raise p.error("expected attribute value", t)
        return p.string_value(t)
    if k == "symbol":
        t = p.next()
        if t.kind != "s":
            raise p.error("expected valid '@'-identifier for symbol name", t)
        return p.symbol_value(t)
    if k == "i32_array":
        return tuple(p.parse_int_list())
    if k == "bool_array":
        return tuple(bool(x) for x in p.parse_int_list())
    if k == "attr":
        t = p.next()
        if t.kind not in ("a", "h"):
            raise p.error(f"expected assume predicate attribute, found '{t.text}'", t)
        return p.sub(t, "predicate")
    if k == "attr_array":
        return p.parse_typed_attr_array()
    if k == "hints":
        t = p.next()
        if t.kind not in ("A", "h", "a"):
            raise p.error("expected optimization hints '<...>'", t)
        return p.sub(t, "hints")
    if k == "type":
        return p.parse_type()
    raise p.error(f"cannot parse attribute {a.name} here", tok)


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
