"""The interpreter's global memory: a flat 64-bit byte address space over NumPy buffers.

Each array the caller passes (and each ``global`` and ``alloca``) is an *allocation*: it
gets a base address, 256-byte aligned, with unmapped gaps between allocations, and its
bytes are a ``uint8`` view of the very buffer the caller passed, so stores are visible
in the caller's arrays with no copy back. A pointer is just a ``uint64`` address, so
pointer arithmetic (``offset``), ``ptr_to_int``/``int_to_ptr`` and views built on any
pointer work as on the device. Accesses are vectorised: a tile of addresses is mapped to
(allocation, byte offset) pairs with one ``searchsorted``.

Accessing an address outside every allocation, or a misaligned one, is undefined
behaviour in Tile IR; here it raises ``InterpError`` naming the address.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..ir.types import ElementType, PointerType
from .dtypes import from_bits, storage_bytes, to_bits
from .errors import InterpError

FIRST_ADDRESS = 0x1000_0000
ALIGN = 256


@dataclass
class Allocation:
    base: int
    data: np.ndarray  # uint8, 1-D; a view of the owner's buffer
    name: str
    _typed: dict = field(default_factory=dict)

    @property
    def size(self) -> int:
        return self.data.size

    def typed(self, dtype: np.dtype) -> np.ndarray:
        """The buffer viewed as ``dtype`` (trailing bytes that do not fill one dropped)."""
        view = self._typed.get(dtype)
        if view is None:
            n = self.size // dtype.itemsize * dtype.itemsize
            view = self._typed[dtype] = self.data[:n].view(dtype)
        return view


class Memory:
    """All allocations of one kernel launch."""

    def __init__(self, strict: bool = True) -> None:
        # strict: an access outside every allocation raises InterpError; otherwise it
        # reads zero and writes nothing (handy to compare runs of kernels whose inputs
        # were sized by guesswork; the access is still undefined behaviour in Tile IR).
        self.strict = strict
        self.allocations: list[Allocation] = []
        self._bases = np.zeros(0, np.uint64)
        self._next = FIRST_ADDRESS

    # -- allocation ---------------------------------------------------------------------

    def register(self, array: np.ndarray, name: str) -> int:
        """Map a caller's array into memory (no copy); returns its base address."""
        if not array.flags.c_contiguous:
            raise InterpError(f"{name}: arrays passed to a kernel must be C-contiguous "
                              "(use np.ascontiguousarray)")
        data = array.reshape(-1).view(np.uint8)
        return self._add(data, name)

    def allocate(self, nbytes: int, name: str, alignment: int = ALIGN) -> int:
        return self._add(np.zeros(max(nbytes, 1), np.uint8), name, alignment)

    def release_from(self, count: int) -> None:
        """Forget the allocations made after the first ``count`` (end of an alloca's life)."""
        del self.allocations[count:]
        self._bases = self._bases[:count]

    def _add(self, data: np.ndarray, name: str, alignment: int = ALIGN) -> int:
        alignment = max(alignment, ALIGN)
        base = -(-self._next // alignment) * alignment
        if base + data.size + ALIGN >= 1 << 64:  # a global's huge alignment, say
            raise InterpError(f"{name}: an allocation of {data.size} bytes aligned to "
                              f"{alignment} does not fit in the 64-bit address space")
        self._next = base + data.size + ALIGN  # leave an unmapped gap after each one
        self.allocations.append(Allocation(base, data, name))
        self._bases = np.append(self._bases, np.uint64(base))
        return base

    # -- address translation ------------------------------------------------------------

    def _locate(self, addrs: np.ndarray, width: float) -> tuple[np.ndarray, np.ndarray]:
        """(allocation index, byte offset) of each address; raises if any is unmapped."""
        addrs = addrs.astype(np.uint64, copy=False)
        idx = np.searchsorted(self._bases, addrs, side="right").astype(np.int64) - 1
        ok = idx >= 0
        safe = np.where(ok, idx, 0)
        if len(self.allocations):
            bases = self._bases[safe]
            sizes = np.array([a.size for a in self.allocations], np.uint64)[safe]
            off = (addrs - np.where(ok, bases, addrs)).astype(np.int64)
            ok &= off + max(int(width), 1) <= sizes.astype(np.int64)
        else:
            off = np.zeros(addrs.shape, np.int64)
        if not ok.all():
            if not self.strict:  # lenient mode: such lanes read 0 and write nothing
                return np.where(ok, idx, -1), off
            bad = int(addrs[~ok].ravel()[0])
            raise InterpError(f"memory access at address {bad:#x} is outside every array "
                              "(out-of-bounds access)")
        return idx, off

    def _groups(self, addrs: np.ndarray, width: float):
        """Yield (allocation, positions, byte offsets) for each allocation touched."""
        idx, off = self._locate(addrs, width)
        if idx.size == 0:
            return
        first = idx.flat[0]
        if first >= 0 and (idx == first).all():
            yield self.allocations[first], None, off
            return
        for a in np.unique(idx[idx >= 0]):
            sel = idx == a
            yield self.allocations[a], sel, off[sel]

    # -- element access -----------------------------------------------------------------

    def load(self, addrs: np.ndarray, t: ElementType | PointerType) -> np.ndarray:
        """Read one element of type ``t`` at each address (all lanes must be valid)."""
        width = storage_bytes(t)
        self._check_width(t)
        raw_dtype = np.dtype(f"<u{int(width)}")
        out = np.zeros(addrs.shape, raw_dtype)
        for alloc, sel, off in self._groups(addrs, width):
            self._check_aligned(off, int(width), addrs)
            vals = alloc.typed(raw_dtype)[off // int(width)]
            if sel is None:
                out = vals.reshape(addrs.shape)
            else:
                out[sel] = vals
        return from_bits(out, t)

    def store(self, addrs: np.ndarray, values: np.ndarray, t: ElementType | PointerType) -> None:
        """Write ``values`` at ``addrs``; with repeated addresses the last lane wins."""
        width = storage_bytes(t)
        self._check_width(t)
        raw_dtype = np.dtype(f"<u{int(width)}")
        raw = to_bits(np.broadcast_to(values, addrs.shape), t).astype(raw_dtype)
        for alloc, sel, off in self._groups(addrs, width):
            self._check_aligned(off, int(width), addrs)
            alloc.typed(raw_dtype)[off // int(width)] = raw if sel is None else raw[sel]

    # -- 4-bit element access (views over f4 / i4 tensors: two elements per byte) --------

    def load_nibbles(self, base: int, elems: np.ndarray, t: ElementType) -> np.ndarray:
        byte_addrs = np.uint64(base) + (elems // 2).astype(np.uint64)
        raw = self.load(byte_addrs, _U8)
        raw = to_bits(raw, _U8)
        nib = np.where(elems % 2 == 0, raw & 0xF, raw >> 4).astype(np.uint8)
        return from_bits(nib, t)

    def store_nibbles(self, base: int, elems: np.ndarray, values: np.ndarray,
                      t: ElementType) -> None:
        # Read-modify-write one nibble at a time (in order) so two lanes sharing a byte
        # both land.
        values = to_bits(np.broadcast_to(values, elems.shape), t).ravel()
        for e, v in zip(elems.ravel().tolist(), values.tolist()):
            addr = np.asarray([base + e // 2], np.uint64)
            byte = int(to_bits(self.load(addr, _U8), _U8)[0])
            byte = (byte & 0xF0) | v if e % 2 == 0 else (byte & 0x0F) | (v << 4)
            self.store(addr, np.asarray([byte], np.uint8).view(np.int8), _U8)

    @staticmethod
    def _check_width(t: ElementType | PointerType) -> None:
        if isinstance(t, ElementType) and t.bitwidth == 4:
            raise InterpError(f"loads and stores of {t} through pointer tiles are not "
                              "modelled (use a tensor view)")

    @staticmethod
    def _check_aligned(off: np.ndarray, width: int, addrs: np.ndarray) -> None:
        if width > 1 and (off % width).any():
            raise InterpError(f"misaligned {width}-byte memory access")


_U8 = ElementType("i8", 8, False)
