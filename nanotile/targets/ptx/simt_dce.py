"""simt-dce: per-thread values nobody reads are removed.  simt -> simt.

distribute builds what each tile op needs before it knows whether anything reads it:
the register halves a conversion picked and then did not use, padding splats of loads
that need none, owner masks of stores that turned out to need none, and the values
simt-cse left without readers. They are removed by the rule of the tile-level ``dce``
(passes/dce.py), applied to simt: an op goes when its results are unused and it has no
effect besides computing them (pure ops, weak loads, if/for holding only such ops).
select-instructions then emits no instruction for them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...passes.dce import DeadCodeElimination


@dataclass(frozen=True)
class SimtDeadCodeElimination(DeadCodeElimination):
    """Remove unused per-thread ops without side effects (before instruction selection)."""

    name = "simt-dce"
    input = "simt"
    output = "simt"
