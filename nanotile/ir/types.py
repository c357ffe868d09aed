"""Tile IR types: element types, pointers, tiles, views, tokens and functions.

Types are immutable values (frozen dataclasses), so they can be compared, hashed and
shared freely. ``str(t)`` gives the canonical text form, the one tileirdisasm prints
inside a module (no ``!cuda_tile.`` prefix).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a tile's layout: only the back end makes them (CLI start-up)
    from .layouts import AnyLayout as Layout

# A tile holds at most 2**24 elements (spec 5.3).
MAX_TILE_ELEMENTS = 1 << 24

# A dynamic dimension or stride: printed `?`, stored as INT64_MIN in bytecode.
DYNAMIC = None


class Type:
    """Base class of every Tile IR type."""

    def __str__(self) -> str:  # pragma: no cover - every subclass overrides
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class ElementType(Type):
    """A scalar number type such as ``i32`` or ``bf16``."""

    name: str
    bitwidth: int
    is_float: bool
    since: str = "13.1"

    @property
    def is_int(self) -> bool:
        return not self.is_float

    def __str__(self) -> str:
        return self.name


I1 = ElementType("i1", 1, False)
I4 = ElementType("i4", 4, False, "13.3")
I8 = ElementType("i8", 8, False)
I16 = ElementType("i16", 16, False)
I32 = ElementType("i32", 32, False)
I64 = ElementType("i64", 64, False)
F16 = ElementType("f16", 16, True)
BF16 = ElementType("bf16", 16, True)
F32 = ElementType("f32", 32, True)
TF32 = ElementType("tf32", 32, True)
F64 = ElementType("f64", 64, True)
F8E4M3FN = ElementType("f8E4M3FN", 8, True)
F8E5M2 = ElementType("f8E5M2", 8, True)
F8E8M0FNU = ElementType("f8E8M0FNU", 8, True, "13.2")
F4E2M1FN = ElementType("f4E2M1FN", 4, True, "13.3")
F8E5M3FNU = ElementType("f8E5M3FNU", 8, True, "13.4")

ELEMENT_TYPES: dict[str, ElementType] = {
    t.name: t
    for t in (I1, I4, I8, I16, I32, I64, F16, BF16, F32, TF32, F64,
              F8E4M3FN, F8E5M2, F8E8M0FNU, F4E2M1FN, F8E5M3FNU)
}


class PaddingValue(Enum):
    """What a view reads outside its tensor (wire byte = value)."""

    zero = 0
    neg_zero = 1
    nan = 2
    pos_inf = 3
    neg_inf = 4


def _dim(d: int | None) -> str:
    return "?" if d is None else str(d)


def _dims_x(dims: tuple[int | None, ...]) -> str:
    """`4x8x` prefix of a shaped type (empty for rank 0)."""
    return "".join(f"{_dim(d)}x" for d in dims)


@dataclass(frozen=True, slots=True)
class PointerType(Type):
    """``ptr<T>``: a memory address of a T in global memory."""

    pointee: Type
    # 13.4 adds an optional pointer attribute byte; None = default (not printed).
    ptr_attr: int | None = None

    def __str__(self) -> str:
        return f"ptr<{self.pointee}>"


@dataclass(frozen=True, slots=True)
class TileType(Type):
    """``tile<4x8xf32>``: an immutable multi-dimensional value; rank 0 is a scalar.

    Below the tile level (language tile-layout) a tile also says where its elements live:
    ``tile<4x8xf32, #blocked<threads=128, slots=1>>`` (``layout``, see layouts.py); at the
    tile level ``layout`` is None and is not printed."""

    shape: tuple[int, ...]
    element: Type  # ElementType or PointerType
    layout: Layout | None = None

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __str__(self) -> str:
        if self.layout is not None:
            return f"tile<{_dims_x(self.shape)}{self.element}, {self.layout}>"
        return f"tile<{_dims_x(self.shape)}{self.element}>"


@dataclass(frozen=True, slots=True)
class TokenType(Type):
    """``token``: orders memory operations."""

    def __str__(self) -> str:
        return "token"


TOKEN = TokenType()


@dataclass(frozen=True, slots=True)
class TensorViewType(Type):
    """``tensor_view<?x128xf32, strides=[?,1]>``: a strided global-memory tensor."""

    element: ElementType
    shape: tuple[int | None, ...]
    strides: tuple[int | None, ...]
    ptr_attr: int | None = None  # 13.4 optional pointer attribute

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        strides = ",".join(_dim(s) for s in self.strides)
        if not self.shape:
            return f"tensor_view<{self.element}>"
        return f"tensor_view<{_dims_x(self.shape)}{self.element}, strides=[{strides}]>"


def _tile_shape(shape: tuple[int, ...]) -> str:
    return "x".join(str(d) for d in shape)


def _padding(p: PaddingValue | None) -> str:
    return "" if p is None else f", padding_value = {p.name}"


def _dim_map(dim_map: tuple[int, ...] | None) -> str:
    return "" if dim_map is None else f", dim_map=[{', '.join(map(str, dim_map))}]"


@dataclass(frozen=True, slots=True)
class PartitionViewType(Type):
    """A tensor view cut into a grid of equal tiles, indexed by tile coordinates."""

    tile_shape: tuple[int, ...]
    tensor_view: TensorViewType
    dim_map: tuple[int, ...] | None = None  # None = identity (not printed)
    padding: PaddingValue | None = None

    def __str__(self) -> str:
        return (f"partition_view<tile=({_tile_shape(self.tile_shape)})"
                f"{_padding(self.padding)}, {self.tensor_view}{_dim_map(self.dim_map)}>")


@dataclass(frozen=True, slots=True)
class StridedViewType(Type):
    """Like a partition view, but consecutive tiles start ``traversal_strides`` apart (13.3)."""

    tile_shape: tuple[int, ...]
    traversal_strides: tuple[int, ...]
    tensor_view: TensorViewType
    dim_map: tuple[int, ...] | None = None
    padding: PaddingValue | None = None

    def __str__(self) -> str:
        strides = ",".join(map(str, self.traversal_strides))
        return (f"strided_view<tile=({_tile_shape(self.tile_shape)}), traversal_strides=[{strides}]"
                f"{_padding(self.padding)}, {self.tensor_view}{_dim_map(self.dim_map)}>")


@dataclass(frozen=True, slots=True)
class GatherScatterViewType(Type):
    """A view whose ``sparse_dim`` is indexed by a tile of indices (13.3)."""

    tile_shape: tuple[int, ...]
    tensor_view: TensorViewType
    sparse_dim: int
    padding: PaddingValue | None = None

    def __str__(self) -> str:
        return (f"gather_scatter_view<tile=({_tile_shape(self.tile_shape)}){_padding(self.padding)}, "
                f"{self.tensor_view}, sparse_dim={self.sparse_dim}>")


VIEW_TYPES = (PartitionViewType, StridedViewType, GatherScatterViewType)


@dataclass(frozen=True, slots=True)
class FunctionType(Type):
    """``(inputs) -> (results)``: the signature of an entry."""

    inputs: tuple[Type, ...]
    results: tuple[Type, ...] = ()

    def __str__(self) -> str:
        ins = ", ".join(map(str, self.inputs))
        if len(self.results) == 1 and not isinstance(self.results[0], FunctionType):
            return f"({ins}) -> {self.results[0]}"
        return f"({ins}) -> ({', '.join(map(str, self.results))})"


@dataclass(frozen=True, slots=True)
class OpaqueType(Type):
    """A type from another dialect (``!foo.bar<...>``), kept as its text."""

    text: str

    def __str__(self) -> str:
        return self.text


def is_view(t: Type) -> bool:
    return isinstance(t, VIEW_TYPES)


def element_of(t: Type) -> Type:
    """The element type of a tile, or the type itself for anything else."""
    return t.element if isinstance(t, TileType) else t
