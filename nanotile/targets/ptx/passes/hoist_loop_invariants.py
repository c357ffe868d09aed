"""ptx-hoist-loop-invariants: compute loop-invariant values once, before the loop.  ptx-sm90 -> ptx-sm90

The back end lowers a Tile IR ``for`` body op by op, so index arithmetic that depends
only on values fixed before the loop (the thread's row and column in a tile, a view's
base offset) is recomputed in every iteration: the matmul K loop of the corpus recomputes
about a hundred such instructions per iteration. This pass moves them in front of the
loop, where they run once (ptx-cse then merges them with equal computations there).

Loops: a label L at index i with backward branches ``[@%p] bra L`` to it, the last at
index j; the range i..j (so every back edge, ``continue`` included, is inside) must have
one entry: no branch outside the range names a label inside it (the range is then
entered only by falling into L). Hoisted (repeated until none is left, so chains
of invariant instructions move together, in their order): an instruction of the range
that is pure and repeatable (flow.is_repeatable; no loads at all), unguarded, whose
source registers no instruction of the range writes, and whose destination is written
by no other instruction of the whole kernel. The instructions move, in order, to just
before L.

Register pressure: every hoisted value stays live across the whole loop, and on a
register-bound kernel (matmul_f16: 255 registers) hoisting everything made ptxas spill
(8 -> 132 bytes) and the SASS grow (3648 -> 4024 instructions). So a loop only gets
hoisted values while its pressure stays within ``max-pressure`` (default 128) 32-bit
registers: the largest number of registers live at once inside the loop (liveness;
64-bit registers count twice, predicates not), counting each hoisted value as live
everywhere in the loop.

Why it is correct: the sources are not written inside the loop, so they hold the same
values at the new place (reached right before every entry into the loop) as at every
execution inside it: the destination gets the value it would get in every iteration.
The destination has no other definition anywhere, so no other value of it is replaced:
inside the loop every read saw this value (from this or an earlier iteration); after the
loop, a read saw this value if the instruction had run, and an undefined register if not
(a loop exited before reaching it), which the hoisted value refines. Being pure and not a
load, the instruction cannot fault or touch memory, so running it once more (when the
original would not run at all, e.g. in a branch of the body never taken) is invisible.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

from ..ir import Instr, Label, PtxKernel, defs, uses
from .flow import (
    branch_target,
    is_register_operand,
    is_repeatable,
    kernel_cfg,
    liveness,
    reg_prefix,
)
from .kernel_pass import KernelPass


def _loops(body: list) -> list[tuple[int, int]]:
    """(label index, back-branch index) of the single-entry backward-branch ranges,
    innermost (shortest) first."""
    where = {item.name: i for i, item in enumerate(body) if isinstance(item, Label)}
    branches = [(i, branch_target(item)) for i, item in enumerate(body)
                if isinstance(item, Instr) and branch_target(item) is not None]
    if any(isinstance(item, Instr) and item.root == "brx" for item in body):
        return []
    last: dict[str, int] = {}
    for j, target in branches:
        if target in where and where[target] < j:
            last[target] = max(last.get(target, j), j)  # the loop ends at its last back edge
    out = []
    for target, j in last.items():
        i = where[target]
        inside = {item.name for item in body[i:j + 1] if isinstance(item, Label)}
        if any(t in inside and not i <= k <= j for k, t in branches):
            continue  # another way into the range
        out.append((i, j))
    return sorted(out, key=lambda r: r[1] - r[0])


def _weight(kernel: PtxKernel, reg: str) -> int:
    """32-bit registers a virtual register takes (predicates: none)."""
    ty = kernel.reg_types.get(reg_prefix(reg), ".b32")
    return 0 if ty == ".pred" else 2 if ty.endswith("64") else 1


def hoist_once(kernel: PtxKernel, max_pressure: int) -> bool:
    body = kernel.body
    cfg = kernel_cfg(kernel)
    if cfg is None:
        return False
    live = liveness(cfg, body)
    def_count = Counter(r for item in body if isinstance(item, Instr) for r in defs(item))
    for i, j in _loops(body):
        region = [k for k in range(i, j + 1) if isinstance(body[k], Instr)]
        written = Counter(r for k in region for r in defs(body[k]))
        # 32-bit registers live after each instruction of the loop, hoisted values added
        pressure = {k: sum(_weight(kernel, r) for r in live[k]) for k in region}
        hoisted: list[int] = []
        progress = True
        while progress:
            progress = False
            for k in region:
                instr = body[k]
                if k in hoisted or instr.root == "ld" or not is_repeatable(instr):
                    continue
                dest = instr.operands[0]
                if not is_register_operand(dest) or def_count[dest] != 1:
                    continue
                if any(written[r] for r in uses(instr)):
                    continue
                w = _weight(kernel, dest)
                grown = {k: p + (0 if dest in live[k] else w) for k, p in pressure.items()}
                if max(grown.values()) > max_pressure:
                    continue  # live across the whole loop, it would exceed the budget
                pressure = grown
                hoisted.append(k)
                written[dest] -= 1
                progress = True
        if hoisted:
            hoisted.sort()
            moved = [body[k] for k in hoisted]
            keep = set(hoisted)
            kernel.body = body[:i] + moved + [item for k, item in enumerate(body[i:], i)
                                              if k not in keep]
            return True  # indices changed: find the loops again
    return False


def hoist_loop_invariants(kernel: PtxKernel, max_pressure: int = 128) -> bool:
    changed = False
    while hoist_once(kernel, max_pressure):
        changed = True
    return changed


@dataclass(frozen=True)
class PtxHoistLoopInvariants(KernelPass):
    """Move loop-invariant pure instructions in front of their (single-entry) loop."""

    name: ClassVar[str] = "ptx-hoist-loop-invariants"
    max_pressure: int = 128

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        return hoist_loop_invariants(kernel, self.max_pressure)
