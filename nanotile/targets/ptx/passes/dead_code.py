"""ptx-dead-code: remove instructions whose results nobody reads.  ptx-sm90 -> ptx-sm90

After copy propagation, CSE and the folds, many ``mov``, index computations and
conversions write registers that are never read again. An instruction goes when it is pure
(flow.is_pure: arithmetic, comparisons, conversions, moves, loads without ordering or
volatility; never stores, atomics, barriers, branches, calls or anything unknown) and none
of the registers it writes is live after it.

Why it is correct: liveness (flow.liveness) is computed over the basic blocks with the
loop back edges, so a value read in the next iteration of a loop is live; a guarded
instruction does not kill its destination (it may not write), so the value from before it
stays live; reads by guards count. Removing an instruction that only writes dead registers
changes no register anyone reads and no memory. The analysis is repeated until nothing
changes, so chains of dead instructions disappear in one run of the pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir import Instr, PtxKernel, defs, uses
from .flow import is_pure, kernel_cfg, live_out
from .kernel_pass import KernelPass


def remove_dead_code(kernel: PtxKernel) -> bool:
    changed = False
    while True:
        cfg = kernel_cfg(kernel)
        if cfg is None:
            return changed
        dead: set[int] = set()
        for b, out in enumerate(live_out(cfg, kernel.body)):
            block = cfg.blocks[b]
            live = set(out)
            for i in range(block.end - 1, block.start - 1, -1):
                item = kernel.body[i]
                if not isinstance(item, Instr):
                    continue
                written = defs(item)
                if written and is_pure(item) and not any(r in live for r in written):
                    dead.add(i)  # its reads do not make anything live
                    continue
                if item.pred is None:
                    live.difference_update(written)
                live.update(uses(item))
        if not dead:
            return changed
        kernel.body = [item for i, item in enumerate(kernel.body) if i not in dead]
        changed = True


@dataclass(frozen=True)
class PtxDeadCode(KernelPass):
    """Remove pure instructions whose destination registers are dead (liveness analysis)."""

    name: ClassVar[str] = "ptx-dead-code"

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        return remove_dead_code(kernel)
