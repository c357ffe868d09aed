"""Tensor maps for ``cp.async.bulk.tensor`` (TMA) in the emulator.

A real ``CUtensorMap`` is an opaque 128-byte object the CUDA driver encodes. The emulator
uses its own documented 128-byte layout instead (little-endian):

    0   u32 magic 0x314D544E ("NTM1")     4   u32 rank (1..5)
    8   u64 global address                16  u32 element size in bytes
    20  u32 out-of-bounds fill (0 = zero, 1 = NaN)
    24  u64 dims[5] (elements, dim 0 innermost)
    64  u64 strides[4] (bytes, of dims 1..4)
    96  u32 box[5] (elements)             116 u32 swizzle (0 none, 1 32B, 2 64B, 3 128B)
    120 u32 element type (ELEMENT_CODES; 0 unknown: copies need only the size, a
        ``cp.reduce.async.bulk.tensor`` needs the type, as a CUtensorMap's dataType)

``TensorMap`` builds one from a NumPy array argument of ``run_ptx``; the bytes go into the
kernel's ``.param .align 64 .b8 [128]`` parameter.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from nanotile.ptxemu.async_check import byte_span, raw_load, raw_store
from nanotile.ptxemu.errors import MemoryFault

MAGIC = 0x314D544E
# the element types a tensor map can name (a Tile IR element type -> its code)
# (iN signed, uN unsigned: nanotile.ir.tensor_maps.TensorMapSpec.data_type)
ELEMENT_CODES = {"f16": 1, "bf16": 2, "f32": 3, "f64": 4, "i8": 5, "i16": 6, "i32": 7,
                 "i64": 8, "f8E4M3FN": 9, "f8E5M2": 10, "u8": 11, "u16": 12, "u32": 13,
                 "u64": 14}


@dataclass
class TensorMap:
    """A tensor map over ``array`` (C order) loading ``box`` tiles (given outermost first,
    like the array's shape). ``dims`` and ``strides`` (in elements, outermost first)
    describe another view of the array's memory than its own shape and strides (a
    kernel's tensor view)."""
    array: np.ndarray
    box: tuple[int, ...]
    oob_nan: bool = False
    swizzle: int = 0
    dims: tuple[int, ...] | None = None
    strides: tuple[int, ...] | None = None
    element: str | None = None  # the Tile IR element type (ELEMENT_CODES), if known

    def encode(self, address: int) -> bytes:
        a = self.array
        shape = self.dims if self.dims is not None else a.shape
        element_strides = self.strides if self.strides is not None else \
            tuple(s // a.itemsize for s in a.strides)
        rank = len(shape)
        dims = list(reversed(shape))
        strides = [s * a.itemsize for s in reversed(element_strides)][1:]
        box = list(reversed(self.box))
        _check_encodable(address, strides, box, a.itemsize)
        out = struct.pack("<IIQII", MAGIC, rank, address, a.itemsize, int(self.oob_nan))
        out += struct.pack("<5Q", *(dims + [1] * (5 - rank)))
        out += struct.pack("<4Q", *(strides + [0] * (4 - len(strides))))
        out += struct.pack("<5I", *(box + [1] * (5 - rank)))
        out += struct.pack("<II", self.swizzle, ELEMENT_CODES.get(self.element, 0))
        return out.ljust(128, b"\0")


def _check_encodable(address: int, strides: list[int], box: list[int], size: int) -> None:
    """What cuTensorMapEncodeTiled refuses (CUDA driver API): a base address not 16-byte
    aligned, a stride not a multiple of 16 bytes, a box dimension of 0 or over 256, a
    box row that is not a multiple of 16 bytes. ValueError naming the value."""
    if address % 16:
        raise ValueError(f"tensor map: base address 0x{address:x} is not 16-byte aligned")
    for stride in strides:
        if stride % 16:
            raise ValueError(f"tensor map: a stride of {stride} bytes is not a multiple of "
                             "16 (cuTensorMapEncodeTiled refuses it)")
    if any(not 0 < b <= 256 for b in box) or (box[0] * size) % 16:
        raise ValueError(f"tensor map: box {list(reversed(box))} (each dimension 1..256, "
                         "rows a multiple of 16 bytes)")


def _decode(desc: bytes):
    magic, rank, addr, esize, oob = struct.unpack_from("<IIQII", desc, 0)
    if magic != MAGIC:
        raise MemoryFault("cp.async.bulk.tensor: the tensor-map operand does not point to an "
                          "emulator tensor map (build it with emulator.TensorMap)")
    dims = struct.unpack_from("<5Q", desc, 24)[:rank]
    strides = (esize,) + struct.unpack_from("<4Q", desc, 64)[:rank - 1]
    box = struct.unpack_from("<5I", desc, 96)[:rank]
    swizzle = struct.unpack_from("<I", desc, 116)[0]
    return rank, addr, esize, oob, dims, strides, box, swizzle


def _box_offsets(dims, strides, box, coords):
    """Byte offsets into global memory of every box element (box order, dim 0 fastest)
    and whether each is in bounds."""
    grids = np.meshgrid(*[np.arange(b) + c for b, c in zip(reversed(box), reversed(coords))],
                        indexing="ij")
    idx = [g.ravel() for g in reversed(grids)]       # idx[d] for dim d
    inb = np.ones(idx[0].shape, dtype=bool)
    off = np.zeros(idx[0].shape, dtype=np.int64)
    for d in range(len(dims)):
        inb &= (idx[d] >= 0) & (idx[d] < dims[d])
        off += idx[d].astype(np.int64) * strides[d]
    return off, inb


def _swizzle(offsets: np.ndarray, mode: int) -> np.ndarray:
    if mode == 0:
        return offsets
    bits = {1: 1, 2: 2, 3: 3}[mode]
    mask = (1 << bits) - 1
    return offsets ^ (((offsets >> 7) & mask) << 4)


def tma_load(w, desc: bytes, coords: list[int], dst: int) -> tuple[int, np.ndarray]:
    """Copy one box from global to shared memory at ``dst``; returns how many bytes it
    wrote, and their shared addresses."""
    rank, addr, esize, oob, dims, strides, box, swz = _decode(desc)
    if len(coords) != rank:
        raise MemoryFault(f"tensor map of rank {rank} used with {len(coords)} coordinates")
    off, inb = _box_offsets(dims, strides, box, coords)
    g = w.cta.launch.gmem
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[esize]
    vals = np.zeros(off.shape, dtype=u)
    if inb.any():
        vals[inb] = g.load((addr + off[inb]).astype(np.uint64), esize)
    if oob and (~inb).any():
        nan = {2: 0x7FFF, 4: 0x7FFFFFFF, 8: 0x7FFFFFFFFFFFFFFF}.get(esize, 0)
        vals[~inb] = nan
    soff = _swizzle(np.arange(len(vals), dtype=np.int64) * esize, swz)
    raw_store(w.cta.shared, (dst + soff).astype(np.uint64), esize, vals)
    return len(vals) * esize, byte_span(dst + soff, esize)


def tma_store(w, desc: bytes, coords: list[int], src: int) -> np.ndarray:
    """Copy one box from shared memory at ``src`` to global; returns the shared addresses
    it read."""
    _, addr, esize, _, dims, strides, box, swz = _decode(desc)
    off, inb = _box_offsets(dims, strides, box, coords)
    soff = _swizzle(np.arange(len(off), dtype=np.int64) * esize, swz)
    vals = raw_load(w.cta.shared, (src + soff).astype(np.uint64), esize)
    if inb.any():
        w.cta.launch.gmem.store((addr + off[inb]).astype(np.uint64), esize, vals[inb])
    return byte_span(src + soff, esize)


def tma_reduce(w, desc: bytes, coords: list[int], src: int, operation: str) -> np.ndarray:
    """Combine one box from shared memory at ``src`` with global memory element by element
    (``operation``: add, and, or, xor, min, max, of the map's element type, integers
    signed or unsigned as it says; each element's update atomic, as
    cp.reduce.async.bulk.tensor's are); returns the shared addresses it read."""
    _, addr, esize, _, dims, strides, box, swz = _decode(desc)
    element = {code: name for name, code in ELEMENT_CODES.items()}.get(
        struct.unpack_from("<I", desc, 120)[0])
    if element is None:
        raise MemoryFault("cp.reduce.async.bulk.tensor: the tensor map does not say its "
                          "element type")
    off, inb = _box_offsets(dims, strides, box, coords)
    soff = _swizzle(np.arange(len(off), dtype=np.int64) * esize, swz)
    gmem = w.cta.launch.gmem
    addresses = (addr + off[inb]).astype(np.uint64)
    new = raw_load(w.cta.shared, (src + soff).astype(np.uint64), esize)[inb]
    old = gmem.load(addresses, esize)
    gmem.store(addresses, esize, _combine(old, new, element, operation))
    return byte_span(src + soff, esize)


INTEGERS = ("i32", "i64", "u32", "u64")


def _combine(old: np.ndarray, new: np.ndarray, element: str, operation: str) -> np.ndarray:
    """``old`` op ``new`` on the element's bits (unsigned arrays of its size)."""
    unsigned = old.dtype
    if operation in ("and", "or", "xor") and element == "i64":
        # measured on an H200: CUDA_ERROR_ILLEGAL_INSTRUCTION (a UINT64 map reduces)
        raise MemoryFault(f"cp.reduce.async.bulk.tensor: .{operation} through a tensor map "
                          f"of signed 64-bit integers (INT64), which the hardware refuses")
    if operation in ("and", "or", "xor") and element in INTEGERS:
        return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[
            operation](old, new.astype(unsigned))
    if operation == "add" and element in INTEGERS:
        return (old.astype(np.uint64) + new.astype(np.uint64)).astype(unsigned)
    if operation in ("min", "max") and element in INTEGERS:  # signed as the map says
        kind = np.dtype(f"{'int' if element[0] == 'i' else 'uint'}{8 * unsigned.itemsize}")
        pick = np.minimum if operation == "min" else np.maximum
        return pick(old.view(kind), new.astype(unsigned).view(kind)).view(unsigned)
    if operation == "add" and element == "f32":  # rounded once, to nearest even
        return (old.view(np.float32) + new.astype(unsigned).view(np.float32)).view(unsigned)
    if operation == "add" and element in ("f16", "bf16"):
        import ml_dtypes

        dtype = np.float16 if element == "f16" else ml_dtypes.bfloat16
        exact = old.view(dtype).astype(np.float64) + \
            new.astype(unsigned).view(dtype).astype(np.float64)
        return exact.astype(dtype).view(unsigned)
    raise MemoryFault(f"cp.reduce.async.bulk.tensor: .{operation} of {element} is not "
                      f"emulated")
