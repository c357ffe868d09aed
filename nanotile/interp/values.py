"""Runtime values other than tiles: views and tokens.

Tiles are NumPy arrays (see dtypes.py). A tensor view is its base address, shape and
strides (in elements); a sub-view (partition, strided, gather/scatter) is a tensor view
plus its static type, which carries the tile shape, dim_map, traversal strides and
padding. Tokens carry no data: the interpreter performs every memory operation when it
is reached (see nanotile.interp's docstring), so a token is only a placeholder.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.types import ElementType, GatherScatterViewType, PartitionViewType, StridedViewType


@dataclass(frozen=True, slots=True)
class TensorView:
    base: int  # byte address
    element: ElementType
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements


@dataclass(frozen=True, slots=True)
class SubView:
    tensor: TensorView
    type: PartitionViewType | StridedViewType | GatherScatterViewType


class Token:
    """A memory-ordering token (carries nothing at run time)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<token>"


TOKEN = Token()
