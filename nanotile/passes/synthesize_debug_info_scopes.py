"""synthesize-debug-info-scopes: give every function a debug scope, for a line table.
tile -> tile.

cuda-tile's SynthesizeDebugInfoScopes, for producers that write file locations but no
debug info: the module gets a ``di_compile_unit`` for the file of its own location
(``"<unknown>"`` without one), each function without a ``di_loc`` in its location a
``di_subprogram`` named after it, at the line of its location (1 without one), and every
op of that function, the function included, a ``di_loc`` in that subprogram. An op's
``di_loc`` keeps the file position found in its location (a name, a call site's caller
and a fused location's first file position are looked through), else the function's.
Functions already in a scope are left alone. nanotile reads an op written without
``loc(...)`` as unknown (MLIR would use its position in the input file).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ..ir.attrs import (
    CallSiteLoc,
    DICompileUnitAttr,
    DIFileAttr,
    DILocAttr,
    DISubprogramAttr,
    FileLineColLoc,
    FusedLoc,
    Location,
    NameLoc,
)
from ..ir.core import Module, Operation
from .base import Pass, PassContext


def file_position(loc: Location | None) -> FileLineColLoc | None:
    """The file position a location carries, as cuda-tile's extractFileLoc finds it."""
    if isinstance(loc, FileLineColLoc):
        return loc
    if isinstance(loc, NameLoc):
        return file_position(loc.child)
    if isinstance(loc, CallSiteLoc):
        return file_position(loc.caller)
    if isinstance(loc, FusedLoc):
        return next((x for x in loc.locations if isinstance(x, FileLineColLoc)), None)
    return None


def has_scope(loc: Location | None) -> bool:
    """A ``di_loc`` anywhere in the location."""
    if isinstance(loc, DILocAttr):
        return True
    if isinstance(loc, NameLoc):
        return has_scope(loc.child)
    if isinstance(loc, CallSiteLoc):
        return has_scope(loc.callee) or has_scope(loc.caller)
    if isinstance(loc, FusedLoc):
        return any(has_scope(x) for x in loc.locations)
    return False


def file_of(position: FileLineColLoc | None) -> DIFileAttr:
    if position is None:
        return DIFileAttr("<unknown>", "")
    path = position.filename
    return DIFileAttr(posixpath.basename(path), posixpath.dirname(path))


def add_scope(function: Operation, unit: DICompileUnitAttr) -> None:
    """A subprogram for ``function``; every op in it gets a location in that scope."""
    position = file_position(function.location)
    file = unit.file if position is None else file_of(position)
    if position is None:
        position = FileLineColLoc(file.name, 1, 1)
    name = function.attributes["sym_name"]
    scope = DISubprogramAttr(file, position.line, name, name, unit, position.line)
    for op in function.walk():
        own = file_position(op.location) or position
        op.location = DILocAttr(scope, own.filename, own.line, own.column)


@dataclass(frozen=True)
class SynthesizeDebugInfoScopes(Pass):
    """Give functions debug scopes (a compile unit, subprograms, di_loc on every op)."""

    name = "synthesize-debug-info-scopes"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        unit = DICompileUnitAttr(file_of(file_position(module.location)))
        functions = [item for item in module.items if "function_type" in item.attributes
                     and not has_scope(item.location)]
        for function in functions:
            add_scope(function, unit)
        return bool(functions)
