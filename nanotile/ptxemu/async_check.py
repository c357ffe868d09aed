"""Checking of asynchronous work: the emulator runs a copy or a wgmma when it is issued,
but the program may use what it writes, or change what it reads, only after waiting for
it, as on the hardware. Using it earlier is a PtxError naming the instruction (on the
GPU it is a race that may pass unnoticed), so a missing ``wgmma.wait_group``,
``mbarrier.try_wait`` or ``fence.proxy.async`` fails in the emulator instead of passing.

Checked (``run_ptx(..., check_async=True)``, the default, for kernels that use any of
these instructions):

- ``cp.async.bulk(.tensor)`` into shared memory: its destination bytes cannot be read or
  written until an ``mbarrier.try_wait``/``test_wait`` has seen the phase its
  ``complete_tx`` counts towards complete;
- ``cp.async.ca/cg``: its destination until ``cp.async.wait_group``/``wait_all`` retires
  the group that holds it;
- ``cp.async.bulk(.tensor)`` out of shared memory: its source bytes cannot be written
  until ``cp.async.bulk.wait_group(.read)`` retires its bulk group;
- ``wgmma.mma_async``: its accumulator registers cannot be read or written (except by a
  wgmma accumulating into the same registers) until ``wgmma.wait_group`` retires its
  group, when the results land in them; the shared bytes its descriptors read cannot be
  written as long; it needs a ``wgmma.fence`` after the last write of its accumulator or
  A registers by another instruction (and before the warp's first wgmma);
- the async proxy (wgmma descriptors, bulk copies out of shared memory) reads no byte that
  the generic proxy (``st.shared``, ``stmatrix``...) wrote since the last
  ``fence.proxy.async``.

- ``tcgen05.mma``: the shared bytes its descriptors read are checked as the async
  proxy's (after a ``fence.proxy.async``, no copy still writing them) and cannot be
  written, nor its accumulator's tensor memory read or written by ``tcgen05.ld/st``,
  until a ``tcgen05.commit`` of the warp sends it to an mbarrier and a wait has seen
  that mbarrier's phase complete; a warp may not exit with one it never committed.

Simplifications: an mbarrier wait by one warp counts for the whole CTA (the hardware
asks it of every thread that reads the data); ``fence.proxy.async`` and the groups are per
warp, not per thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from nanotile.ptxemu.errors import MemoryFault
from nanotile.ptxemu.memory import Space

# opcodes (first two parts) whose presence turns the checking on for a kernel
ASYNC_OPCODES = ("wgmma.", "cp.async", "tcgen05.")


def uses_async(opcodes) -> bool:
    return any(op.startswith(ASYNC_OPCODES) for op in opcodes)


class AsyncHazard(MemoryFault):
    """A use of asynchronous work before the program waited for it."""


@dataclass
class _Write:
    """An asynchronous write into shared memory that the program has not waited for."""
    what: str                      # the instruction, for messages
    wait: str                      # what the program must do first, for messages
    bytes: np.ndarray              # shared offsets it writes


@dataclass
class _Wgmma:
    registers: dict[int, np.ndarray]   # accumulator register index -> result bits
    locked: np.ndarray                  # shared offsets its descriptors read


@dataclass
class _Tcgen05:
    locked: np.ndarray                  # shared offsets its descriptors read
    lanes: np.ndarray | slice           # the tensor memory it writes
    cols: slice
    committed: bool = False             # a tcgen05.commit of its warp tracks it
    done: bool = False                  # a wait saw that commit's phase complete


@dataclass
class WarpAsync:
    """One warp's asynchronous work in flight."""
    wgmma_open: list[_Wgmma] = field(default_factory=list)       # not yet committed
    wgmma_groups: list[list[_Wgmma]] = field(default_factory=list)
    pending: dict[int, int] = field(default_factory=dict)         # register -> id(_Wgmma)
    unfenced: set[int] = field(default_factory=set)   # written since the last wgmma.fence
    fenced: bool = False                               # a wgmma.fence ran
    copies_open: list[int] = field(default_factory=list)          # cp.async write ids
    copy_groups: list[list[int]] = field(default_factory=list)
    bulk_open: list[np.ndarray] = field(default_factory=list)     # bulk store sources
    bulk_groups: list[list[np.ndarray]] = field(default_factory=list)


