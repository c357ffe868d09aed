"""Facts about the CTA's shared memory that several back-end passes share."""

from __future__ import annotations

from ...ir import types as T

ALIGN = 16               # bytes: every shared buffer starts at a multiple of this
STATIC_LIMIT = 48 * 1024  # bytes a static .shared array may have
MAX_BYTES = 227 * 1024    # bytes of shared memory a CTA may use on sm_90 and sm_100


def element_bytes(t: T.Type) -> int:
    """Bytes one element takes in shared memory: its own width (i1 and 4-bit floats take
    a byte; pointers 8)."""
    if isinstance(t, T.PointerType):
        return 8
    assert isinstance(t, T.ElementType)
    return max(1, t.bitwidth // 8)


def tile_bytes(t: T.TileType, elements: int | None = None) -> int:
    """Bytes a tile of ``t`` takes (``elements`` of room, padding included)."""
    n = t.num_elements if elements is None else elements
    return n * element_bytes(t.element)
