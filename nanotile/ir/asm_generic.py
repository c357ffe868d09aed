"""MLIR's generic op form: ``%r = "cuda_tile.addf"(%a, %b) <{...}> ({...}) {...} : (...) -> ...``.

Attributes are read by the kind the op table gives them (an enum from
``#cuda_tile.rounding<zero>``, an i32 array from ``array<i32: 1, 2>``, ...). Ops of other
dialects are kept as they are (attributes as their text) when unregistered ops are allowed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import attrs as A
from . import types as T
from .asm_attrs import AsmError, make_dense, strip_prefix
from .asm_format import enum_parse
from .core import Block, Operation, Region, make_op
from .optable import AttrDef, OpDef, lookup

if TYPE_CHECKING:  # pragma: no cover
    from .asm_lexer import Token
    from .parser import OpParser


def parse_generic_op(p: OpParser, total: int | None) -> Operation:
    name_tok = p.next()
    full = p.string_value(name_tok)
    p.expect("(")
    operands = p.parse_operand_list()
    p.expect(")")
    props: dict[str, tuple[Any, Token]] = {}
    t = p.peek()
    if t.kind == "A" and t.text.startswith("<{"):
        p.next()
        sub = p.sub_parser(t, 1)
        props = _raw_dict(sub)
    regions_raw: list[tuple[int, int]] = []
    if p.at("(") and p.peek(1).text == "{":
        p.next()
        regions_raw = [(p.pos, 0)]  # regions are parsed once the op kind is known
        depth = 0
        while True:  # skip to the matching ')' to read the rest first
            tk = p.next()
            if tk.kind == "$":
                raise p.error("unbalanced '(' in generic op regions", t)
            if tk.text in ("(", "{", "["):
                depth += 1
            elif tk.text in (")", "}", "]"):
                if depth == 0:
                    break
                depth -= 1
        regions_raw = [(regions_raw[0][0], p.pos - 1)]
    if p.at("{"):
        p.next()
        props.update(_raw_dict_body(p))
    p.expect(":")
    ft_tok = p.peek()
    ft = p.parse_function_type()
    if len(ft.inputs) != len(operands):
        raise p.error(f"expected {len(operands)} operand types, got {len(ft.inputs)}", ft_tok)
    for v, ty in zip(operands, ft.inputs):
        p.check_type(v, ty, ft_tok)
    short = full.removeprefix("cuda_tile.")
    opdef = lookup(short) if full.startswith("cuda_tile.") or "." not in full else None
    end = p.pos
    regions: list[Region] = []
    if regions_raw:
        p.pos = regions_raw[0][0]
        owner = opdef.name if opdef else full
        isolated = short in ("entry", "testing$func", "module") or opdef is None
        regions = _parse_generic_regions(p, owner, isolated)
        p.pos = end
    if opdef is None:
        if full in ("builtin.module", "cuda_tile.testing$func"):
            from .asm_toplevel import TESTING_FUNC

            attrs = {k: _generic_value(p, TESTING_FUNC.attr(k), v, tok)
                     for k, (v, tok) in props.items()}
            return make_op(full, operands, list(ft.results), attrs, regions)
        if not p.allow_unregistered:
            dialect = full.split(".", 1)[0] if "." in full else full
            raise p.error(f"unregistered operation '{full}' found in dialect ('{dialect}') "
                          f"that does not allow unknown operations", name_tok)
        attrs = {k: A.OpaqueAttr(_text(v)) for k, (v, _) in props.items()}
        return make_op(full, operands, list(ft.results), attrs, regions)
    attrs: dict[str, Any] = {}
    segments = None
    for key, (raw, tok) in props.items():
        if key == "operandSegmentSizes":
            segments = [int(x) for x in _array_values(p, raw, tok)]
            continue
        a = opdef.attr(key)
        attrs[key] = _generic_value(p, a, raw, tok)
    for a in opdef.attrs:
        if (a.name not in attrs and not a.optional and a.kind != "unit"
                and a.default is None and a.since <= "13.1"):
            raise p.error(f"'cuda_tile.{opdef.name}' op requires attribute '{a.name}'",
                          name_tok)
    if opdef.has_variable_operands and segments is None:
        segments = _default_segments(p, opdef, len(operands), name_tok)
    if segments is not None and sum(segments) != len(operands):
        raise p.error("operandSegmentSizes does not match the number of operands", name_tok)
    if total is not None and total != len(ft.results):
        pass  # reported by bind_results
    if opdef.name == "if" and len(regions) == 1:
        regions.append(Region([]))  # no else branch
    if len(regions) != opdef.regions:
        raise p.error(f"'cuda_tile.{opdef.name}' op requires {opdef.regions} region(s), "
                      f"got {len(regions)}", name_tok)
    for i, r in enumerate(regions):
        if not r.blocks and not (opdef.name == "if" and i == 1):
            raise p.error(f"'cuda_tile.{opdef.name}' op region #{i} must not be empty",
                          name_tok)
    from .parser import with_defaults

    return make_op(opdef.name, operands, list(ft.results), with_defaults(opdef, attrs),
                   regions, segments if opdef.has_variable_operands else None)


def _default_segments(p: OpParser, opdef: OpDef, n: int, tok: Token) -> list[int]:
    fixed = sum(1 for o in opdef.operands if o.kind == "single")
    var = [o for o in opdef.operands if o.kind != "single"]
    if len(var) == 1:
        return [1 if o.kind == "single" else n - fixed for o in opdef.operands]
    if n == fixed:
        return [1 if o.kind == "single" else 0 for o in opdef.operands]
    raise p.error(f"'{opdef.name}' needs operandSegmentSizes in the generic form", tok)


def _parse_generic_regions(p: OpParser, owner: str, isolated: bool) -> list[Region]:
    regions: list[Region] = []
    while True:
        saved = p.scopes
        if isolated:
            p.scopes = [{}]
        try:
            regions.append(_parse_generic_region(p, owner))
        finally:
            p.scopes = saved
        if not p.accept(","):
            break
    p.expect(")")
    return regions


def _parse_generic_region(p: OpParser, owner: str) -> Region:
    from .print_directives import _parse_block_args

    p.expect("{")
    if p.accept("}"):
        return Region([])
    block = Block()
    p.scopes.append({})
    if p.peek().kind == "b":
        p.next()
        args = _parse_block_args(p) if p.at("(") else []
        p.expect(":")
        for tok, ty in args:
            v = block.add_argument(ty, tok.text[1:] if not tok.text[1:].isdigit() else None)
            p.define(tok.text[1:], v, tok)
    p.parse_block_body(block)
    close = p.expect("}")
    p.scopes.pop()
    p.finish_block(block, owner, close)
    return Region([block])


# ---------------------------------------------------------------------------------------
# Attribute dictionaries: first read as raw token spans, then converted by kind


def _raw_dict(p: OpParser) -> dict[str, tuple[Any, Token]]:
    p.expect("{")
    return _raw_dict_body(p)


def _raw_dict_body(p: OpParser) -> dict[str, tuple[Any, Token]]:
    out: dict[str, tuple[Any, Token]] = {}
    if p.accept("}"):
        return out
    while True:
        key = p.next()
        if key.kind not in ("w", "q"):
            raise p.error(f"expected attribute name, found {p.describe(key)}", key)
        name = p.string_value(key) if key.kind == "q" else key.text
        if p.accept("="):
            start = p.peek()
            out[name] = (_raw_value(p), start)
        else:
            out[name] = (("unit",), key)
        if p.accept("}"):
            return out
        p.expect(",")


def _raw_value(p: OpParser) -> Any:
    """Collect the tokens of one attribute value (balanced, up to ',' '}' at depth 0)."""
    toks: list[Any] = []
    depth = 0
    while True:
        t = p.peek()
        if t.kind == "$":
            break
        if depth == 0 and t.text in (",", "}", ")", "]") and t.kind == "p":
            break
        if t.kind == "p" and t.text in ("(", "[", "{"):
            depth += 1
        elif t.kind == "p" and t.text in (")", "]", "}"):
            depth -= 1
        toks.append(p.next())
    return ("toks", toks)


def _text(raw: Any) -> str:
    if raw[0] == "unit":
        return "unit"
    out = ""
    for t in raw[1]:
        if out and not (t.text in (",", ")", "]", ">") or out.endswith(("(", "[", "<"))):
            out += " "
        out += t.text
    return out


def _array_values(p: OpParser, raw: Any, tok: Token) -> tuple[str, ...]:
    toks = raw[1] if raw[0] == "toks" else []
    if len(toks) != 1 or not toks[0].text.startswith("array<"):
        raise p.error("expected array<...>", tok)
    _, values = p.sub(toks[0], "array_attr")
    return values


def _generic_value(p: OpParser, a: AttrDef | None, raw: Any, tok: Token) -> Any:
    """Convert a raw attribute value to the op table's representation for kind a.kind."""
    if raw[0] == "unit":
        return True
    sub = p.token_parser(raw[1], tok)
    kind = a.kind if a is not None else None
    try:
        v = _convert(sub, a, kind, tok)
    except AsmError as e:
        raise p.error(e.message, tok) from None
    if sub.peek().kind != "$":
        raise p.error(f"unexpected '{sub.peek().text}' in attribute value", sub.peek())
    return v


