"""ptx-coalesce-copies: a copy between two registers that never hold different live
values is deleted, and the two registers become one.  ptx-sm90 -> ptx-sm90

Loop-carried values leave copies that copy propagation cannot remove: a K loop keeps its
accumulator in ``%f1 ... %f512`` across the back edge, and every iteration copies it into
the registers the wgmma updates in place and back again (``mov.f32 %f1025, %f1`` before
it, ``mov.f32 %f1, %f1025`` after). Both registers are written again inside the loop, so
no read of one can be replaced by the other, yet they never hold two different values
that are both still needed. This is copy coalescing as register allocators do it
(Chaitin): two registers of one class *interfere* when one is written where the other is
live after the write, unless the write is an unguarded copy between the two (they then
hold the same value), or when one instruction writes both. An unguarded ``mov.T %d, %s``
whose registers do not interfere is deleted and ``%d`` renamed ``%s`` everywhere. (On a
256x256 f32 matmul, the 1,024 copies of each iteration made ptxas take 42 s; 3 s without
them.)

Copies chain (``%b = %a``, ``%c = %b``): the registers that copies connect are grouped,
every pair in a group is checked, and two groups merge when no register of one interferes
with a register of the other; the copies are visited in program order.

Why it is correct: liveness comes from a backward walk over the basic blocks
(flow.live_out; a guarded write may not happen, so it does not end a live range, but it
is a write for interference). If two registers do not interfere, then wherever one of
them is written the other is dead or holds the same value (a copy between them): naming
both the same changes no value any later instruction reads. A merged group holds no pair
that interferes, so the same holds for all of its registers at once; the copies inside it
become moves of a register onto itself, and are deleted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir import Instr, PtxKernel, rename_registers
from .copy_propagation import register_copy
from .flow import Cfg, kernel_cfg, live_out
from .kernel_pass import KernelPass


def coalesce_copies(kernel: PtxKernel) -> bool:
    copies = [c for c in (register_copy(kernel, item) for item in kernel.body
                          if isinstance(item, Instr)) if c is not None]
    cfg = kernel_cfg(kernel) if copies else None
    if cfg is None:
        return False
    groups = _Groups()
    for d, s in copies:
        groups.connect(d, s)
    clashes = _interference(cfg, kernel.body, groups.partners())
    merged = _Groups()
    for d, s in copies:
        if not any(frozenset((x, y)) in clashes
                   for x in merged.members(d) for y in merged.members(s)):
            merged.connect(d, s)
    mapping = merged.renaming()
    if not mapping:
        return False
    _rename(kernel, mapping)
    return True


class _Groups:
    """Registers joined by copies (union-find); each group's name is its root's."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}
        self.group: dict[str, list[str]] = {}  # root -> its registers

    def find(self, register: str) -> str:
        root = self.parent.setdefault(register, register)
        while root != self.parent[root]:
            root = self.parent[root]
        self.parent[register] = root
        return root

    def members(self, register: str) -> list[str]:
        return self.group.get(self.find(register), [register])

    def connect(self, destination: str, source: str) -> None:
        a, b = self.find(destination), self.find(source)
        if a != b:  # the source's name stays
            self.group[b] = self.members(b) + self.group.pop(a, [a])
            self.parent[a] = b

    def partners(self) -> dict[str, frozenset[str]]:
        """For each register, the others of its group."""
        out = {}
        for registers in self.group.values():
            for r in registers:
                out[r] = frozenset(registers) - {r}
        return out

    def renaming(self) -> dict[str, str]:
        return {r: root for root, registers in self.group.items() for r in registers
                if r != root}


def _interference(cfg: Cfg, body: list, partners: dict[str, frozenset[str]]
                  ) -> set[frozenset[str]]:
    """The pairs of ``partners`` that interfere (see the module's docstring)."""
    clashes: set[frozenset[str]] = set()
    for b, live in enumerate(live_out(cfg, body)):
        block = cfg.blocks[b]
        live = set(live)  # live after the instruction being visited
        for i in range(block.end - 1, block.start - 1, -1):
            instr = body[i]
            if not isinstance(instr, Instr):
                continue
            written, read = instr.written, instr.read
            for x in written:
                for y in partners.get(x, ()):
                    if (y in live and not _copies(instr, y)) or (y in written and y != x):
                        clashes.add(frozenset((x, y)))
            if instr.pred is None:  # a guarded write may not happen: the old value lives
                live.difference_update(written)
            live.update(read)
    return clashes


def _copies(instr: Instr, source: str) -> bool:
    """Whether ``instr`` is an unguarded copy of ``source`` (its destination then holds
    the same value as ``source``)."""
    return instr.root == "mov" and instr.pred is None and instr.read == (source,)


def _rename(kernel: PtxKernel, mapping: dict[str, str]) -> None:
    """Every occurrence renamed; the copies of a register onto itself deleted. (An
    instruction naming none of them is left as it is, its cached registers with it.)"""
    body = []
    for item in kernel.body:
        if isinstance(item, Instr) and not mapping.keys().isdisjoint(item.all_registers()):
            if item.pred:
                item.pred = rename_registers(item.pred, mapping)
            item.operands = [rename_registers(op, mapping) for op in item.operands]
            if item.root == "mov" and len(item.operands) == 2 and \
                    item.operands[0] == item.operands[1]:
                continue
        body.append(item)
    kernel.body[:] = body


@dataclass(frozen=True)
class PtxCoalesceCopies(KernelPass):
    """Delete a register copy whose two registers never hold different live values, the
    two renamed as one (copy coalescing)."""

    name: ClassVar[str] = "ptx-coalesce-copies"

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        return coalesce_copies(kernel)
