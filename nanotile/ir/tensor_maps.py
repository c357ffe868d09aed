"""A tensor map's description, as the ``tensor`` attribute of ``tma_load`` carries it.

A tensor map describes a tensor in global memory (base address, shape, strides, element
type) and the box one TMA copy (cp.async.bulk.tensor) moves: its shape, and the swizzle it
writes shared memory in. The kernel cannot build one (the host encodes it), so the
description names where the launcher finds each number: ``aN`` is the kernel's N-th
argument (cuTile's ABI: an array is a pointer followed by its shape and strides), a
number a constant. Shapes, strides and boxes are outermost first, strides in elements:

    f16 base=a0 shape=[a1,a2] strides=[a3,1] box=[128,32] swizzle=64

A map of integers may end in ``unsigned``: its type is UINT32 (UINT64...) rather than
INT32, which an atomic reduction's .and, .or and .xor need (REDUCTIONS below).

A copy of a 2-D tile from a column-major tensor (strides [1, s]: the tile's columns lie
contiguously) goes through the map of the transposed tensor, its shape and strides
reversed, and the description ends in ``transposed``: the tile's dimensions are the
map's in reverse order (its coordinates and box are the map's, as for any map):
    f8E4M3FN base=a14 shape=[a16,a15] strides=[a18,1] box=[256,128] swizzle=128 transposed
In PTX, a tensor map is a hidden kernel parameter after the user's, as tileiras passes
them (``.param .align 64 .b8 NAME[128]``), and the kernel's body names each one with its
description, for the launcher:

    // nanotile: tensor map matmul_param_tma0 f16 base=a0 shape=[a1,a2] strides=[a3,1] box=[128,32] swizzle=64

``tensor_maps(ptx, kernel)`` reads them back (the emulator's run_ptx builds its own tensor
maps from them; bench/gpu_check.py and tests/targets/test_gpu.py have the driver encode
real ones). The interpreter reads the description to run ``tma_load``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .layouts import SharedLayout, flat_index

COMMENT = "nanotile: tensor map"
SWIZZLE_MODES = {0: 0, 32: 1, 64: 2, 128: 3}   # bytes -> CU_TENSOR_MAP_SWIZZLE_* / emulator
ELEMENT_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "i16": 2, "i32": 4,
                 "i64": 8, "f8E4M3FN": 1, "f8E5M2": 1}

# An atomic_red_view_tko's modes that TMA reduces (a tma_store's ``reduction``), with the
# element types each takes here and their bytes (PTX ISA, cp.reduce.async.bulk.tensor:
# .add of f16, bf16, f32, u32 and s32; .and, .or and .xor of 32- and 64-bit integers;
# .min and .max of integers, signed or not as the tensor map's type says). The map's
# integers are signed (INT32, INT64), so max and min reduce by TMA and umax and umin keep
# their atomics, except for the bitwise modes (UNSIGNED_REDUCTIONS), whose maps are
# ``unsigned`` (UINT32, UINT64): an H200 refuses .and, .or and .xor through an INT64 map
# (CUDA_ERROR_ILLEGAL_INSTRUCTION) and reduces them through a UINT64 one.
# PTX_REDUCTION: the instruction's .redOp.
REDUCTIONS = {"addf": {"f16": 2, "bf16": 2, "f32": 4}, "add": {"i32": 4},
              "and": {"i32": 4, "i64": 8}, "or": {"i32": 4, "i64": 8},
              "xor": {"i32": 4, "i64": 8}, "max": {"i32": 4, "i64": 8},
              "min": {"i32": 4, "i64": 8}}
UNSIGNED_REDUCTIONS = frozenset({"and", "or", "xor"})
PTX_REDUCTION = {"addf": "add", "add": "add", "and": "and", "or": "or", "xor": "xor",
                 "max": "max", "min": "min"}


@dataclass(frozen=True)
class Dim:
    """A size: a kernel argument's value (``argument``) or a constant."""
    argument: int | None = None
    constant: int | None = None

    def text(self) -> str:
        return f"a{self.argument}" if self.argument is not None else str(self.constant)

    @staticmethod
    def parse(text: str) -> Dim:
        return Dim(argument=int(text[1:])) if text.startswith("a") else Dim(constant=int(text))

    def value(self, arguments: list) -> int:
        return int(arguments[self.argument]) if self.argument is not None else self.constant


@dataclass(frozen=True)
class TensorMapSpec:
    element: str                  # Tile IR element type name (f16, bf16...)
    base: int                     # the kernel argument holding the base pointer
    shape: tuple[Dim, ...]        # outermost first
    strides: tuple[Dim, ...]      # in elements, outermost first (the last is 1)
    box: tuple[int, ...]          # one copy's box, outermost first
    swizzle: int                  # bytes: 0, 32, 64 or 128
    transposed: bool = False      # a 2-D tile's dimensions are the map's reversed
    unsigned: bool = False        # integers the map's type says are unsigned (UINT32...)

    def text(self) -> str:
        return (f"{self.element} base=a{self.base} shape=[{','.join(d.text() for d in self.shape)}]"
                f" strides=[{','.join(d.text() for d in self.strides)}]"
                f" box=[{','.join(map(str, self.box))}] swizzle={self.swizzle}"
                + (" transposed" if self.transposed else "")
                + (" unsigned" if self.unsigned else ""))

    @property
    def data_type(self) -> str:
        """The map's element type as a launcher encodes it: the Tile IR element type, or
        for an unsigned map of integers u8...u64 (an integer's bits are the same; a
        reduction's .min, .max and .and... read the type)."""
        return "u" + self.element[1:] if self.unsigned else self.element

    @staticmethod
    def parse(text: str) -> TensorMapSpec:
        m = _SPEC.fullmatch(text.strip())
        if m is None:
            raise ValueError(f"not a tensor map description: {text!r}")

        def dims(s: str) -> tuple[Dim, ...]:
            return tuple(Dim.parse(x) for x in s.split(","))
        return TensorMapSpec(m["element"], int(m["base"]), dims(m["shape"]),
                             dims(m["strides"]), tuple(int(x) for x in m["box"].split(",")),
                             int(m["swizzle"]), bool(m["transposed"]), bool(m["unsigned"]))

    def sizes(self, arguments: list) -> tuple[list[int], list[int]]:
        """(shape, strides in elements) for a launch with these kernel arguments."""
        return ([d.value(arguments) for d in self.shape],
                [d.value(arguments) for d in self.strides])

    @property
    def element_bytes(self) -> int:
        return ELEMENT_BYTES[self.element]

    @property
    def box_bytes(self) -> int:
        size = self.element_bytes
        for b in self.box:
            size *= b
        return size


