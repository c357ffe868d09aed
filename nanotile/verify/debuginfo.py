"""Debug-info scopes: an entry's location must carry a di_subprogram scope named like
the entry, every op inside must be in that subprogram (directly or through lexical
blocks), and globals carry no scope."""

from __future__ import annotations

from nanotile.ir.attrs import (
    CallSiteLoc,
    DICompileUnitAttr,
    DIFileAttr,
    DILexicalBlockAttr,
    DILocAttr,
    DISubprogramAttr,
    FusedLoc,
    NameLoc,
)
from nanotile.ir.core import Module, Operation

from .engine import fail, rule


def di_loc(loc) -> DILocAttr | None:
    """The debug location inside a location, looking through wrappers as the reference
    does (a call site's caller, a fused location's first debug location, a name's child)."""
    if isinstance(loc, DILocAttr):
        return loc
    if isinstance(loc, CallSiteLoc):
        return di_loc(loc.caller)
    if isinstance(loc, FusedLoc):
        for sub in loc.locations:
            found = di_loc(sub)
            if found is not None:
                return found
        return None
    if isinstance(loc, NameLoc):
        return di_loc(loc.child)
    return None


def subprogram_of(scope) -> DISubprogramAttr | None:
    if isinstance(scope, DISubprogramAttr):
        return scope
    if isinstance(scope, DILexicalBlockAttr):
        return subprogram_of(scope.scope)
    return None


def attr_text(a) -> str:
    """Debug-info attributes printed the way the reference's messages show them."""
    if isinstance(a, DIFileAttr):
        return f'#cuda_tile.di_file<"{a.name}" in "{a.directory}">'
    if isinstance(a, DICompileUnitAttr):
        return f"#cuda_tile.di_compile_unit<file = {attr_text(a.file)}>"
    if isinstance(a, DISubprogramAttr):
        return (f"#cuda_tile.di_subprogram<file = {attr_text(a.file)}, line = {a.line}, "
                f'name = "{a.name}", linkageName = "{a.linkage_name}", compileUnit = '
                f"{attr_text(a.compile_unit)}"
                f"{f', scopeLine = {a.scope_line}' if a.scope_line else ''}>")
    if isinstance(a, DILexicalBlockAttr):
        return (f"#cuda_tile.di_lexical_block<scope = {attr_text(a.scope)}, file = "
                f"{attr_text(a.file)}, line = {a.line}, column = {a.column}>")
    if isinstance(a, DILocAttr):
        return (f'#cuda_tile.di_loc<loc("{a.filename}":{a.line}:{a.column}) in '
                f"{attr_text(a.scope)}>")
    return str(a)


@rule("testing$func")
def check_function_scope(op: Operation) -> None:
    """(For entries, called by the entry rule, between its signature and hint checks.)"""
    if isinstance(op.location, CallSiteLoc):
        from nanotile.ir.printer import OpPrinter, location_text

        # MLIR prints the location as an attribute: loc(callsite(... at ...))
        where = f"loc({location_text(op.location, OpPrinter())})"
        raise fail(f"invalid function debug info location: {where}. Function location "
                   "must not be a CallSiteLoc.")
    loc = di_loc(op.location)
    if loc is None:
        return
    sub = loc.scope if isinstance(loc.scope, DISubprogramAttr) else None
    if sub is None:
        raise fail(f"invalid function debug info scope: {attr_text(loc.scope)}. Function "
                   "location must have cuda_tile.di_subprogram debug info scope.")
    name = op.attributes.get("sym_name")
    if sub.linkage_name != name:
        raise fail(f"invalid function debug info scope: {attr_text(sub)}. Function name "
                   f'"{name}" does not match subprogram scope linkage name '
                   f"\"{sub.linkage_name}\".")


@rule("entry", "testing$func", on_exit=True)
def _body_scopes(op: Operation) -> None:
    loc = di_loc(op.location)
    fn_sub = subprogram_of(loc.scope) if loc is not None else None
    for inner in op.walk():
        if inner is op:
            continue
        inner_loc = di_loc(inner.location)
        sub = subprogram_of(inner_loc.scope) if inner_loc is not None else None
        if sub is None:
            continue
        if fn_sub is None:
            raise fail(f"invalid operation debug info scope: {attr_text(sub)}. Operation has "
                       "debug info scope, but function debug info scope is undefined.",
                       at=inner)
        if sub != fn_sub:
            raise fail(f"invalid operation debug info scope: {attr_text(sub)}. Operation "
                       "debug info scope does not match function debug info scope: "
                       f"{attr_text(fn_sub)}.", at=inner, op_prefix=False)


def check_global_scopes(module: Module) -> None:
    for item in module.items:
        if item.name in ("entry", "testing$func"):
            continue
        loc = di_loc(item.location)
        if loc is not None:
            raise fail(f"invalid operation debug info scope: {attr_text(loc)}. Global "
                       "variables must not have scope.", at=item)
