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

How: candidates are visited in the order of repeated scans of the loop (the first scan in
body order; an instruction whose last in-loop source was just hoisted is visited later in
the same scan if it comes after, else in the next), with a heap instead of rescans. The
pressure after each instruction of the loop sits in a segment tree (add to a range, maximum
of a range), since hoisting ``%d`` adds its weight wherever ``%d`` was not live already
(flow.live_ranges gives those runs).

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

import heapq
from bisect import bisect_left, bisect_right
from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

from ..ir import Instr, Label, PtxKernel, defs, uses
from .flow import (
    branch_target,
    is_register_operand,
    is_repeatable,
    kernel_cfg,
    live_ranges,
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


class MaxTree:
    """Numbers at positions 0..n-1: add to a range, maximum of a range, in O(log n)."""

    def __init__(self, values: list[int]) -> None:
        self.size = 1
        while self.size < len(values):
            self.size *= 2
        self.best = [float("-inf")] * (2 * self.size)  # the maximum below a node
        self.added = [0] * (2 * self.size)  # added to the whole range of a node
        self.best[self.size:self.size + len(values)] = values
        for node in range(self.size - 1, 0, -1):
            self.best[node] = max(self.best[2 * node], self.best[2 * node + 1])

    def add(self, lo: int, hi: int, amount: int, node: int = 1, left: int = 0,
            right: int | None = None) -> None:
        """Add ``amount`` at positions lo..hi-1."""
        right = self.size if right is None else right
        if hi <= left or right <= lo:
            return
        if lo <= left and right <= hi:
            self.best[node] += amount
            self.added[node] += amount
            return
        mid = (left + right) // 2
        self.add(lo, hi, amount, 2 * node, left, mid)
        self.add(lo, hi, amount, 2 * node + 1, mid, right)
        self.best[node] = max(self.best[2 * node], self.best[2 * node + 1]) + self.added[node]

    def max(self, lo: int, hi: int, node: int = 1, left: int = 0,
            right: int | None = None) -> float:
        """The maximum at positions lo..hi-1 (-inf for an empty range)."""
        right = self.size if right is None else right
        if hi <= left or right <= lo:
            return float("-inf")
        if lo <= left and right <= hi:
            return self.best[node]
        mid = (left + right) // 2
        return max(self.max(lo, hi, 2 * node, left, mid),
                   self.max(lo, hi, 2 * node + 1, mid, right)) + self.added[node]


def _split(region: list[int], spans: list[tuple[int, int]]) -> tuple[list, list]:
    """The positions of ``region`` (sorted body indices) inside the ``spans`` and outside
    them, each as ranges (lo, hi) of positions."""
    inside = []
    for first, last in spans:
        lo, hi = bisect_left(region, first), bisect_right(region, last)
        if lo < hi:
            inside.append((lo, hi))
    outside, at = [], 0
    for lo, hi in inside:
        if at < lo:
            outside.append((at, lo))
        at = hi
    if at < len(region):
        outside.append((at, len(region)))
    return inside, outside


def _pressure(kernel: PtxKernel, size: int, ranges: dict) -> list[int]:
    """32-bit registers live after each body index."""
    change = [0] * (size + 1)
    for reg, spans in ranges.items():
        w = _weight(kernel, reg)
        for first, last in spans:
            change[first] += w
            change[last + 1] -= w
    total, out = 0, []
    for delta in change[:size]:
        total += delta
        out.append(total)
    return out


def _hoistable(kernel: PtxKernel, loop: tuple[int, int], ranges: dict, pressure: list[int],
               def_count: Counter, max_pressure: int) -> list[int]:
    """Body indices of the loop's instructions to hoist."""
    body = kernel.body
    region = [k for k in range(loop[0], loop[1] + 1) if isinstance(body[k], Instr)]
    written = Counter(r for k in region for r in defs(body[k]))
    tree = MaxTree([pressure[k] for k in region])
    blocked: dict[int, int] = {}  # candidate -> its sources written in the loop
    readers: dict[str, list[int]] = {}  # register -> candidates waiting for it
    ready: list[tuple[int, int]] = []  # (scan, body index)
    for k in region:
        instr = body[k]
        if instr.root == "ld" or not is_repeatable(instr):
            continue
        dest = instr.operands[0]
        if not is_register_operand(dest) or def_count[dest] != 1:
            continue
        waits = {r for r in uses(instr) if written[r]}
        blocked[k] = len(waits)
        for r in waits:
            readers.setdefault(r, []).append(k)
        if not waits:
            ready.append((0, k))
    hoisted: list[int] = []
    while ready:
        scan, k = heapq.heappop(ready)
        dest = body[k].operands[0]
        w = _weight(kernel, dest)
        inside, outside = _split(region, ranges.get(dest, []))
        peak = max([tree.max(lo, hi) + w for lo, hi in outside]
                   + [tree.max(lo, hi) for lo, hi in inside])
        if peak > max_pressure:
            continue  # live across the whole loop, it would exceed the budget
        for lo, hi in outside:
            tree.add(lo, hi, w)
        hoisted.append(k)
        written[dest] -= 1
        if written[dest] == 0:
            for m in readers.pop(dest, []):
                blocked[m] -= 1
                if blocked[m] == 0:
                    heapq.heappush(ready, (scan if m > k else scan + 1, m))
    return sorted(hoisted)


def hoist_once(kernel: PtxKernel, max_pressure: int) -> bool:
    body = kernel.body
    cfg = kernel_cfg(kernel)
    if cfg is None:
        return False
    loops = _loops(body)
    if not loops:
        return False
    ranges = live_ranges(cfg, body)
    pressure = _pressure(kernel, len(body), ranges)
    def_count = Counter(r for item in body if isinstance(item, Instr) for r in defs(item))
    for i, j in loops:
        hoisted = _hoistable(kernel, (i, j), ranges, pressure, def_count, max_pressure)
        if hoisted:
            keep = set(hoisted)
            kernel.body = body[:i] + [body[k] for k in hoisted] + \
                [item for k, item in enumerate(body[i:], i) if k not in keep]
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
    max_pressure: int = 128  # registers live in a loop that hoisting may not exceed

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        return hoist_loop_invariants(kernel, self.max_pressure)
