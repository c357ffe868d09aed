"""insert-barriers: CTA barriers where threads must wait for each other.
tile-layout -> tile-layout.

A tile's elements are spread over the CTA's threads, so any op through which one thread
sees another's data needs every thread past a point first. The pass writes those points
as ``barrier`` ops (``bar.sync 0`` in PTX):

- shared memory: a write to a shared buffer (``convert_layout`` to ``#shared``, an
  atomic whose result goes to shared memory) waits for every earlier reader of the
  buffer's bytes (allocate-shared reuses them), and its readers wait for the write: a
  barrier before and after each group of consecutive writes;
- global memory in program order (language tile-ordered: tokens are gone, and a
  kernel's memory ops happen in program order): a write another memory op may follow
  (later in its block or an enclosing one, or in a later iteration of an enclosing
  loop) is followed by a barrier, which makes it visible to the whole CTA; a write that
  a memory op may precede starts with one, since another thread may still have to read
  the old value of an element this thread is about to overwrite.

Redundant barriers (two with no shared or global access between them) are left to
ptx-remove-redundant-barriers.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import types as T
from ...ir.core import Block, Module, Operation, make_op
from ...ir.layouts import SharedLayout
from ...ir.optable import lookup
from ...passes.base import Pass, PassContext

_GLOBAL_WRITES = frozenset({"store_ptr_tko", "atomic_rmw_tko", "atomic_cas_tko"})


def writes_shared(op: Operation) -> bool:
    return any(isinstance(r.type, T.TileType) and isinstance(r.type.layout, SharedLayout)
               for r in op.results)


def global_memory(op: Operation) -> bool:
    """An op of the cuda_tile table that touches global memory (not a barrier)."""
    row = lookup(op.name)
    return row is not None and not row.internal and "memory" in row.traits


@dataclass(frozen=True)
class InsertBarriers(Pass):
    """Insert barrier ops around shared-memory writes and after/before global writes."""

    name = "insert-barriers"
    input = "tile-layout"
    output = "tile-layout"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        for entry in module.entries():
            for block in _blocks(entry):
                changed |= _in_block(block)
        return changed


def _blocks(op: Operation) -> list[Block]:
    return [b for inner in op.walk() for r in inner.regions for b in r.blocks]


def _in_block(block: Block) -> bool:
    new: list[Operation] = []
    changed = False
    ops = list(block.ops)
    for i, op in enumerate(ops):
        shared = writes_shared(op)
        first_of_group = shared and not (i > 0 and writes_shared(ops[i - 1]))
        last_of_group = shared and not (i + 1 < len(ops) and writes_shared(ops[i + 1]))
        before = first_of_group or (op.name in _GLOBAL_WRITES and _memory_near(op, True))
        after = last_of_group or (op.name in _GLOBAL_WRITES and _memory_near(op, False))
        if before and not (new and new[-1].name == "barrier"):
            new.append(_barrier(op, block))
        new.append(op)
        if after:
            new.append(_barrier(op, block))
        changed |= before or after
    block.ops = new
    return changed


def _barrier(near: Operation, block: Block) -> Operation:
    barrier = make_op("barrier", [], [])
    barrier.source, barrier.location = near.source, near.location
    barrier.parent = block
    return barrier


def _has_memory(op: Operation) -> bool:
    return any(global_memory(x) for x in op.walk())


def _memory_near(op: Operation, before: bool) -> bool:
    """A global memory op may run after ``op`` (later in its block or an enclosing one,
    or in a later iteration of an enclosing loop); with ``before``, before it."""
    while op is not None and op.parent is not None:
        block = op.parent
        at = block.ops.index(op)
        others = block.ops[:at] if before else block.ops[at + 1:]
        if any(_has_memory(o) for o in others):
            return True
        region = block.parent
        owner = region.parent if region is not None else None
        if not isinstance(owner, Operation):
            return False
        if owner.name in ("for", "loop") and _has_memory(owner):
            return True
        op = owner
    return False
