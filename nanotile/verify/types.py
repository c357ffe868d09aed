"""Rules on types themselves: tile shapes, tensor views, partition/strided/gather
views, pointers.

In MLIR these checks run when a type is built, so the reference reports them while
parsing, at the type's position. Each ``check_*`` function here returns the
reference's message for the first broken rule, or None: the text parser and the
bytecode reader call them as they build types, and ``check_type`` is also applied by the
verifier to every type it meets (for IR built in other ways).
"""

from __future__ import annotations

from nanotile.ir.types import (
    MAX_TILE_ELEMENTS,
    ElementType,
    FunctionType,
    GatherScatterViewType,
    PaddingValue,
    PartitionViewType,
    PointerType,
    StridedViewType,
    TensorViewType,
    TileType,
    Type,
)

# Element types allowed in a tile, and as a pointee, in the order the messages list them.
_NUMBER_NAMES = ("f16", "bf16", "f32", "tf32", "f64", "f8E4M3FN", "f8E5M2", "f8E8M0FNU",
                 "f4E2M1FN", "i1", "i8", "i16", "i32", "i64")
POINTEE_MESSAGE = "failed to verify 'pointeeType': " + " or ".join(_NUMBER_NAMES)
ELEMENT_MESSAGE = ("failed to verify 'elementType': " + " or ".join(_NUMBER_NAMES)
                   + " or Pointer type")
VIEW_ELEMENT_MESSAGE = "failed to verify 'elementType': " + " or ".join(_NUMBER_NAMES)
_NUMBER_OK = set(_NUMBER_NAMES) | {"f8E5M3FNU"}
_TILE_ELEMENT_OK = _NUMBER_OK | {"i4"}


def _csv(values) -> str:
    return ", ".join(str(v) for v in values)


def check_tile_shape(shape: tuple[int, ...]) -> str | None:
    """Positive, power-of-two dimensions and at most 2**24 elements."""
    count = 1
    for d in shape:
        if d is None:
            return "expected static shape"
        if d <= 0:
            return f"all dimensions must be positive constants, got {_csv(shape)}"
        if d & (d - 1):
            return f"all dimensions must be powers of two, got {_csv(shape)}"
        if count > MAX_TILE_ELEMENTS // d:
            return f"tile would exceed the maximum of {MAX_TILE_ELEMENTS} elements"
        count *= d
    return None


def check_tile_type(shape: tuple[int, ...], element: Type) -> str | None:
    """The rules of ``tile<shape x element>``; None when it is a valid type."""
    if isinstance(element, ElementType):
        if element.name not in _TILE_ELEMENT_OK:
            return ELEMENT_MESSAGE
    elif isinstance(element, PointerType):
        msg = check_pointer_type(element.pointee)
        if msg:
            return msg
    else:
        return ELEMENT_MESSAGE
    # Two 4-bit floats share a byte: some dimension must be even.
    is_f4 = isinstance(element, ElementType) and element.bitwidth == 4 and element.is_float
    if is_f4 and (not shape or all(d is not None and d % 2 for d in shape)):
        return "F4E2M1FN tiles must have an even number of elements"
    return check_tile_shape(shape)


def check_pointer_type(pointee: Type) -> str | None:
    if isinstance(pointee, ElementType) and pointee.name in _NUMBER_OK:
        return None
    return POINTEE_MESSAGE


def _dyn(values) -> str:
    return ", ".join("?" if v is None else str(v) for v in values)


def check_tensor_view_type(element: Type, shape, strides) -> str | None:
    if not isinstance(element, ElementType) or element.name not in _NUMBER_OK:
        return VIEW_ELEMENT_MESSAGE
    if len(shape) != len(strides):
        return (f"expected shape and stride to be of same rank but got shape of rank "
                f"{len(shape)} and stride of rank {len(strides)}")
    if any(d is not None and d <= 0 for d in shape):
        return ("dimensions must have strictly positive constant sizes but got "
                f"[{_dyn(shape)}]")
    if any(s is not None and s <= 0 for s in strides):
        return ("dimensions must have strictly positive constant strides but got "
                f"[{_dyn(strides)}]")
    return None


_FLOAT_ONLY_PADDING = (PaddingValue.neg_zero, PaddingValue.nan, PaddingValue.pos_inf,
                       PaddingValue.neg_inf)


