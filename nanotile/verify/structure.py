"""Program structure: what a module may hold, entry signatures, globals and the symbols
that get_global refers to; every type's own rules (nanotile.ir.type_rules)."""

from __future__ import annotations

from nanotile.ir.core import Module, Operation
from nanotile.ir.type_rules import check_type
from nanotile.ir.types import FunctionType, PointerType, TileType

from .engine import fail, q, rule
from .hints import check_op_hints


def check_module_items(module: Module) -> None:
    """Symbols defined at the top level are unique; globals carry no debug scope."""
    from .debuginfo import check_global_scopes
    check_global_scopes(module)
    seen: dict[str, Operation] = {}
    for item in module.items:
        name = item.attributes.get("sym_name")
        if name is None:
            continue
        if name in seen:
            raise fail(f"redefinition of symbol named '{name}'", at=item, op_prefix=False)
        seen[name] = item


@rule("entry")
def _entry(op: Operation) -> None:
    ftype = op.attributes.get("function_type")
    if isinstance(ftype, FunctionType):
        if ftype.results:
            raise fail("entry op must not return values")
        for t in ftype.inputs:
            if isinstance(t, TileType) and t.rank != 0:
                raise fail("entry op must have scalar types (rank 0 !cuda_tile.tile)")
    from .debuginfo import check_function_scope
    check_function_scope(op)
    check_op_hints(op)


@rule("entry", "testing$func")
def _arguments(op: Operation) -> None:
    ftype = op.attributes.get("function_type")
    if not (isinstance(ftype, FunctionType) and op.regions and op.regions[0].blocks):
        return
    args = [a.type for a in op.regions[0].block.arguments]
    if args != list(ftype.inputs):
        raise fail("type of entry block arguments must match the function signature")


@rule("global")
def _global(op: Operation) -> None:
    value = op.attributes.get("value")
    vtype = getattr(value, "type", None)
    if isinstance(vtype, TileType) and vtype.rank != 1:
        raise fail("type must have rank 1")


@rule("get_global")
def _get_global(op: Operation) -> None:
    from .engine import current_module
    module = current_module()
    name = op.attributes.get("name")
    target = module.lookup(name) if module is not None else None
    if target is None or target.name != "global":
        raise fail(f"'{name}' does not reference a valid global")
    vtype = getattr(target.attributes.get("value"), "type", None)
    res = op.results[0].type
    ptr = res.element if isinstance(res, TileType) else None
    if isinstance(vtype, TileType) and isinstance(ptr, PointerType) \
            and ptr.pointee != vtype.element:
        raise fail(f"pointee type of result type {q(ptr)} does not match type "
                   f"{q(vtype.element)} of the global @{name}")


def check_types_of(op: Operation) -> None:
    """The rules of every type the op mentions (results, block arguments, signature)."""
    types = [r.type for r in op.results]
    ftype = op.attributes.get("function_type")
    if ftype is not None:
        types.append(ftype)
    for region in op.regions:
        for block in region.blocks:
            types.extend(a.type for a in block.arguments)
    for t in types:
        msg = check_type(t)
        if msg:
            raise fail(msg, op_prefix=False)
