"""allocate-shared: each #shared tile gets its bytes in the CTA's shared buffer.
tile-layout -> tile-layout.

assign-layouts and lower-convert-layout leave every ``#shared`` value unplaced
(``#shared<offset=?, ...>``). This pass gives each one a byte offset so that values
alive at the same time never overlap, and reuses the bytes of values that are dead: a
``#shared`` value lives from the op that makes it to its last use (a use inside a loop
or an if keeps it alive until that op ends), so all the shared operands of one op
overlap in time and get distinct bytes, while the buffers of one op are free again for
the next (insert-barriers keeps the threads from racing over reused bytes). Placement is
first fit, in program order, at multiples of 16 bytes (of the layout's ``align`` when it
asks for more: wgmma's swizzled operands); a value takes the room its layout says
(padding included) times its element's width (shared_memory.element_bytes).

The entry records the buffer it needs as ``nanotile.shared_bytes`` and, when some value
needs more than 16, the alignment the buffer's start needs as ``nanotile.shared_align``;
more than a CTA may have (227 KB) is an error naming the kernel.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...diagnostics import CompileError, Diagnostic
from ...ir import attrs as A
from ...ir import types as T
from ...ir.core import Block, Module, Operation, Value
from ...ir.layouts import SharedLayout
from ...passes.base import Pass, PassContext
from .shared_memory import ALIGN, MAX_BYTES, tile_bytes

SHARED_BYTES = "nanotile.shared_bytes"
SHARED_ALIGN = "nanotile.shared_align"


def is_shared(t: T.Type) -> bool:
    return isinstance(t, T.TileType) and isinstance(t.layout, SharedLayout)


@dataclass
class Buffer:
    value: Value
    start: int   # program point of its definition
    end: int     # program point after which it is dead
    size: int
    offset: int = 0
    align: int = ALIGN


@dataclass(frozen=True)
class AllocateShared(Pass):
    """Place each #shared value in the shared buffer; live values never overlap."""

    name = "allocate-shared"
    input = "tile-layout"
    output = "tile-layout"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        for entry in module.entries():
            buffers = live_ranges(entry)
            total = place(buffers)
            if total > MAX_BYTES:
                raise CompileError(Diagnostic(
                    "error", f"kernel '{entry.attributes['sym_name']}' needs {total} bytes "
                             f"of shared memory; a CTA has at most {MAX_BYTES} "
                             f"({MAX_BYTES // 1024} KB)", *_where(entry, module)))
            for b in buffers:
                new = dataclasses.replace(b.value.type,
                                          layout=b.value.type.layout.placed(b.offset))
                if new != b.value.type:
                    b.value.type = new
                    changed = True
            old = entry.attributes.get(SHARED_BYTES)
            if buffers and getattr(old, "value", None) != total:
                entry.attributes[SHARED_BYTES] = A.IntegerAttr(total, T.I64)
                changed = True
            align = max((b.align for b in buffers), default=ALIGN)
            if align > ALIGN and getattr(entry.attributes.get(SHARED_ALIGN), "value",
                                         None) != align:
                entry.attributes[SHARED_ALIGN] = A.IntegerAttr(align, T.I64)
                changed = True
        return changed


def _where(op: Operation, module: Module) -> tuple:
    """The op's file, line and column: its text position or loc(...); for bytecode
    without locations, the module's file."""
    from ...verify.engine import position

    filename = module.source.filename if module.source is not None else "<input>"
    return position(op, filename)


def live_ranges(entry: Operation) -> list[Buffer]:
    """One Buffer per #shared value of ``entry``, with its live range in program points
    (ops numbered in text order; an op with regions spans the points of its body)."""
    number: dict[int, int] = {}   # id(op) -> its point
    last: dict[int, int] = {}     # id(op) -> last point inside it
    counter = 0

    def visit(block: Block) -> None:
        nonlocal counter
        for op in block.ops:
            number[id(op)] = counter
            counter += 1
            for region in op.regions:
                for b in region.blocks:
                    visit(b)
            last[id(op)] = counter - 1

    for region in entry.regions:
        for b in region.blocks:
            visit(b)

    buffers: dict[int, Buffer] = {}
    for op in entry.walk():
        for r in op.results:
            if is_shared(r.type):
                size = tile_bytes(r.type, r.type.layout.size_elements())
                buffers[id(r)] = Buffer(r, number[id(op)], number[id(op)], size,
                                        align=max(ALIGN, r.type.layout.align or ALIGN))
    for op in entry.walk():
        for v in op.operands:
            buf = buffers.get(id(v))
            if buf is None:
                continue
            user = _ancestor_in(op, v.owner.parent if isinstance(v.owner, Operation) else None)
            buf.end = max(buf.end, last[id(user)])
    return sorted(buffers.values(), key=lambda b: (b.start, -b.size))


def _ancestor_in(op: Operation, block: Block | None) -> Operation:
    """``op`` itself or the op enclosing it that stands in ``block``."""
    while op.parent is not block and op.parent is not None:
        region = op.parent.parent
        if region is None or region.parent is None:
            break
        op = region.parent
    return op


def place(buffers: list[Buffer], align: int = ALIGN) -> int:
    """First fit in program order, each buffer at a multiple of its own alignment;
    returns the bytes needed (a multiple of ``align``)."""
    placed: list[Buffer] = []
    total = 0
    for b in buffers:
        busy = sorted((p.offset, p.offset + p.size) for p in placed
                      if p.start <= b.end and b.start <= p.end)
        at = 0
        for lo, hi in busy:
            if at + b.size <= lo:
                break
            at = max(at, -(-hi // b.align) * b.align)
        b.offset = at
        placed.append(b)
        total = max(total, -(-(at + b.size) // align) * align)
    return total
