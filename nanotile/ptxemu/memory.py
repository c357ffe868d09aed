"""State spaces of the emulated GPU: flat byte stores with bounds and alignment checks.

Every space is a NumPy ``uint8`` buffer. Global memory is one buffer holding many
allocations; an access must lie inside one allocation (gaps between them are guard bytes,
so running off the end of an array faults). Generic addresses put each space in its own
window: global addresses are used as they are, shared/local/param/const addresses are
offset by their window base (``cvta`` adds or removes it).
"""

from __future__ import annotations

import bisect

import numpy as np

from nanotile.ptxemu.errors import MemoryFault

GLOBAL_BASE = 0x10_0000_0000
SHARED_WINDOW = 0x7E00_0000_0000
LOCAL_WINDOW = 0x7D00_0000_0000
PARAM_WINDOW = 0x7C00_0000_0000
CONST_WINDOW = 0x7B00_0000_0000
WINDOW_SIZE = 0x0100_0000_0000

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_U64 = np.dtype(np.uint64)
_SHIFT = {1: np.uint64(0), 2: np.uint64(1), 4: np.uint64(2), 8: np.uint64(3)}
# the reductions themselves: ndarray.min()/max() go through Python-level wrappers
_lowest, _highest, _any_bits = np.minimum.reduce, np.maximum.reduce, np.bitwise_or.reduce


class Space:
    """One flat state space: ``buf`` holds bytes for addresses ``base .. base+len(buf)``.

    ``segments`` (sorted ``(start, end)`` address pairs) restricts valid accesses to the
    allocations; ``None`` means the whole buffer is valid."""

    def __init__(self, name: str, size: int, base: int = 0, readonly: bool = False) -> None:
        self.name = name
        self.base = base
        self.buf = np.zeros(max(_round_up(size, 16), 16), dtype=np.uint8)
        self.segments: list[tuple[int, int]] | None = None
        self._starts: np.ndarray | None = None     # segment bounds as buffer offsets
        self._ends: np.ndarray | None = None
        self.readonly = readonly
        self.size = size

    # -- checks
    def offsets(self, addr: np.ndarray, nbytes: int, write: bool = False) -> np.ndarray:
        """Byte offsets into ``buf`` (uint64) for the lanes' addresses; raises MemoryFault
        when an access is out of bounds or misaligned."""
        if addr.dtype is not _U64 and addr.dtype != _U64:
            addr = addr.astype(np.uint64)
        if write and self.readonly:
            raise MemoryFault(f"write to read-only {self.name} space at {_hex(addr[0])}")
        if not len(addr):
            return addr
        lo, hi = int(_lowest(addr)) - self.base, int(_highest(addr)) - self.base
        # fast path: every lane inside one allocation
        if lo < 0 or hi + nbytes > self.size:
            self._fault(addr, nbytes)
        if self._starts is not None:
            k = bisect.bisect_right(self._start_list, lo) - 1
            if k < 0 or hi + nbytes > self._end_list[k]:
                self._fault(addr, nbytes)
        # the base is aligned, so OR-ing the addresses shows any misaligned lane
        if nbytes > 1 and int(_any_bits(addr)) & (nbytes - 1):
            mis = (addr & np.uint64(nbytes - 1)) != 0
            raise MemoryFault(f"misaligned {self.name} access of {nbytes} bytes at address "
                              f"{_hex(addr[np.argmax(mis)])}")
        return addr - np.uint64(self.base) if self.base else addr

    def _fault(self, addr: np.ndarray, nbytes: int) -> None:
        """Per-lane check; raises for the first lane outside every allocation."""
        off = addr.astype(np.int64) - self.base
        bad = (off < 0) | (off + nbytes > self.size)
        if self._starts is not None:
            k = np.searchsorted(self._starts, off, side="right") - 1
            bad |= (k < 0) | (off + nbytes > self._ends[np.maximum(k, 0)])
        if bad.any():
            raise MemoryFault(f"out-of-bounds {self.name} access of {nbytes} bytes at address "
                              f"{_hex(addr[np.argmax(bad)])}")

    # -- access
    def load(self, addr: np.ndarray, nbytes: int) -> np.ndarray:
        """Load ``nbytes`` (1, 2, 4, 8) per lane; returns unsigned bits."""
        off = self.offsets(addr, nbytes)     # aligned: a shift divides by nbytes
        return self.buf.view(_UINT[nbytes])[off >> _SHIFT[nbytes]]

    def store(self, addr: np.ndarray, nbytes: int, bits: np.ndarray) -> None:
        """Store per lane, in lane order (the highest lane wins when addresses collide)."""
        off = self.offsets(addr, nbytes, write=True)
        self.buf.view(_UINT[nbytes])[off >> _SHIFT[nbytes]] = bits.astype(_UINT[nbytes],
                                                                          copy=False)

    def read_bytes(self, addr: int, n: int) -> bytes:
        self.offsets(np.array([addr], dtype=np.uint64), 1)
        if n:
            self.offsets(np.array([addr + n - 1], dtype=np.uint64), 1)
        o = addr - self.base
        return self.buf[o:o + n].tobytes()

    def write_bytes(self, addr: int, data: bytes) -> None:
        if not data:
            return
        self.offsets(np.array([addr], dtype=np.uint64), 1)
        self.offsets(np.array([addr + len(data) - 1], dtype=np.uint64), 1)
        o = addr - self.base
        self.buf[o:o + len(data)] = np.frombuffer(data, dtype=np.uint8)


