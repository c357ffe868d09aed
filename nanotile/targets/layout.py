"""Distributed layouts: how the elements of a tile value are spread over a CTA's threads.

The layout values (``Layout``: ``#replicated``, ``#blocked<threads=T, slots=S>``,
``#shared<offset=B>``) live in nanotile/ir/layouts.py, since they are part of a tile's
type in language tile-layout; this module adds the rule that chooses them
(``choose_layout``, applied by the assign-layouts pass) and the back end's helpers.

- ``replicated``: a one-element tile (a scalar); every thread holds the value.
- ``blocked(T)``: an N-element tile over T threads, cyclic: thread t holds, in its slot k,
  the element whose row-major linear index is ``t + T*k`` (so consecutive threads touch
  consecutive addresses, which coalesces). The last slot is partly empty when T does not
  divide N; those lanes carry a don't-care value and are masked off memory.
- ``shared``: the tile in the CTA's shared buffer at its row-major linear index
  (``shared_element_bytes`` per element), from byte ``offset`` on (allocate-shared).

Because blocked keeps the row-major order, reshape is free; broadcasts of a scalar are
free (every slot reads the replicated register); any other movement (permute, general
broadcast, cat, extract, insert, reductions, scans, mma operands) reads its operands from
shared memory, where an explicit ``convert_layout`` to ``#shared`` has put them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..ir.layouts import Layout
from ..ir.types import Type

__all__ = [
    "DEFAULT_THREADS",
    "SHARED_ALIGN",
    "STREAM_CHUNK_BYTES",
    "Layout",
    "TileRegs",
    "choose_layout",
    "cta_threads",
    "line_in_one_thread",
    "multi_index",
    "reduce_strategy",
    "row_major_strides",
    "shared_element_bytes",
    "warp_plan",
]

DEFAULT_THREADS = 128  # 4 warps (DESIGN.md, "Kernel ABI")
SHARED_ALIGN = 16      # bytes: every shared buffer starts at a multiple of this
# A full reduction of a 1-D tile staging more than this streams through shared memory in
# chunks of at most this size (assign-layouts, lower_shared._reduce_streamed).
STREAM_CHUNK_BYTES = 48 * 1024


def cta_threads(entry: Any, gpu_name: str) -> int:
    """CTA size of an entry: ``num_warps`` from its optimization hints for ``gpu_name``
    (or ``default``), else 4 warps."""
    hints = entry.attributes.get("optimization_hints")
    warps = None
    for arch, hint in getattr(hints, "targets", ()) or ():
        if arch in ("default", gpu_name) and hint.get("num_warps") is not None:
            value = hint.get("num_warps")
            warps = int(getattr(value, "value", value))
    return 32 * warps if warps else DEFAULT_THREADS


def line_in_one_thread(shape: tuple[int, ...], dim: int, threads: int) -> bool:
    """True if, in ``#blocked`` over ``threads``, every line of the tile along ``dim`` lies
    in one thread: the row-major stride of ``dim`` (the product of the dimensions after
    it) is a multiple of the CTA size, so the elements of a line, ``stride`` apart in the
    linear order, all fall on the same thread. A reduce or scan along such a dimension
    then runs in each thread's registers, and its result (the line index dropped, or kept
    for a scan) is again ``#blocked`` with each element on the thread that computed it:
    for shape (A, n, B) the element (a, i, b) is on thread (a*n*B + i*B + b) mod T = b mod T
    and the result element (a, b) on thread (a*B + b) mod T = b mod T, as T divides B."""
    if not shape or not 0 <= dim < len(shape):
        return False
    return row_major_strides(shape)[dim] % threads == 0


def shared_element_bytes(t: Type) -> int:
    """Bytes per element in shared memory: the register's width (i1 as a byte)."""
    from .ptx.builder import reg_class

    return {"b64": 8, "f64": 8, "b16": 2, "pred": 1}.get(reg_class(t), 4)


def choose_layout(shape: tuple[int, ...], threads: int) -> Layout:
    """The layout of a tile of ``shape`` in a CTA of ``threads`` threads."""
    n = 1
    for d in shape:
        n *= d
    if n == 1:
        return Layout("replicated", 1)
    return Layout("blocked", n, threads)