def _grid_common(tile_shape, view: TensorViewType) -> str | None:
    if not tile_shape:
        return "0-dimension tile shape is not supported"
    if len(tile_shape) != len(view.shape):
        return ("expected tensor_view rank and tile rank to match, got tensor_view of rank "
                f"{len(view.shape)} and tiles of rank {len(tile_shape)}")
    return None


def _tile_dims(tile_shape) -> str | None:
    if any(d <= 0 for d in tile_shape):
        return ("tile shape dimensions must have positive length but got "
                f"[{_csv(tile_shape)}]")
    if any(d & (d - 1) for d in tile_shape):
        return ("tile shape dimensions must have power of two length but got "
                f"[{_csv(tile_shape)}]")
    return None


def _padding(padding, view: TensorViewType) -> str | None:
    if padding in _FLOAT_ONLY_PADDING and not view.element.is_float:
        return (f"padding_value {padding.name} can only be used with floating point "
                f"element types, got '{view.element}'")
    return None


def check_partition_view_type(tile_shape, view: TensorViewType, dim_map=None,
                              padding=None) -> str | None:
    """Rules shared by partition and strided views (``dim_map`` None = identity)."""
    msg = _grid_common(tile_shape, view)
    if msg:
        return msg
    dims = tuple(range(len(tile_shape))) if dim_map is None else tuple(dim_map)
    if len(dims) != len(tile_shape):
        return (f"expected dim_map to map exactly all {len(tile_shape)} dimensions of the "
                f"tile, got {len(dims)} mappings")
    msg = _tile_dims(tile_shape)
    if msg:
        return msg
    used: dict[int, int] = {}
    for tile_dim, target in enumerate(dims):
        if target < 0:
            return f"target dimension must not be negative, got {target}"
        if target >= len(view.shape):
            return ("target dimension is outside of tensor view dimensions, expected "
                    f"strictly less than {len(view.shape)}, got {target}")
        if target in used:
            return (f"target dimension {target} mapped at least twice (for tile dimensions "
                    f"{used[target]} and {tile_dim})")
        used[target] = tile_dim
    return check_tile_type(tuple(tile_shape), view.element) or _padding(padding, view)


def check_strided_view_type(tile_shape, strides, view: TensorViewType, dim_map=None,
                            padding=None) -> str | None:
    msg = check_partition_view_type(tile_shape, view, dim_map, padding)
    if msg:
        return msg
    if len(tile_shape) != len(strides):
        return f"expected {len(tile_shape)} traversal strides, got {len(strides)}"
    if any(s <= 0 for s in strides):
        return f"traversal strides must be strictly positive but got [{_csv(strides)}]"
    return None


def check_gather_scatter_view_type(tile_shape, view: TensorViewType, sparse_dim: int,
                                   padding=None) -> str | None:
    msg = _grid_common(tile_shape, view) or _tile_dims(tile_shape)
    if msg:
        return msg
    if sparse_dim >= len(view.shape):
        return ("gather dimension is outside of tensor view dimensions, expected strictly "
                f"less than {len(view.shape)}, got {sparse_dim}")
    return check_tile_type(tuple(tile_shape), view.element) or _padding(padding, view)


def check_type(t: Type) -> str | None:
    """Any type's rules, recursively (views check their tensor view too)."""
    if isinstance(t, TileType):
        return check_tile_type(t.shape, t.element)
    if isinstance(t, PointerType):
        return check_pointer_type(t.pointee)
    if isinstance(t, TensorViewType):
        return check_tensor_view_type(t.element, t.shape, t.strides)
    if isinstance(t, PartitionViewType):
        return (check_type(t.tensor_view)
                or check_partition_view_type(t.tile_shape, t.tensor_view, t.dim_map,
                                             t.padding))
    if isinstance(t, StridedViewType):
        return (check_type(t.tensor_view)
                or check_strided_view_type(t.tile_shape, t.traversal_strides,
                                           t.tensor_view, t.dim_map, t.padding))
    if isinstance(t, GatherScatterViewType):
        return (check_type(t.tensor_view)
                or check_gather_scatter_view_type(t.tile_shape, t.tensor_view,
                                                  t.sparse_dim, t.padding))
    if isinstance(t, FunctionType):
        for sub in t.inputs + t.results:
            msg = check_type(sub)
            if msg:
                return msg
    return None