class GlobalMemory(Space):
    """Global memory: a bump allocator of 256-byte-aligned allocations with guard gaps."""

    def __init__(self) -> None:
        super().__init__("global", 0, GLOBAL_BASE)
        self.segments = []
        self._pending: list[tuple[int, bytes]] = []
        self._top = GLOBAL_BASE

    def alloc(self, nbytes: int, data: bytes | None = None) -> int:
        """Reserve ``nbytes`` and return its address (data is written once finalised)."""
        addr = self._top
        self.segments.append((addr, addr + nbytes))
        self._top = _round_up(addr + max(nbytes, 1) + 256, 256)
        if data:
            self._pending.append((addr, data))
        return addr

    def finalise(self) -> None:
        """Create the buffer once all allocations are known."""
        self.size = self._top - GLOBAL_BASE
        self.buf = np.zeros(_round_up(self.size, 16), dtype=np.uint8)
        self._start_list = [s - self.base for s, _ in self.segments]
        self._end_list = [e - self.base for _, e in self.segments]
        self._starts = np.array(self._start_list, dtype=np.int64)
        self._ends = np.array(self._end_list, dtype=np.int64)
        for addr, data in self._pending:
            self.write_bytes(addr, data)
        self._pending = []


class LocalMemory:
    """Per-thread local memory for the lanes of one warp: a (lanes, size) byte array."""

    name = "local"

    def __init__(self, size: int, lanes: int = 32) -> None:
        self.size = size
        self.buf = np.zeros((lanes, max(_round_up(size, 16), 16)), dtype=np.uint8)

    def _off(self, addr: np.ndarray, nbytes: int) -> np.ndarray:
        off = addr.astype(np.int64)
        bad = (off < 0) | (off + nbytes > self.size)
        if bad.any():
            raise MemoryFault(f"out-of-bounds local access of {nbytes} bytes at address "
                              f"{_hex(int(addr[np.argmax(bad)]))} (lane {int(np.argmax(bad))})")
        if nbytes > 1 and ((off % nbytes) != 0).any():
            raise MemoryFault(f"misaligned local access of {nbytes} bytes")
        return off

    def load(self, addr: np.ndarray, nbytes: int, lanes: np.ndarray) -> np.ndarray:
        off = self._off(addr, nbytes)
        return self.buf.view(_UINT[nbytes])[lanes, off // nbytes]

    def store(self, addr: np.ndarray, nbytes: int, bits: np.ndarray, lanes: np.ndarray) -> None:
        off = self._off(addr, nbytes)
        self.buf.view(_UINT[nbytes])[lanes, off // nbytes] = bits.astype(_UINT[nbytes], copy=False)


def _round_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def _hex(a) -> str:
    return f"0x{int(a) & 0xFFFF_FFFF_FFFF_FFFF:x}"
