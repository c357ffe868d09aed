"""ptx-remove-redundant-barriers: drop a CTA barrier that orders nothing new.  ptx-sm90 -> ptx-sm90

lower_shared.py brackets every trip through shared memory with ``bar.sync 0`` (before
writing, so no thread overwrites what another still reads; after, so every thread sees
the writes), and back-to-back data movements leave two barriers with nothing but
register arithmetic between them.

Removed: an unguarded ``bar.sync 0`` / ``barrier.sync 0`` (all threads of the CTA, barrier
0, no thread count) such that the instructions since the previous such barrier, in the
same basic block (no label, branch or other control flow between), are all register-only
(flow.is_pure and not a load: no memory access of any kind, no atomic, call, fence, other
barrier, or unknown instruction).

Why it is correct (PTX memory model, "bar.sync": the barrier makes the memory accesses a
thread performed before it visible to/ordered with the accesses every participating
thread performs after it, and all threads of the CTA must arrive before any proceeds):
with no memory operation between the first barrier B1 and the second B2, the accesses
before B2 are exactly those before B1, and those after B2 are a subset of those after
B1; so every ordering B2 establishes is already established by B1. Both barriers are
executed by the same threads (same basic block, no guard), so removing B2 cannot leave
other threads waiting at a barrier (no deadlock) nor change which threads synchronise.
Register-only instructions have no effect other threads can observe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir import Comment, Instr, PtxKernel
from .flow import is_pure
from .kernel_pass import KernelPass

_BARRIERS = {"bar.sync", "barrier.sync", "bar.sync.aligned", "barrier.sync.aligned"}


def is_full_barrier(instr: Instr) -> bool:
    return (instr.opcode in _BARRIERS and instr.pred is None
            and instr.operands == ("0",))


def register_only(instr: Instr) -> bool:
    return is_pure(instr) and instr.root != "ld"


def remove_barriers(kernel: PtxKernel) -> bool:
    keep = []
    open_barrier = False  # a full barrier with only register work since, in this block
    changed = False
    for item in kernel.body:
        if isinstance(item, Instr):
            if is_full_barrier(item):
                if open_barrier:
                    changed = True
                    continue
                open_barrier = True
            elif not register_only(item):
                open_barrier = False
        elif not isinstance(item, Comment):
            open_barrier = False  # a label or a scope: another block / unknown
        keep.append(item)
    kernel.body = keep
    return changed


@dataclass(frozen=True)
class PtxRemoveRedundantBarriers(KernelPass):
    """Remove bar.sync 0 when only register work follows the previous one in its block."""

    name: ClassVar[str] = "ptx-remove-redundant-barriers"

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        return remove_barriers(kernel)
