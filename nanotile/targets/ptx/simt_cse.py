"""simt-cse: identical per-thread ops computed once.  simt -> simt.

distribute expands each tile op on its own, so the same per-thread value is often built
several times: every store masked to the owning copy asks for its own ``is_owner``, every
gather and iota its own ``coordinates``, every broadcast of a scalar its own ``splat``,
every conversion its own ``pick``. Two pure ops with the same name, attributes, result
types and operands are merged, the later into the earlier where the earlier dominates it:
the rule of the tile-level ``cse`` (passes/cse.py), applied to simt. Only what it merges
differs: ``warp_mma`` (and ``warpgroup_mma``, ``tmem_mma``) reads its operands from
shared memory, so two with equal operands may still differ, and is never merged.
select-instructions then emits each value once, and the PTX passes start from a smaller
program.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...ir.core import Operation
from ...passes.cse import CommonSubexpressionElimination, cse_key

# Marked pure (no side effect: free to remove when unused), but reading shared memory.
READS_SHARED_MEMORY = {"warp_mma", "warpgroup_mma", "tmem_mma", "tmem_mma_scaled"}


@dataclass(frozen=True)
class SimtCommonSubexpressionElimination(CommonSubexpressionElimination):
    """Merge identical pure per-thread ops (splat, pick, coordinates, is_owner ...)."""

    name = "simt-cse"
    input = "simt"
    output = "simt"
    hoist_constants: bool = False  # constants become immediates in select-instructions

    def key(self, op: Operation) -> tuple[Any, ...] | None:
        return None if op.name in READS_SHARED_MEMORY else cse_key(op)