def byte_span(offsets: np.ndarray, nbytes: int) -> np.ndarray:
    """Every byte of accesses of ``nbytes`` at ``offsets``."""
    offsets = np.asarray(offsets, np.int64).ravel()
    return (offsets[:, None] + np.arange(nbytes)).ravel()


class SharedHazards:
    """One CTA's shared memory as asynchronous work sees it."""

    def __init__(self, size: int) -> None:
        size = max(size, 1)
        self.writer = np.zeros(size, np.int32)     # id of an unwaited async write, 0: none
        self.readers = np.zeros(size, np.int32)    # async reads in flight of the byte
        # 1 + the warp whose ordinary store wrote the byte after its last fence.proxy.async
        self.unfenced = np.zeros(size, np.int32)
        self.current_warp = 0                      # the warp running (Launch.run_warp)
        self.writes: dict[int, _Write] = {}
        self.by_barrier: dict[int, list[tuple[int, int]]] = {}   # mbarrier -> (id, phase)
        self.next_id = 1
        self.warps: dict[int, WarpAsync] = {}
        # tcgen05.mma in flight: the tensor memory they write (count per cell), those a
        # warp has not committed yet, and those committed to an mbarrier phase
        self.tmem_pending: np.ndarray | None = None
        self.tcgen05_open: dict[int, list[_Tcgen05]] = {}
        self.tcgen05_by_barrier: dict[int, list[tuple[list[_Tcgen05], int]]] = {}

    def warp(self, wid: int) -> WarpAsync:
        state = self.warps.get(wid)
        if state is None:
            state = self.warps[wid] = WarpAsync()
        return state

    def warp_exits(self, wid: int) -> None:
        """A warp may not leave reads of shared memory in flight (the CTA's shared memory
        goes when it exits) nor a wgmma whose results it never waited for."""
        state = self.warps.get(wid)
        if state is None:
            return
        if state.bulk_open or state.bulk_groups:
            raise AsyncHazard("the warp exits while a cp.async.bulk it issued still reads "
                              "shared memory (missing cp.async.bulk.wait_group.read)")
        if state.pending:
            raise AsyncHazard("the warp exits with a wgmma.mma_async in flight (missing "
                              "wgmma.wait_group)")
        if any(not mma.committed for mma in self.tcgen05_open.get(wid, [])):
            raise AsyncHazard("the warp exits with a tcgen05.mma it never committed "
                              "(missing tcgen05.commit)")

    # -- the generic proxy (ld/st.shared, ldmatrix, stmatrix, atom.shared...)
    def generic_read(self, offsets: np.ndarray, nbytes: int) -> None:
        if self.writes:
            self._no_unwaited_write(byte_span(offsets, nbytes), "reads")

    def generic_write(self, offsets: np.ndarray, nbytes: int) -> None:
        span = byte_span(offsets, nbytes)
        if self.writes:
            self._no_unwaited_write(span, "writes")
        if self.readers[span].any():
            raise AsyncHazard(f"writes shared memory at 0x{self._first(span, self.readers):x} "
                              "that an asynchronous read in flight (wgmma.mma_async or "
                              "cp.async.bulk to global) still reads: retire it first "
                              "(wgmma.wait_group / cp.async.bulk.wait_group.read)")
        self.unfenced[span] = self.current_warp + 1

    def fence_proxy_async(self, wid: int) -> None:
        """The warp's earlier ordinary stores become visible to the async proxy."""
        self.unfenced[self.unfenced == wid + 1] = 0

    # -- the async proxy and asynchronous copies
    def async_read(self, span: np.ndarray, what: str) -> None:
        """``what`` reads ``span`` through the async proxy now."""
        if self.writes:
            self._no_unwaited_write(span, f"{what} reads")
        if self.unfenced[span].any():
            raise AsyncHazard(f"{what} reads shared memory at "
                              f"0x{self._first(span, self.unfenced):x} written by ordinary "
                              "stores after the last fence.proxy.async (missing "
                              "fence.proxy.async)")

    def lock(self, span: np.ndarray) -> np.ndarray:
        span = np.unique(span)
        self.readers[span] += 1
        return span

    def unlock(self, span: np.ndarray) -> None:
        self.readers[span] -= 1

    def async_write(self, span: np.ndarray, what: str, wait: str) -> int:
        """Record an asynchronous write of ``span``; returns its id."""
        if self.readers[span].any():
            raise AsyncHazard(f"{what} writes shared memory at "
                              f"0x{self._first(span, self.readers):x} that an asynchronous "
                              "read in flight (wgmma.mma_async or cp.async.bulk to global) "
                              "still reads: retire it first")
        if self.writes:
            self._no_unwaited_write(span, f"{what} writes")
        ident = self.next_id
        self.next_id += 1
        self.writes[ident] = _Write(what, wait, np.unique(span))
        self.writer[span] = ident
        return ident

    def on_barrier(self, ident: int, barrier: int, phase: int) -> None:
        """Write ``ident`` completes with phase ``phase`` of the mbarrier at ``barrier``."""
        self.by_barrier.setdefault(barrier, []).append((ident, phase))

    def observed(self, barrier: int, completed: int) -> None:
        """A wait saw the mbarrier at ``barrier`` complete its phases below ``completed``."""
        self._tcgen05_observed(barrier, completed)
        waiting = self.by_barrier.get(barrier)
        if not waiting:
            return
        still = []
        for ident, phase in waiting:
            if phase < completed:
                self.retire(ident)
            else:
                still.append((ident, phase))
        self.by_barrier[barrier] = still

    def retire(self, ident: int) -> None:
        write = self.writes.pop(ident, None)
        if write is not None:
            span = write.bytes
            self.writer[span] = np.where(self.writer[span] == ident, 0, self.writer[span])

    # -- tcgen05 (sm_100a): MMAs into tensor memory, completed through an mbarrier
    def tcgen05_issue(self, wid: int, span: np.ndarray, lanes: np.ndarray | slice,
                      cols: slice) -> None:
        """Warp ``wid`` issues a tcgen05.mma reading ``span`` (shared) and writing tensor
        memory ``[lanes, cols]`` (lanes: each row's, an M = 64 MMA's not contiguous)."""
        self.async_read(span, "tcgen05.mma")
        if self.tmem_pending is None:
            self.tmem_pending = np.zeros((128, 512), np.int32)
        self.tmem_pending[lanes, cols] += 1
        mma = _Tcgen05(self.lock(span), lanes, cols)
        self.tcgen05_open.setdefault(wid, []).append(mma)

    def tcgen05_commit(self, wid: int, barrier: int, phase: int) -> None:
        """tcgen05.commit: every MMA the warp issued that is not complete yet completes
        with phase ``phase`` of ``barrier`` (PTX ISA: the commit tracks all prior async
        tcgen05 operations of the thread, committed before or not)."""
        mmas = [mma for mma in self.tcgen05_open.get(wid, []) if not mma.done]
        self.tcgen05_open[wid] = mmas
        for mma in mmas:
            mma.committed = True
        if mmas:
            self.tcgen05_by_barrier.setdefault(barrier, []).append((list(mmas), phase))

    def _tcgen05_observed(self, barrier: int, completed: int) -> None:
        waiting = self.tcgen05_by_barrier.get(barrier)
        if not waiting:
            return
        still = []
        for mmas, phase in waiting:
            if phase < completed:
                for mma in mmas:
                    if not mma.done:
                        mma.done = True
                        self.unlock(mma.locked)
                        self.tmem_pending[mma.lanes, mma.cols] -= 1
            else:
                still.append((mmas, phase))
        self.tcgen05_by_barrier[barrier] = still

    def tmem_access(self, lanes: np.ndarray, cols: np.ndarray, what: str) -> None:
        """``what`` (tcgen05.ld/st) reads or writes tensor memory cells (lanes[i],
        cols[j]): not while a tcgen05.mma writes them."""
        if self.tmem_pending is None:
            return
        busy = self.tmem_pending[np.ix_(lanes, cols)]
        if busy.any():
            lane = int(lanes[np.nonzero(busy)[0][0]])
            col = int(cols[np.nonzero(busy)[1][0]])
            raise AsyncHazard(f"{what} accesses tensor memory (lane {lane}, column {col}) "
                              "that a tcgen05.mma in flight still writes (missing "
                              "tcgen05.commit and an mbarrier wait)")

    def _no_unwaited_write(self, span: np.ndarray, verb: str) -> None:
        ids = self.writer[span]
        if ids.any():
            write = self.writes[int(ids[np.argmax(ids != 0)])]
            raise AsyncHazard(f"{verb} shared memory at 0x{self._first(span, self.writer):x} "
                              f"that {write.what} is still writing ({write.wait})")

    @staticmethod
    def _first(span: np.ndarray, marks: np.ndarray) -> int:
        return int(span[np.argmax(marks[span] != 0)])


