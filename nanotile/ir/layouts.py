"""Layout attributes: where the elements of a tile value live in a CTA (tile-layout).

A layout is part of a tile's type below the tile level (``TileType.layout``), printed
after the element type: ``tile<4x8xf32, #blocked<threads=128, slots=1>>``. Three kinds:

- ``#replicated``: a one-element tile (a scalar); every thread holds the value.
- ``#blocked<threads=T, slots=S>``: an N-element tile over T threads, cyclic: thread t
  holds, in its slot k, the element whose row-major linear index is ``t + T*k``; S is
  ``ceil(N / T)`` (printed for the reader; the parser checks it against the shape).
- ``#shared<offset=B>``: the tile lies in the CTA's shared buffer, element i (row-major)
  at byte ``B + i * size``; ``offset=?`` until allocate-shared gives it its place.

These are plain values (frozen dataclasses) so that the IR can print, parse and compare
them without the back end; nanotile.targets.layout adds the rule that chooses them.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("replicated", "blocked", "shared")


@dataclass(frozen=True, slots=True)
class Layout:
    """One layout value. ``elements`` is the tile's element count (from its shape)."""

    kind: str                # "replicated" | "blocked" | "shared"
    elements: int            # N, the number of elements of the tile
    threads: int = 0         # T, the CTA size (blocked only; 0 otherwise)
    offset: int | None = None  # byte offset in the shared buffer (shared only)

    @property
    def slots(self) -> int:
        """Registers per thread (a shared tile holds none)."""
        if self.kind == "replicated":
            return 1
        if self.kind == "shared":
            return 0
        return -(-self.elements // self.threads)

    @property
    def ragged(self) -> bool:
        """True if the last slot is empty in some threads."""
        return self.kind == "blocked" and self.elements % self.threads != 0

    @property
    def in_registers(self) -> bool:
        return self.kind in ("replicated", "blocked")

    def __str__(self) -> str:
        if self.kind == "replicated":
            return "#replicated"
        if self.kind == "shared":
            return f"#shared<offset={'?' if self.offset is None else self.offset}>"
        return f"#blocked<threads={self.threads}, slots={self.slots}>"


def replicated() -> Layout:
    return Layout("replicated", 1)


def blocked(elements: int, threads: int) -> Layout:
    return Layout("blocked", elements, threads)


def shared(elements: int, offset: int | None = None) -> Layout:
    return Layout("shared", elements, 0, offset)
