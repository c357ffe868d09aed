"""Distributed layouts: how the elements of a tile value are spread over a CTA's threads.

Two layouts for now, chosen by a simple rule (``choose_layout``):

- ``replicated``: a one-element tile (a scalar); every thread holds the value.
- ``blocked(T)``: an N-element tile over T threads, cyclic: thread t holds, in its slot k,
  the element whose row-major linear index is ``t + T*k`` (so consecutive threads touch
  consecutive addresses, which coalesces). The last slot is partly empty when T does not
  divide N; those lanes carry a don't-care value and are masked off memory.

Because blocked keeps the row-major order, reshape is free; broadcasts of a scalar are
free (every slot reads the replicated register); any other movement (permute, general
broadcast, cat, extract, reductions, mma operands) goes through shared memory, where a
tile is stored at its row-major linear index.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.types import Type


@dataclass(frozen=True)
class Layout:
    """A printable layout value: ``#replicated`` or ``#blocked<threads=128, slots=8>``."""

    kind: str        # "replicated" | "blocked"
    elements: int    # N, the number of elements of the tile
    threads: int     # T, the CTA size

    @property
    def slots(self) -> int:
        """Registers per thread."""
        if self.kind == "replicated":
            return 1
        return -(-self.elements // self.threads)

    @property
    def ragged(self) -> bool:
        """True if the last slot is empty in some threads."""
        return self.kind == "blocked" and self.elements % self.threads != 0

    def __str__(self) -> str:
        if self.kind == "replicated":
            return "#replicated"
        return f"#blocked<threads={self.threads}, slots={self.slots}>"


def choose_layout(shape: tuple[int, ...], threads: int) -> Layout:
    """The layout of a tile of ``shape`` in a CTA of ``threads`` threads."""
    n = 1
    for d in shape:
        n *= d
    return Layout("replicated" if n == 1 else "blocked", n, threads)


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