@dataclass
class TileRegs:
    """A lowered tile value: its type, layout and one register per slot."""

    element: Type
    shape: tuple[int, ...]
    layout: Layout
    regs: list[str]

    @property
    def n(self) -> int:
        return self.layout.elements


def multi_index(linear: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major linear index -> multi-index (used for constant-folded slots)."""
    out = []
    for d in reversed(shape):
        out.append(linear % d)
        linear //= d
    return tuple(reversed(out))


def row_major_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return tuple(reversed(strides))


# ---- how a reduce/scan runs -----------------------------------------------------------

# Combiners a warp may apply in butterfly order: the result is the same in any order for
# the integer ops (two's-complement add/mul, min/max, bitwise), and for the float ones
# (round-to-nearest) it differs from the sequential fold only by summation order, which
# the spec leaves open.
SHUFFLE_COMBINERS = frozenset({"addi", "muli", "maxi", "mini", "andi", "ori", "xori",
                               "addf", "mulf", "maxf", "minf"})


@dataclass(frozen=True)
class WarpPlan:
    """A reduce along the last dimension by warp shuffles: each thread first folds
    ``slots_per_row`` of its own slots, then ``lanes`` lanes combine by shfl.bfly, then
    ``warps_per_row`` warp partials combine through shared memory."""

    row: int            # L, the length of the reduced dimension
    lanes: int          # lanes holding one row's elements in one slot (a power of two)
    slots_per_row: int  # consecutive slots of one thread in the same row
    warps_per_row: int  # warps holding parts of the same row


def warp_plan(shape: tuple[int, ...], dim: int, threads: int) -> WarpPlan | None:
    """The shuffle plan of a reduce along ``dim`` of a #blocked tile over ``threads``, or
    None. Rows are the last dimension; with T | N (no partly empty slot) either a row is a
    power-of-two segment of at most 32 lanes of one slot (L | 32), or it spans whole slots
    of every thread (T | L: slots k*L/T ... of all threads, so all warps)."""
    if not shape or dim != len(shape) - 1 or threads % 32:
        return None
    n = 1
    for d in shape:
        n *= d
    row = shape[-1]
    if n % threads or row < 2:
        return None
    if row <= 32 and row & (row - 1) == 0:
        return WarpPlan(row, row, 1, 1)
    if row % threads == 0:
        return WarpPlan(row, 32, row // threads, threads // 32)
    return None


def _shuffle_body(op: Any) -> bool:
    """The body is one combiner of SHUFFLE_COMBINERS on 32-bit registers, rounding to
    nearest (a directed rounding would make the order visible beyond a few ulps)."""
    from ..ir.enums import RoundingMode
    from .ptx.builder import reg_class

    ops = op.regions[0].block.ops
    if len(op.operands) != 1 or len(ops) != 2 or ops[0].name not in SHUFFLE_COMBINERS:
        return False
    mode = ops[0].attributes.get("rounding_mode")
    if mode is not None and mode != RoundingMode.nearest_even:
        return False
    return reg_class(op.operands[0].type.element) in ("b32", "f32")


def reduce_strategy(op: Any, threads: int | None) -> str:
    """How the back end runs a reduce or scan over a CTA of ``threads`` (None: unknown):
    'registers' (every line in one thread: line_in_one_thread), 'shuffles' (a reduce along
    the last dimension: warp_plan), 'streamed' (a full reduction of a 1-D tile staging more
    than STREAM_CHUNK_BYTES, in chunks) or 'shared' (operands staged whole by
    convert_layout). assign-layouts and the lowering both ask this one function."""
    src = op.operands[0].type
    dim = op.attributes["dim"]
    if threads is None:
        return "shared"
    if line_in_one_thread(src.shape, dim, threads):
        return "registers"
    if op.name != "reduce":
        return "shared"
    if warp_plan(src.shape, dim, threads) is not None and _shuffle_body(op):
        return "shuffles"
    staged = sum(v.type.num_elements * shared_element_bytes(v.type.element)
                 for v in op.operands)
    if src.rank == 1 and op.results[0].type.num_elements == 1 and staged > STREAM_CHUNK_BYTES:
        return "streamed"
    return "shared"
