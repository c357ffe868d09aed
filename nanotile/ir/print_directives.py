"""How the named directives of the op format language print: the syntax too irregular
for plain elements, referred to by ``!name(args)`` in the op table's ``asm`` column.

Their grammar rules are written by hand in nanotile/grammar.lark (the parser's side);
here each name gets the function that prints its part of an op (asm_format.DIRECTIVES).
"""

from __future__ import annotations

from typing import Any

from .asm_attrs import dense_values_text, hints_text, spell, symbol_text
from .asm_format import DIRECTIVES, Directive, enum_spelling
from .enums import RoundingMode, SymbolVisibility
from .optable import AttrDef, lookup


def _reg(name: str, print_: Any, **kw: Any) -> None:
    DIRECTIVES[name] = Directive(print=print_, **kw)


# ------------------------------------------------------------------ rounding<mode>

# The default rounding of ftoi is not in its row: integer rounding toward zero.
_ROUNDING_DEFAULT = {"ftoi": RoundingMode.nearest_int_to_zero}


def _rounding_default(opname: str, a: AttrDef) -> Any:
    return a.default if a.default is not None else _ROUNDING_DEFAULT.get(opname)


def _print_rounding(pr: Any, op: Any, args: tuple[str, ...]) -> str:
    a = pr.opdef(op).attr(args[0])
    v = op.attributes.get(args[0])
    if v is None or v == _rounding_default(op.name, a):
        return ""
    return f"rounding<{enum_spelling(v)}>"


_reg("rounding", _print_rounding)


# ------------------------------------------------------------------ unit keywords in any order

def _print_units(pr: Any, op: Any, args: tuple[str, ...]) -> str:
    return "".join(f" {n}" for n in args if op.attributes.get(n))


_reg("units", _print_units, spaced=False)


# ------------------------------------------------------------------ index types of views

def _print_index_types(pr: Any, op: Any, args: tuple[str, ...]) -> str:
    vals = pr.group(op, pr.opdef(op), args[0])
    types = [v.type for v in vals]
    if all(t == types[0] for t in types):
        return pr.type(types[0])
    return ", ".join(pr.type(t) for t in types)


def _index_present(op: Any, args: tuple[str, ...]) -> bool:
    opdef = lookup(op.name)
    groups = op.operand_groups()
    for od, g in zip(opdef.operands, groups):  # type: ignore[union-attr]
        if od.name == args[0]:
            return bool(g)
    return False


_reg("index_types", _print_index_types, present=_index_present)


# ------------------------------------------------------------------ constants

def _print_dense(pr: Any, op: Any, args: tuple[str, ...]) -> str:
    d = op.attributes[args[0]]
    ty = d.type
    if len(args) > 1 and op.results and getattr(op.results[0].type, "layout", None):
        ty = op.results[0].type  # tile-layout: the result's type carries its layout
    return f"<{spell(str(d.type.element))}: {dense_values_text(d)}> : {pr.type(ty)}"


_reg("dense", _print_dense)


# ------------------------------------------------------------------ global's visibility

def _print_visibility(pr: Any, op: Any, args: tuple[str, ...]) -> str:
    v = op.attributes.get(args[0])
    return "" if v in (None, SymbolVisibility.public) else v.name


_reg("visibility", _print_visibility)


# ------------------------------------------------------------------ regions

def _print_if_region(index: int) -> Any:
    def fn(pr: Any, op: Any, args: tuple[str, ...]) -> str:
        return pr.region(op.regions[index], elide={"yield"})
    return fn


_reg("then", _print_if_region(0))
_reg("else", _print_if_region(1),
     present=lambda op, a: len(op.regions) > 1 and bool(op.regions[1].blocks))


def _print_arg_region(pr: Any, op: Any, args: tuple[str, ...]) -> str:
    block = op.regions[0].blocks[0]
    sig = ", ".join(f"{pr.value(a)}: {pr.type(a.type)}" for a in block.arguments)
    return f"\n{pr.indent_text()}({sig}) {pr.region(op.regions[0])}"


_reg("arg_region", _print_arg_region)


# ------------------------------------------------------------------ for / loop

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


_reg("for", _print_for, spaced=False)


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


_reg("loop", _print_loop, spaced=False)


# ------------------------------------------------------------------ make_tensor_view

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


_reg("make_tensor_view", _print_make_tensor_view, spaced=False)


# ------------------------------------------------------------------ entry / testing$func

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


_reg("entry", _print_entry, spaced=False)
