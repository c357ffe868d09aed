"""ptx-sink-tmem-loads: a wide read of tensor memory becomes column chunks, each read
just before its registers are first used.  ptx-sm100 -> ptx-sm100

select-instructions reads a ``tmem_load`` with tcgen05.ld.32x32b.xN (N up to 128) and
one tcgen05.wait::ld after the group: a 256 x 256 accumulator is 512 registers a thread,
all live at the wait, before the epilogue converts and stores any of them, and ptxas
spills (168 registers and 5 KB of spill stores on the block-scaled 256 x 256 matmuls).
tileiras reads its accumulators in chunks and stores each one before reading the next.
This pass does the same to a group of tcgen05.ld.32x32b followed by its wait::ld when
the group loads more than ``WHOLE`` registers (one .x128, a 128-column accumulator,
keeps its one read): every ld is cut into .x``CHUNK`` loads (its address plus the
chunk's column: ``[%r+column]``), and each chunk, with a wait::ld of its own, moves
down to the first instruction that reads or writes one of its registers, taking with
it its followers: the pure instructions that compute only from it (an f16 epilogue's
cvt.rn.f16.f32 of every register, written all together before the stores), which move
in their order down to the first use of what they write.

Why it is correct: a chunk moves only across instructions of the same basic block
(no label, no branch: the .sync.aligned ld stays where every thread of the warp runs it)
that touch none of its registers, its address register or its followers' results, and
that do not touch tensor memory (no tcgen05.*): the MMAs that wrote the columns
completed before the original wait (their commit's mbarrier wait and tcgen05.fence::
after_thread_sync come earlier in the thread), and nothing between writes them again or
deallocates them: a later MMA or the deallocation comes after a tcgen05.fence::
before_thread_sync and a bar.sync (lower-tcgen05's tcgen05_barrier), and a chunk stops
at the fence, so it may pass a plain bar.sync (insert-barriers puts one before the
epilogue's global stores) but not the one that orders it before another thread's use of
the columns; it stops at fences, mbarrier operations and calls too. A follower is
unguarded and repeatable (flow.is_repeatable: no memory read, no changing special
register), its other operands are written nowhere in the block after the group, and
its results only by it, so it computes the same values later and nothing in between
saw them. Each chunk's wait::ld comes before any read of its registers, as the PTX ISA
asks of tcgen05.ld. The lane quarter is unchanged: a chunk's address is its ld's (the
warp's lanes in the high 16 bits) plus a column offset in the low 16 bits.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import ClassVar

from ..ptx.ir import Instr, Label, PtxKernel, operand_registers
from ..ptx.passes.flow import is_repeatable
from ..ptx.passes.kernel_pass import KernelPass

CHUNK = 32    # columns (registers a thread) per chunk: one warp's 32 x 32 tile of words
WHOLE = 128   # a group loading at most this many registers is left whole
WAIT = "tcgen05.wait::ld.sync.aligned"
_LOAD = re.compile(r"tcgen05\.ld\.sync\.aligned\.32x32b\.x(\d+)\.b32")
# instructions a chunk never moves past: they touch tensor memory or order it with other
# threads (tcgen05.fence::before_thread_sync comes before every barrier that lets another
# thread write or free the columns), wait on its writes, or end the straight-line code
_STOP_ROOTS = frozenset({"tcgen05", "fence", "membar", "mbarrier", "bra", "ret", "exit",
                         "trap", "call"})


@dataclass(frozen=True)
class PtxSinkTmemLoads(KernelPass):
    """Wide tcgen05.ld groups -> column chunks read where their registers are first used."""

    name: ClassVar[str] = "ptx-sink-tmem-loads"
    input: ClassVar[str] = "ptx-sm100"
    output: ClassVar[str | None] = "ptx-sm100"

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        body = kernel.body
        starts = [i for i in range(len(body)) if _load_group(body, i) is not None and
                  (i == 0 or _load_group(body, i - 1) is None)]
        for i in reversed(starts):  # a later group's chunks then stop an earlier one's
            group = _load_group(body, i)
            end = i + len(group) + 1  # the lds and their wait
            body[i:] = _sunk(body[end:], [c for ld in group for c in _chunks(ld)])
        return bool(starts)


def _load_group(body: list, i: int) -> list[Instr] | None:
    """The unguarded tcgen05.ld.32x32b at ``i``.. followed by a wait::ld, when they load
    more than WHOLE registers in all and one is wider than a chunk (chunks this pass
    moved are left as they are), else None."""
    group = []
    j = i
    while j < len(body) and isinstance(body[j], Instr) and body[j].pred is None and \
            _LOAD.fullmatch(body[j].opcode) and len(body[j].operands) == 2:
        group.append(body[j])
        j += 1
    if not group or j == len(body) or not isinstance(body[j], Instr) or \
            body[j].opcode != WAIT:
        return None
    widths = [len(operand_registers(ld.operands[0])) for ld in group]
    if sum(widths) <= WHOLE or max(widths) <= CHUNK:  # small, or chunks already
        return None
    return group


@dataclass
class _Chunk:
    address: str          # its ld's address register
    column: int           # the chunk's first column, from that register
    registers: list[str]  # what it loads
    followers: list[int] = field(default_factory=list)  # the code that moves with it


def _chunks(ld: Instr) -> list[_Chunk]:
    """The CHUNK-column parts of ``ld`` (address ``[%r]`` or ``[%r+offset]``)."""
    registers = operand_registers(ld.operands[0])
    address, _, offset = ld.operands[1].strip("[]").partition("+")
    first = int(offset or 0)
    return [_Chunk(address, first + start, registers[start:start + CHUNK])
            for start in range(0, len(registers), CHUNK)]


def _sunk(rest: list, chunks: list[_Chunk]) -> list:
    """``rest`` (the body after the group) with each chunk, and the code that only
    computes from it, moved before the first instruction that needs its results or that
    it may not pass."""
    end = next((i for i, item in enumerate(rest) if isinstance(item, Label) or
                isinstance(item, Instr) and item.root in _STOP_ROOTS), len(rest))
    writes = Counter(r for item in rest[:end] if isinstance(item, Instr)
                     for r in item.written)
    loaded = {r for chunk in chunks for r in chunk.registers}
    at: dict[int, list[_Chunk]] = {}  # index into rest -> chunks read just before it
    for chunk in chunks:
        at.setdefault(_stop(rest, end, chunk, writes, loaded), []).append(chunk)
    moved = {i for chunk in chunks for i in chunk.followers}
    out = []
    for index, item in enumerate(rest):
        if index in at:
            out += _read(at[index], rest)
        if index not in moved:
            out.append(item)
    return out + (_read(at[len(rest)], rest) if len(rest) in at else [])


def _stop(rest: list, end: int, chunk: _Chunk, writes: Counter, loaded: set[str]) -> int:
    """Where ``chunk`` is read: before the first instruction up to ``end`` that touches
    its registers, its address or what its followers write and is not a follower itself.
    A follower (recorded in ``chunk.followers``) is an unguarded pure instruction that
    reads the chunk's registers or its earlier followers' results and otherwise only
    registers nothing in ``rest[:end]`` writes (the same value wherever it moves), and
    writes registers only it writes there (the epilogue's conversions of the
    accumulator)."""
    results = set(chunk.registers)
    touched = results | {chunk.address}
    for index in range(end):
        item = rest[index]
        if not isinstance(item, Instr) or not touched.intersection(item.all_registers()):
            continue
        others = set(item.read) - results
        if is_repeatable(item) and results.intersection(item.read) and \
                not others & loaded and not any(writes[r] for r in others) and \
                all(writes[r] == 1 and r not in touched for r in item.written):
            chunk.followers.append(index)
            results.update(item.written)
            touched.update(item.written)
            continue
        return index
    return end


def _read(chunks: list[_Chunk], rest: list) -> list[Instr]:
    """The chunks' loads, one wait::ld, then their followers in their order."""
    out = [Instr(f"tcgen05.ld.sync.aligned.32x32b.x{len(c.registers)}.b32",
                 ["{" + ", ".join(c.registers) + "}",
                  f"[{c.address}+{c.column}]" if c.column else f"[{c.address}]"])
           for c in chunks]
    return out + [Instr(WAIT)] + [rest[i] for c in chunks for i in c.followers]