class CheckedShared(Space):
    """A CTA's shared memory whose ordinary accesses (the generic proxy) are checked
    against the asynchronous work in flight; asynchronous instructions use ``Space``'s
    methods on it directly and tell ``hazards`` themselves."""

    def __init__(self, size: int, hazards: SharedHazards) -> None:
        super().__init__("shared", size)
        self.hazards = hazards

    def load(self, addr: np.ndarray, nbytes: int) -> np.ndarray:
        bits = super().load(addr, nbytes)      # bounds and alignment first
        self.hazards.generic_read(addr.astype(np.int64) - self.base, nbytes)
        return bits

    def store(self, addr: np.ndarray, nbytes: int, bits: np.ndarray) -> None:
        self.offsets(addr, nbytes, write=True)
        self.hazards.generic_write(addr.astype(np.int64) - self.base, nbytes)
        super().store(addr, nbytes, bits)

    def read_bytes(self, addr: int, n: int) -> bytes:
        data = super().read_bytes(addr, n)
        self.hazards.generic_read(np.arange(addr, addr + n) - self.base, 1)
        return data

    def write_bytes(self, addr: int, data: bytes) -> None:
        super().write_bytes(addr, data)
        self.hazards.generic_write(np.arange(addr, addr + len(data)) - self.base, 1)


