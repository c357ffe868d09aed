"""check-target-support: refuse a kernel its target GPU cannot run.  tile -> tile

Input: any tile-level module. Output: the same module, unchanged, or a CompileError. The
option gpu=sm_90|sm_100 (default sm_100) names the target.

Some element types and ops exist only on some GPUs (the table: targets/target.py
``ARCH_ELEMENT_TYPES`` / ``ARCH_OPS``; each target's own list: targets/sm90/__init__.py,
targets/sm100/__init__.py). tileiras refuses a kernel that uses one for a target without
it ("Incompatibility with architecture 'sm_90': unsupported type 'f8E8M0FNU'"), and so does
this pass, first in each default pipeline (so the refusal comes before any work, and on
the kernel as written, as tileiras sees it).

The error is at the first op, in program order, that uses such a type (in an operand or
result type: tiles, pointers, views) or is such an op; an entry parameter of such a type
that no op uses (or a global of such a type) is reported at its entry (global). A global's
alignment must be one PTX's ``.align`` states (a power of two up to 2^31), or 0 for its
natural one. It names the type or op, the target, the targets
that have it, and the position: the op's place in the input text, else its source location
(file:line:col, the kernel author's, as in bytecode from cuTile). Nothing changes when the
module passes, so the pass returns False.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from ..diagnostics import CompileError, Diagnostic
from ..ir.attrs import CallSiteLoc, DILocAttr, FileLineColLoc, FusedLoc, Location, NameLoc
from ..ir.core import Module, Operation
from ..ir.types import ElementType, Type
from ..passes.base import Pass, PassContext


def element_types(t: object) -> Iterator[ElementType]:
    """The element types inside a type: a tile's, a pointer's pointee's, a view's tensor's."""
    if isinstance(t, ElementType):
        yield t
    elif isinstance(t, Type) and dataclasses.is_dataclass(t):
        for f in dataclasses.fields(t):
            value = getattr(t, f.name)
            for v in value if isinstance(value, tuple) else (value,):
                if isinstance(v, Type):
                    yield from element_types(v)


def source_position(loc: Location | None) -> tuple[str, int, int] | None:
    """file, line, column of a location (the first one a fused/call-site location names)."""
    if isinstance(loc, (FileLineColLoc, DILocAttr)):
        return loc.filename, loc.line, loc.column
    if isinstance(loc, NameLoc):
        return source_position(loc.child)
    if isinstance(loc, CallSiteLoc):
        return source_position(loc.callee) or source_position(loc.caller)
    if isinstance(loc, FusedLoc):
        for x in loc.locations:
            if (found := source_position(x)) is not None:
                return found
    return None


def refusal(op: Operation, message: str, filename: str) -> Diagnostic:
    """An error at ``op``: its position in the input text if it has one (then the kernel
    author's location, if the text carries one, goes in the message), else its source
    location, else the input's name."""
    src, where = op.source, source_position(op.location)
    if src is not None:
        if where is not None:
            message += f" (at {where[0]}:{where[1]}:{where[2]})"
        return Diagnostic("error", message, src.filename, src.line, src.column)
    if where is not None:
        return Diagnostic("error", message, *where)
    return Diagnostic("error", message, filename)


@dataclass(frozen=True)
class CheckTargetSupport(Pass):
    """Refuse element types and ops that the target GPU does not have (like tileiras)."""

    name: ClassVar[str] = "check-target-support"
    input: ClassVar[str] = "tile"
    gpu: str = "sm_100"  # the target whose element types and ops are allowed

    def __post_init__(self) -> None:
        from .target import get_target

        get_target(self.gpu)  # an unknown gpu is a CompileError naming the known ones

    def spelling(self) -> str:
        return f"{self.name}{{gpu={self.gpu}}}"  # the target is always named, in dumps too

    def apply(self, module: Module, ctx: PassContext) -> bool:
        from .target import all_targets, get_target

        target = get_target(self.gpu)
        filename = module.source.filename if module.source is not None else "<input>"

        def check(op: Operation, types: list[Type]) -> None:
            for t in types:
                for e in element_types(t):
                    if not target.supports_element_type(e.name):
                        has = [g for g in all_targets() if g.supports_element_type(e.name)]
                        raise CompileError(refusal(op, (
                            f"'{op.name}': element type '{e}' is not supported on "
                            f"{self.gpu} ({_having(has)})"), filename))
            if not target.supports_op(op.name):
                has = [g for g in all_targets() if g.supports_op(op.name)]
                raise CompileError(refusal(op, (
                    f"'{op.name}' is not supported on {self.gpu} ({_having(has)})"), filename))

        for item in module.items:
            if item.name == "global":
                check_alignment(item, filename)
            ops = list(item.walk())
            for op in ops[1:] if ops and ops[0] is item else ops:
                check(op, [v.type for v in (*op.operands, *op.results)])
            # the item itself last: its signature (entry parameters no op uses), a global's type
            check(item, [*(a.type for r in item.regions for a in r.block.arguments),
                         *(v for v in item.attributes.values() if isinstance(v, Type))])
        return False


MAX_ALIGNMENT = 1 << 31  # the largest .align a PTX directive states (a 32-bit constant)


def check_alignment(item: Operation, filename: str) -> None:
    """A global's alignment (0: its natural one) must be one PTX's ``.align`` can state: a
    power of two up to 2^31 (ptxas: "Alignment must be a power of two"). cuda-tile's
    verifier takes any 64-bit integer; tileiras refuses 2^32 too."""
    align = item.attributes.get("alignment", 0)
    if align == 0 or (0 < align <= MAX_ALIGNMENT and align & (align - 1) == 0):
        return
    raise CompileError(refusal(item, (
        f"'global': alignment {align} is not a power of two up to 2^31, which PTX's "
        f".align needs"), filename))


def _having(targets: list) -> str:
    names = [t.gpu_name for t in targets]
    if not names:
        return "no target nanotile knows has it"
    return f"only {' and '.join(names)} " + ("has it" if len(names) == 1 else "have it")