_SPEC = re.compile(r"(?P<element>\w+) base=a(?P<base>\d+) shape=\[(?P<shape>[a\d,]+)\] "
                   r"strides=\[(?P<strides>[a\d,]+)\] box=\[(?P<box>[\d,]+)\] "
                   r"swizzle=(?P<swizzle>\d+)(?P<transposed> transposed)?"
                   r"(?P<unsigned> unsigned)?")


def swizzled(offset: int, width: int) -> int:
    """Where a TMA copy (or wgmma) with a ``width``-byte swizzle puts the byte at
    ``offset`` of its unswizzled box (PTX ISA, "Tensor Map Swizzling Modes"): the 16-byte
    chunk index (bits 4 and up, as many as the pattern has) XOR the 128-byte row index
    (bits 7 and up); the box starts at a multiple of the pattern's period."""
    bits = {32: 1, 64: 2, 128: 3}.get(width, 0)
    return offset ^ (((offset >> 7) & ((1 << bits) - 1)) << 4)


def box_lays_out(layout: SharedLayout, tile: tuple[int, int], first: tuple[int, int],
                 box: tuple[int, int], element_bytes: int, swizzle: int,
                 transposed: bool = False) -> bool:
    """Whether a TMA copy of a ``box`` (rows, columns) with a ``swizzle``-byte swizzle,
    whose first element is the map's element ``first`` of the tile and lands at that
    element's place in ``layout``, puts every element of the box where ``layout`` has it
    (``transposed``: the map sees the tile's transpose).

    When the layout is linear over GF(2) (``linear_bases``), the sizes are powers of two
    and the box starts at a multiple of its shape, the offsets from the box's start are
    linear in the bits of (row, column) on both sides: they agree everywhere when they
    agree on each bit alone, and the start adds to them without carries when it shares no
    bit with any of them. Otherwise (or when that test fails) element by element."""
    rows, columns = box
    width = columns * element_bytes

    def offset(r: int, c: int) -> int:
        return map_element_offset(layout, tile, (r, c), element_bytes, transposed)

    start = offset(*first)
    if _linear_box(layout, first, box, element_bytes):
        units = [(1 << i, 0) for i in range(rows.bit_length() - 1)] + \
                [(0, 1 << j) for j in range(columns.bit_length() - 1)]
        reached = 0  # every bit an offset in the box may have
        for r, c in units:
            reached |= offset(r, c)
        if all(swizzled(r * width + c * element_bytes, swizzle) == offset(r, c)
               for r, c in units) and not start & reached:
            return True
    r0, c0 = first
    return all(start + swizzled(r * width + c * element_bytes, swizzle) == offset(r0 + r, c0 + c)
               for r in range(rows) for c in range(columns))


def map_element_offset(layout: SharedLayout, tile: tuple[int, int], at: tuple[int, int],
                       element_bytes: int, transposed: bool = False) -> int:
    """Bytes from the buffer's start to the map's element ``at`` (row, column) of the
    tile laid out as ``layout`` (``transposed``: the map's rows are the tile's columns)."""
    r, c = at
    return element_bytes * layout.element_offset(flat_index((c, r) if transposed else (r, c),
                                                            tile))


def _linear_box(layout: SharedLayout, first: tuple[int, int], box: tuple[int, int],
                element_bytes: int) -> bool:
    return layout.linear_bases() is not None and \
        all(n > 0 and not n & (n - 1) for n in (*box, element_bytes)) and \
        all(at % n == 0 for at, n in zip(first, box))


_LINE = re.compile(r"//[ \t]*nanotile:[ \t]*tensor map[ \t]+(?P<param>\S+)[ \t]+(?P<spec>.*)")


def comment(param: str, spec: TensorMapSpec) -> str:
    """The body comment (without ``//``) that tells launchers about one map."""
    return f"{COMMENT} {param} {spec.text()}"


def tensor_maps(ptx: str, kernel: str) -> list[tuple[str, TensorMapSpec]]:
    """(parameter name, description) of each tensor map kernel ``kernel`` of PTX text
    ``ptx`` takes, in parameter order."""
    start = ptx.find(f".entry {kernel}(")
    if start < 0:
        return []
    end = ptx.find(".entry ", start + 1)
    body = ptx[start:end if end >= 0 else len(ptx)]
    return [(m["param"], TensorMapSpec.parse(m["spec"])) for m in _LINE.finditer(body)]