def raw_load(shared: Space, addr: np.ndarray, nbytes: int) -> np.ndarray:
    """Load from shared memory without the generic proxy's checks (asynchronous reads)."""
    return Space.load(shared, addr, nbytes)


def raw_store(shared: Space, addr: np.ndarray, nbytes: int, bits: np.ndarray) -> None:
    Space.store(shared, addr, nbytes, bits)


def raw_read_bytes(shared: Space, addr: int, n: int) -> bytes:
    return Space.read_bytes(shared, addr, n)


def raw_write_bytes(shared: Space, addr: int, data: bytes) -> None:
    Space.write_bytes(shared, addr, data)


# ---------------------------------------------------------------- wgmma's registers

def wgmma_read(w, i: int, name: str) -> None:
    """Another instruction reads register ``i``: not while a wgmma writes it."""
    state = w.cta.hazards.warps.get(w.wid)
    if state is not None and i in state.pending:
        raise AsyncHazard(f"reads {name} while a wgmma.mma_async that writes it is in "
                          "flight (missing wgmma.wait_group)")


def wgmma_write(w, i: int, name: str) -> None:
    """Another instruction writes register ``i``: not while a wgmma writes it; a wgmma
    reading it later needs a wgmma.fence first."""
    state = w.cta.hazards.warp(w.wid)
    if i in state.pending:
        raise AsyncHazard(f"writes {name} while a wgmma.mma_async that writes it is in "
                          "flight (missing wgmma.wait_group)")
    state.unfenced.add(i)


def retired(groups: list, keep: int) -> list:
    """A wait_group ``keep``: removes from ``groups`` (oldest first) every group but the
    newest ``keep`` and returns those, which are complete."""
    done = groups[:max(len(groups) - keep, 0)]
    del groups[:len(done)]
    return done


def wgmma_retire(w, state: WarpAsync, keep: int) -> None:
    """wgmma.wait_group ``keep``: every committed group but the newest ``keep`` completes:
    its results land in their registers and its shared operands are free again."""
    for group in retired(state.wgmma_groups, keep):
        for mma in group:
            for i, bits in mma.registers.items():
                if state.pending.get(i) == id(mma):
                    w.R[i] = bits
                    del state.pending[i]
            w.cta.hazards.unlock(mma.locked)