def _convert(s: OpParser, a: AttrDef | None, kind: str | None, tok: Token) -> Any:
    t = s.peek()
    if kind == "enum":
        s.next()
        body = strip_prefix(t.text)
        inner = body[body.index("<") + 1:-1].strip() if "<" in body else body
        m = enum_parse(a.enum, inner)  # type: ignore[union-attr,arg-type]
        if m is None:
            raise s.error(f"invalid {a.name} '{inner}'", t)  # type: ignore[union-attr]
        return m
    if kind == "unit":
        s.next()
        return True
    if kind in ("int",):
        v = s.parse_typed_scalar()
        return v.value
    if kind == "bool":
        s.next()
        return t.text == "true"
    if kind in ("string", "symbol"):
        s.next()
        if t.kind == "s":
            return s.symbol_value(t)
        return s.string_value(t)
    if kind == "type":
        return s.parse_type()
    if kind == "dense":
        s.next()
        values = s.sub(t, "dense_body")
        s.expect(":")
        ty = s.parse_type()
        if not isinstance(ty, T.TileType):
            raise s.error("expected a tile type for the dense value", t)
        return make_dense(values, str(ty.element), ty)
    if kind in ("i32_array", "bool_array"):
        s.next()
        _, values = s.sub(t, "array_attr")
        if kind == "bool_array":
            return tuple(v == "true" for v in values)
        return tuple(int(v) for v in values)
    if kind == "attr":
        s.next()
        return s.sub(t, "predicate")
    if kind == "attr_array":
        return s.parse_typed_attr_array()
    if kind == "hints":
        s.next()
        return s.sub(t, "hints")
    return parse_generic_attr(s)


def parse_generic_attr(s: OpParser) -> Any:
    """An attribute of unknown kind: typed scalars, strings, types; else its text."""
    t = s.peek()
    if t.kind == "n" or t.text in ("true", "false"):
        return s.parse_typed_scalar()
    if t.kind == "q":
        s.next()
        return A.StringAttr(s.string_value(t))
    if s.at_type():
        return A.TypeAttr(s.parse_type())
    toks = []
    while s.peek().kind != "$":
        toks.append(s.next())
    return A.OpaqueAttr(_text(("toks", toks)))


def parse_attr_dict(p: OpParser, opdef: OpDef | None) -> dict[str, Any]:
    """A ``{name = value, ...}`` of extra attributes written after an op's custom form."""
    raw = _raw_dict(p)
    out: dict[str, Any] = {}
    for key, (v, tok) in raw.items():
        a = opdef.attr(key) if opdef is not None else None
        out[key] = _generic_value(p, a, v, tok)
    return out
