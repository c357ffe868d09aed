"""Named directives of the op format language: the syntax too irregular for plain elements.

Each directive reads its part of an op (``parse``) and prints it back (``print``); they
are referred to by ``!name(args)`` in the op table's ``asm`` column.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import attrs as A
from . import types as T
from .asm_attrs import AsmError, dense_values_text, hints_text, make_dense, spell, symbol_text
from .asm_format import DIRECTIVES, Directive, attr_present, enum_parse, enum_spelling
from .enums import RoundingMode, SymbolVisibility
from .optable import AttrDef

if TYPE_CHECKING:  # pragma: no cover
    from .parser import OpParser, OpState


def _reg(name: str, parse: Any, print_: Any, **kw: Any) -> None:
    DIRECTIVES[name] = Directive(parse=parse, print=print_, **kw)


def _attr(st_or_op: Any, name: str) -> AttrDef:
    opdef = st_or_op.opdef
    a = opdef.attr(name)
    assert a is not None, (opdef.name, name)
    return a


# ------------------------------------------------------------------ rounding<mode>

# The default rounding of ftoi is not in its row: integer rounding toward zero.
_ROUNDING_DEFAULT = {"ftoi": RoundingMode.nearest_int_to_zero}


def _rounding_default(opname: str, a: AttrDef) -> Any:
    return a.default if a.default is not None else _ROUNDING_DEFAULT.get(opname)


_IEEE = ("nearest_even", "zero", "negative_inf", "positive_inf")
# Modes each op's text accepts; "strict" ops reject the others while parsing.
_ROUNDING_MODES: dict[str, tuple[tuple[str, ...], bool]] = {
    "divf": ((*_IEEE, "approx", "full"), False), "sqrt": ((*_IEEE, "approx"), False),
    "tanh": (("approx", "full"), False), "exp": (("approx", "full"), False),
    "ftoi": (("nearest_int_to_zero",), True),
    **{n: (_IEEE, True) for n in ("addf", "subf", "mulf", "fma", "itof")},
}


def _parse_rounding(p: OpParser, st: OpState, args: tuple[str, ...]) -> None:
    if not p.accept("rounding"):
        return
    t = p.next()
    if t.kind != "A":
        raise p.error("expected '<'", t)
    text = t.text[1:-1].strip()
    if not text.replace("_", "").isalnum():
        raise p.error("expected '>'", t)
    # others (ftof, itof, ...) take any mode here; the verifier knows which are valid
    allowed, strict = _ROUNDING_MODES.get(st.opdef.name, (_IEEE, False))
    m = enum_parse(RoundingMode, text)
    if m is None or (strict and text not in allowed):
        listed = ", ".join(f"'{a}'" for a in allowed)
        got = f", got: '{text}'" if strict else ""
        raise p.error(f"custom op 'cuda_tile.{st.opdef.name}' expected rounding mode to be "
                      f"one of: {listed}{got}", t)
    st.attrs[args[0]] = m


def _print_rounding(pr: Any, op: Any, args: tuple[str, ...]) -> str:
    a = pr.opdef(op).attr(args[0])
    v = op.attributes.get(args[0])
    if v is None or v == _rounding_default(op.name, a):
        return ""
    return f"rounding<{enum_spelling(v)}>"


_reg("rounding", _parse_rounding, _print_rounding)


# ------------------------------------------------------------------ unit keywords in any order

def _parse_units(p: OpParser, st: OpState, args: tuple[str, ...]) -> None:
    while True:
        for name in args:
            if p.at(name):
                p.next()
                st.attrs[name] = True
                break
        else:
            return


def _print_units(pr: Any, op: Any, args: tuple[str, ...]) -> str:
    return "".join(f" {n}" for n in args if op.attributes.get(n))


_reg("units", _parse_units, _print_units, spaced=False)


# ------------------------------------------------------------------ index types of views

def _parse_index_types(p: OpParser, st: OpState, args: tuple[str, ...]) -> None:
    vals = st.operands.get(args[0], [])
    tok = p.peek()
    types = p.parse_type_list(None)
    if len(types) == 1:
        types = types * len(vals)
    if len(types) != len(vals):
        raise p.error(f"expected {len(vals)} index types, got {len(types)}", tok)
    for v, t in zip(vals, types):
        p.check_type(v, t, tok)


def _print_index_types(pr: Any, op: Any, args: tuple[str, ...]) -> str:
    vals = pr.group(op, pr.opdef(op), args[0])
    types = [v.type for v in vals]
    if all(t == types[0] for t in types):
        return pr.type(types[0])
    return ", ".join(pr.type(t) for t in types)


_reg("index_types", _parse_index_types, _print_index_types,
     present=lambda op, a: True)


def _index_present(op: Any, args: tuple[str, ...]) -> bool:
    from .optable import lookup

    opdef = lookup(op.name)
    groups = op.operand_groups()
    for od, g in zip(opdef.operands, groups):  # type: ignore[union-attr]
        if od.name == args[0]:
            return bool(g)
    return False


DIRECTIVES["index_types"] = Directive(parse=_parse_index_types, print=_print_index_types,
                                      present=_index_present)


# ------------------------------------------------------------------ constants

def _parse_dense(p: OpParser, st: OpState, args: tuple[str, ...]) -> None:
    t = p.next()
    if t.kind != "A":
        raise p.error("expected '<'", t)
    elem_name, values = p.sub(t, "typed_dense")
    p.expect(":")
    ty_tok = p.peek()
    ty = p.parse_type()
    bare = ty
    if isinstance(ty, T.TileType) and ty.layout is not None:  # tile-layout: the value's
        bare = T.TileType(ty.shape, ty.element)                # layout, not the constant's
    try:
        st.attrs[args[0]] = make_dense(values, elem_name, bare)
    except AsmError as e:
        raise p.error(e.message, ty_tok if "tile" in e.message else t) from None
    if len(args) > 1:
        st.rtypes[args[1]] = [ty]


def _print_dense(pr: Any, op: Any, args: tuple[str, ...]) -> str:
    d = op.attributes[args[0]]
    ty = d.type
    if len(args) > 1 and op.results and getattr(op.results[0].type, "layout", None):
        ty = op.results[0].type  # tile-layout: the result's type carries its layout
    return f"<{spell(str(d.type.element))}: {dense_values_text(d)}> : {pr.type(ty)}"


_reg("dense", _parse_dense, _print_dense)


# ------------------------------------------------------------------ global's visibility

def _parse_visibility(p: OpParser, st: OpState, args: tuple[str, ...]) -> None:
    t = p.peek()
    if t.kind == "w" and t.text in ("public", "private"):
        p.next()
        st.attrs[args[0]] = SymbolVisibility[t.text]


def _print_visibility(pr: Any, op: Any, args: tuple[str, ...]) -> str:
    v = op.attributes.get(args[0])
    return "" if v in (None, SymbolVisibility.public) else v.name


_reg("visibility", _parse_visibility, _print_visibility)


# ------------------------------------------------------------------ regions

def _parse_then(p: OpParser, st: OpState, args: tuple[str, ...]) -> None:
    st.regions.append(p.parse_region([], "if"))
    st.regions.append(A_EMPTY_REGION())


def _parse_else(p: OpParser, st: OpState, args: tuple[str, ...]) -> None:
    st.regions[1] = p.parse_region([], "if")


def A_EMPTY_REGION() -> Any:
    from .core import Region

    return Region([])


def _print_if_region(index: int) -> Any:
    def fn(pr: Any, op: Any, args: tuple[str, ...]) -> str:
        return pr.region(op.regions[index], elide={"yield"})
    return fn


_reg("then", _parse_then, _print_if_region(0))
DIRECTIVES["else"] = Directive(parse=_parse_else, print=_print_if_region(1),
                               present=lambda op, a: len(op.regions) > 1
                               and bool(op.regions[1].blocks))


def _parse_block_args(p: OpParser, with_attrs: bool = False) -> list[tuple[Any, T.Type]]:
    """``(%a: type, %b: type)``; entry arguments may also carry ``{attr dict}``s."""
    p.expect("(")
    out: list[tuple[Any, T.Type]] = []
    if p.accept(")"):
        return out
    while True:
        t = p.next()
        if t.kind != "v":
            raise p.error(f"expected SSA value name, found {p.describe(t)}", t)
        p.expect(":")
        out.append((t, p.parse_type()))
        if with_attrs and p.at("{"):
            p.parse_extra_attr_dict(None)
        p.maybe_location()
        if p.accept(")"):
            return out
        p.expect(",")


def _parse_arg_region(p: OpParser, st: OpState, args: tuple[str, ...]) -> None:
    st.regions.append(p.parse_region(_parse_block_args(p), st.opdef.name))


def _print_arg_region(pr: Any, op: Any, args: tuple[str, ...]) -> str:
    block = op.regions[0].blocks[0]
    sig = ", ".join(f"{pr.value(a)}: {pr.type(a.type)}" for a in block.arguments)
    return f"\n{pr.indent_text()}({sig}) {pr.region(op.regions[0])}"


_reg("arg_region", _parse_arg_region, _print_arg_region)


# ------------------------------------------------------------------ for / loop

def _parse_assignments(p: OpParser) -> list[tuple[Any, Any]]:
    """``(%inner = %outer, ...)``"""
    p.expect("(")
    out = []
    while True:
        t = p.next()
        if t.kind != "v":
            raise p.error(f"expected SSA value name, found {p.describe(t)}", t)
        p.expect("=")
        out.append((t, p.parse_operand()))
        if p.accept(")"):
            return out
        p.expect(",")


def _parse_for(p: OpParser, st: OpState, args: tuple[str, ...]) -> None:
    if p.accept("unsigned"):
        st.attrs["unsignedCmp"] = True
    iv = p.next()
    if iv.kind != "v":
        raise p.error(f"expected induction variable, found {p.describe(iv)}", iv)
    p.expect("in")
    p.expect("(")
    lb = p.parse_operand()
    p.expect("to")
    ub = p.parse_operand()
    p.expect(",")
    p.expect("step")
    step = p.parse_operand()
    p.expect(")")
    p.expect(":")
    tok = p.peek()
    ivt = p.parse_type()
    for v in (lb, ub, step):
        p.check_type(v, ivt, tok)
    st.operands.update(lowerBound=[lb], upperBound=[ub], step=[step])
    inner: list[tuple[Any, T.Type]] = [(iv, ivt)]
    inits: list[Any] = []
    types: list[T.Type] = []
    if p.accept("iter_values"):
        assigns = _parse_assignments(p)
        p.expect("->")
        p.expect("(")
        tok = p.peek()
        types = p.parse_type_list(len(assigns))
        p.expect(")")
        for (name, v), t in zip(assigns, types):
            p.check_type(v, t, tok)
            inner.append((name, t))
            inits.append(v)
    st.operands["initValues"] = inits
    st.rtypes["resultValues"] = types
    st.regions.append(p.parse_region(inner, "for"))


def _print_for(pr: Any, op: Any, args: tuple[str, ...]) -> str:
    block = op.regions[0].blocks[0]
    lb, ub, step, *inits = op.operands
    iv = block.arguments[0]
    out = " unsigned" if op.attributes.get("unsignedCmp") else ""
    out += (f" {pr.value(iv)} in ({pr.value(lb)} to {pr.value(ub)}, step {pr.value(step)})"
            f" : {pr.type(iv.type)} ")
    if inits:
        pairs = ", ".join(f"{pr.value(a)} = {pr.value(v)}"
                          for a, v in zip(block.arguments[1:], inits))
        out += (f"iter_values({pairs}) -> ("
                + ", ".join(pr.type(v.type) for v in inits) + ") ")
    return out + pr.region(op.regions[0], elide={"continue"}) + pr.extra_attrs_text(
        op, {"unsignedCmp"})


_reg("for", _parse_for, _print_for, spaced=False)


def _parse_loop(p: OpParser, st: OpState, args: tuple[str, ...]) -> None:
    inner: list[tuple[Any, T.Type]] = []
    inits: list[Any] = []
    results: list[T.Type] = []
    if p.accept("iter_values"):
        assigns = _parse_assignments(p)
        p.expect(":")
        tok = p.peek()
        types = p.parse_type_list(None)
        if len(types) != len(assigns):
            raise p.error("found different number of iter_values and types", tok)
        for (name, v), t in zip(assigns, types):
            p.check_type(v, t, tok)
            inner.append((name, t))
            inits.append(v)
        if p.accept("->"):
            results = p.parse_type_list(st.result_count("resultValues"))
    elif p.accept(":"):
        results = p.parse_type_list(st.result_count("resultValues"))
    st.operands["initValues"] = inits
    st.rtypes["resultValues"] = results
    st.regions.append(p.parse_region(inner, "loop"))
    if p.at("{"):
        st.attrs.update(p.parse_extra_attr_dict(st.opdef))


def _print_loop(pr: Any, op: Any, args: tuple[str, ...]) -> str:
    block = op.regions[0].blocks[0]
    out = " "
    if op.operands:
        pairs = ", ".join(f"{pr.value(a)} = {pr.value(v)}"
                          for a, v in zip(block.arguments, op.operands))
        out += f"iter_values({pairs}) "
    if op.operands or op.results:
        out += ": "
    if op.operands:
        out += ", ".join(pr.type(v.type) for v in op.operands) + " "
        if op.results:
            out += "-> "
    if op.results:
        out += ", ".join(pr.type(v.type) for v in op.results) + " "
    return out + pr.region(op.regions[0], elide={"continue"}) + pr.extra_attrs_text(op, set())


_reg("loop", _parse_loop, _print_loop, spaced=False)


# ------------------------------------------------------------------ make_tensor_view

def _parse_mixed_list(p: OpParser) -> list[Any]:
    p.expect("[")
    out: list[Any] = []
    if p.accept("]"):
        return out
    while True:
        t = p.peek()
        if t.kind == "v":
            out.append(p.parse_operand())
        elif t.kind == "n" and t.text.lstrip("-").isdigit():
            p.next()
            out.append(int(t.text))
        else:
            raise p.error(f"expected SSA value or integer, found {p.describe(t)}", t)
        if p.accept("]"):
            return out
        p.expect(",")


def _parse_make_tensor_view(p: OpParser, st: OpState, args: tuple[str, ...]) -> None:
    st.operands["base"] = [p.parse_operand()]
    p.expect(",")
    p.expect("shape")
    p.expect("=")
    shape_tok = p.peek()
    shape = _parse_mixed_list(p)
    p.expect(",")
    p.expect("strides")
    p.expect("=")
    strides = _parse_mixed_list(p)
    if p.at("{"):
        st.attrs.update(p.parse_extra_attr_dict(st.opdef))
    p.expect(":")
    dyn = [v for v in shape + strides if not isinstance(v, int)]
    tok = p.peek()
    ty = p.parse_type()
    if p.accept("->"):
        for v in dyn:
            p.check_type(v, ty, tok)
        tok = p.peek()
        ty = p.parse_type()
    elif dyn:
        raise p.error("expected '->' and the tensor_view type after the index type", p.peek())
    if not isinstance(ty, T.TensorViewType):
        raise p.error(f"expected a tensor_view type, got '{ty}'", tok)
    _check_mixed(p, shape, ty.shape, "shape", shape_tok)
    _check_mixed(p, strides, ty.strides, "strides", shape_tok)
    st.operands["dynamicShape"] = [v for v in shape if not isinstance(v, int)]
    st.operands["dynamicStrides"] = [v for v in strides if not isinstance(v, int)]
    st.rtypes["result"] = [ty]


def _check_mixed(p: OpParser, items: list[Any], dims: tuple[Any, ...], what: str,
                 tok: Any) -> None:
    if len(items) != len(dims):
        raise p.error(f"expected {len(dims)} {what} values for the tensor_view type, got "
                      f"{len(items)}", tok)
    for item, d in zip(items, dims):
        if isinstance(item, int) != (d is not None) or (isinstance(item, int) and item != d):
            raise p.error(f"{what} {item if isinstance(item, int) else 'value'} does not "
                          f"match the tensor_view type's {'?' if d is None else d}", tok)


def _print_make_tensor_view(pr: Any, op: Any, args: tuple[str, ...]) -> str:
    ty = op.results[0].type
    base, *dyn = op.operands
    it = iter(dyn)

    def mixed(dims: tuple[Any, ...]) -> str:
        return ", ".join(str(d) if d is not None else pr.value(next(it)) for d in dims)

    out = f" {pr.value(base)}, shape = [{mixed(ty.shape)}], strides = [{mixed(ty.strides)}]"
    out += pr.extra_attrs_text(op, set()) + " : "
    if dyn:
        out += pr.type(dyn[0].type) + " -> "
    return out + pr.type(ty)


_reg("make_tensor_view", _parse_make_tensor_view, _print_make_tensor_view, spaced=False)


# ------------------------------------------------------------------ entry / testing$func

def parse_signature(p: OpParser) -> tuple[list[tuple[Any, T.Type]], list[T.Type]]:
    args = _parse_block_args(p, with_attrs=True)
    results: list[T.Type] = []
    if p.accept("->"):
        if p.accept("("):
            if not p.accept(")"):
                results = p.parse_type_list(None)
                p.expect(")")
        else:
            results = [p.parse_type()]
    return args, results


def _parse_entry(p: OpParser, st: OpState, args: tuple[str, ...]) -> None:
    t = p.next()
    if t.kind != "s":
        raise p.error("expected valid '@'-identifier for symbol name", t)
    st.attrs["sym_name"] = p.symbol_value(t)
    block_args, results = parse_signature(p)
    st.attrs["function_type"] = T.FunctionType(tuple(ty for _, ty in block_args),
                                               tuple(results))
    if p.accept("optimization_hints"):
        p.expect("=")
        h = p.next()
        if h.kind not in ("A", "h", "a"):
            raise p.error("expected optimization hints '<...>'", h)
        _check_hints_shape(p, h)
        st.attrs["optimization_hints"] = p.sub(h, "hints")
    if p.accept("attributes"):
        st.attrs.update(p.parse_extra_attr_dict(st.opdef))
    saved = p.scopes
    p.scopes = [{}]  # an entry is isolated from above
    try:
        st.regions.append(p.parse_region(block_args, st.extra.get("owner", "entry")))
    finally:
        p.scopes = saved
    if p.at("{"):
        st.attrs.update(p.parse_extra_attr_dict(st.opdef))


def _check_hints_shape(p: OpParser, h: Any) -> None:
    """MLIR's messages for the two common mistakes: a target that is not a name, and a
    target whose value is not a dictionary (``sm_100=2``)."""
    import re

    body = h.text[h.text.index("<") + 1:-1].strip()
    if not body:
        return
    if not re.match(r"[A-Za-z_]", body):
        raise p.error("expected valid keyword or string", h)
    for m in re.finditer(r"([A-Za-z_][\w]*)\s*=\s*(-?\d+)\s*(?:,|$)", body):
        depth = body[:m.start()].count("{") - body[:m.start()].count("}")
        if depth == 0:
            raise p.error(f"custom op 'cuda_tile.entry' expected dictionary attribute for "
                          f"optimization_hints entry `{m.group(1)}` got value={m.group(2)} : i64",
                          h)


def _print_entry(pr: Any, op: Any, args: tuple[str, ...]) -> str:
    block = op.regions[0].blocks[0]
    sig = ", ".join(f"{pr.value(a)}: {pr.type(a.type)}" for a in block.arguments)
    out = f" {symbol_text(op.attributes['sym_name'])}({sig})"
    ft = op.attributes.get("function_type")
    if ft is not None and ft.results:
        res = ", ".join(pr.type(t) for t in ft.results)
        out += f" -> {res}" if len(ft.results) == 1 else f" -> ({res})"
    hints = op.attributes.get("optimization_hints")
    if hints is not None and hints.targets:
        out += " optimization_hints=" + hints_text(hints)
    out += " " + pr.region(op.regions[0])
    extra = {k: v for k, v in op.attributes.items()
             if k not in ("sym_name", "function_type", "optimization_hints")}
    if extra:  # discardable attributes (e.g. nanotile.shared_bytes), after the body as
        out += " " + pr.extra_attrs(op, pr.opdef(op))  # cuda-tile prints them
    return out


_reg("entry", _parse_entry, _print_entry, spaced=False)


# ------------------------------------------------------------------ per-op fixups

def _load_ptr_operands(st: OpState) -> None:
    """`load_ptr_tko %p, %x : ..., T`: a lone optional operand is the mask when it is a
    tile of i1, otherwise the padding value (the text does not say which)."""
    mask = st.operands.get("mask")
    if mask and not st.operands.get("paddingValue"):
        t = mask[0].type
        if not (isinstance(t, T.TileType) and t.element == T.I1):
            st.operands["paddingValue"] = mask
            st.operands["mask"] = []


# op name -> function run on the parsed state before the op is built
FIXUPS = {"load_ptr_tko": _load_ptr_operands}


def hints_or_none(h: A.OptimizationHintsAttr | None) -> A.OptimizationHintsAttr | None:
    return h


__all__ = ["attr_present", "parse_signature"]
