"""dce: dead-code elimination.  tile -> tile (any tile-level language, kept).

Removes ops whose results are never used and that have no effect besides computing
them: pure ops (op table trait ``pure``), weak (non-atomic) loads, and ``if``/``for``
ops whose bodies only hold such ops. Repeats until nothing more goes, so a chain of dead
ops disappears at once. Memory writes, atomics, asserts, prints and ``loop`` (which may
not terminate) always stay.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Module, Operation
from ..ir.enums import MemoryOrderingSemantics
from ..ir.rewrite import all_blocks, collect_uses, traits
from .base import Pass, PassContext

_WEAK_LOADS = {"load_view_tko", "load_ptr_tko"}
# The terminator that only ends a region of the op; any other (a ``continue`` inside an
# ``if``, a ``return``...) leaves an enclosing construct, which is an effect.
_OWN_TERMINATOR = {"if": "yield", "for": "continue"}


def has_no_effect(op: Operation, remove_loads: bool = True) -> bool:
    """True if erasing ``op`` (when its results are unused) cannot change the program."""
    if op.name in _WEAK_LOADS:
        weak = op.attributes.get("memory_ordering_semantics") == MemoryOrderingSemantics.weak
        return remove_loads and weak
    if op.name in _OWN_TERMINATOR:
        return all(has_no_effect(inner, remove_loads) or inner.name == _OWN_TERMINATOR[op.name]
                   for region in op.regions for block in region.blocks
                   for inner in block.ops)
    return "pure" in traits(op)


@dataclass(frozen=True)
class DeadCodeElimination(Pass):
    """Remove unused ops that have no side effect (pure ops, weak loads, pure if/for)."""

    name = "dce"
    remove_loads: bool = True  # also remove weak loads whose results are unused

    def apply(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        while self._sweep(module):
            changed = True
        return changed

    def _sweep(self, module: Module) -> bool:
        """One round: erase every currently dead op. Returns True if any was erased."""
        uses = collect_uses(module)
        erased = False
        for block in list(all_blocks(module)):
            keep = []
            for op in block.ops:
                dead = not any(r in uses for r in op.results) and \
                    has_no_effect(op, self.remove_loads)
                if dead:
                    op.parent = None
                    erased = True
                else:
                    keep.append(op)
            block.ops = keep
        return erased
