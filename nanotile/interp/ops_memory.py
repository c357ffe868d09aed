"""Semantics of views, loads, stores, globals and alloca (atomics: ops_atomic.py).

View addressing (element coordinates along each tensor dimension ``d``, for tile
dimension ``i`` and view index ``I``):

- partition view: ``d = dim_map[i]``, coordinate ``I[i] * tile[i] + k``; index space
  ``ceildiv(shape[d], tile[i])``.
- strided view: as partition, but tiles start ``traversal_strides[i]`` apart:
  ``I[i] * traversal[i] + k``; index space ``ceildiv(shape[d], traversal[i])``.
- gather/scatter view: along ``sparse_dim`` the index is a 1-D tile of element indices
  (one per row of the tile); along the other dimensions the index is the element
  coordinate where the tile starts (as cuTile's ``load_advanced`` with a slice uses it).
- a tensor view itself has a rank-0 index space: the whole tensor is one tile.

Elements whose coordinates fall outside the tensor are masked: loads return the view's
``padding_value`` (zero when it has none: the spec leaves them unspecified), stores and
atomic reductions skip them. View indices are read as unsigned integers.

Memory operations happen immediately, in program order (see nanotile.interp). Within
one store, lanes writing the same address land in row-major order (the last wins).
"""

from __future__ import annotations

import numpy as np

from ..ir.core import Operation
from ..ir.optable import OPS
from ..ir.types import (
    ElementType,
    GatherScatterViewType,
    PaddingValue,
    PartitionViewType,
    StridedViewType,
    TensorViewType,
    TileType,
)
from .dtypes import (
    from_float,
    signed,
    storage_bytes,
    storage_dtype,
    unsigned,
    wrap,
)
from .errors import InterpError
from .registry import semantics
from .values import TOKEN, SubView, TensorView

# --------------------------------------------------------------------------------------
# Making views


@semantics("make_tensor_view")
def _make_tensor_view(tb, op: Operation, args: list) -> list:
    t: TensorViewType = op.results[0].type
    dynamic = iter(args[1:])
    operands = iter(op.operands[1:])

    def fill(static: tuple) -> tuple[int, ...]:
        out = []
        for d in static:
            if d is None:
                value, operand = next(dynamic), next(operands)
                d = int(signed(value, operand.type.element))
            out.append(d)
        return tuple(out)

    shape = fill(t.shape)
    strides = fill(t.strides)
    return [TensorView(int(args[0]), t.element, shape, strides)]


@semantics("make_partition_view", "make_strided_view", "make_gather_scatter_view")
def _make_subview(tb, op: Operation, args: list) -> list:
    return [SubView(args[0], op.results[0].type)]


def index_space(view: SubView | TensorView) -> tuple[int, ...]:
    if isinstance(view, TensorView):
        return ()
    t, tv = view.type, view.tensor
    if isinstance(t, GatherScatterViewType):
        return tv.shape
    dim_map = t.dim_map or tuple(range(len(t.tile_shape)))
    step = t.traversal_strides if isinstance(t, StridedViewType) else t.tile_shape
    return tuple(-(-tv.shape[d] // s) for d, s in zip(dim_map, step))


def _int_results(op: Operation, values: tuple[int, ...]) -> list:
    return [wrap(np.asarray(v, dtype=object), r.type.element) for r, v in
            zip(op.results, values)]


@semantics("get_index_space_shape")
def _get_index_space_shape(tb, op: Operation, args: list) -> list:
    return _int_results(op, index_space(args[0]))


@semantics("get_tensor_shape")
def _get_tensor_shape(tb, op: Operation, args: list) -> list:
    view = args[0]
    return _int_results(op, (view if isinstance(view, TensorView) else view.tensor).shape)


# --------------------------------------------------------------------------------------
# Addressing a tile of a view


def view_elements(view: SubView | TensorView, indices: list,
                  index_types: list) -> tuple[TensorView, np.ndarray, np.ndarray, list]:
    """(tensor view, element offsets, in-bounds mask, per tile dimension the 1-D mask of
    its in-bounds coordinates); offsets and mask have the tile's shape."""
    if isinstance(view, TensorView):
        tv, tile = view, view.shape
        coords = [np.arange(n, dtype=np.int64) for n in tile]
        dims = list(range(len(tile)))
    else:
        tv, t = view.tensor, view.type
        tile = t.tile_shape
        if isinstance(t, GatherScatterViewType):
            dims = list(range(len(tile)))
            coords = []
            for i, (v, it) in enumerate(zip(indices, index_types)):
                if i == t.sparse_dim:
                    coords.append(signed(np.asarray(v), it).astype(np.int64).reshape(-1))
                else:
                    start = int(unsigned(v, it))
                    coords.append(start + np.arange(tile[i], dtype=np.int64))
        else:
            dims = list(t.dim_map or range(len(tile)))
            step = t.traversal_strides if isinstance(t, StridedViewType) else tile
            coords = [int(unsigned(v, it)) * s + np.arange(n, dtype=np.int64)
                      for v, it, s, n in zip(indices, index_types, step, tile)]
    rank = len(tile)
    offsets = np.zeros(tile, np.int64)
    inb = np.ones(tile, bool)
    per_dim = []
    for i, (d, c) in enumerate(zip(dims, coords)):
        ok = (c >= 0) & (c < tv.shape[d])
        per_dim.append(ok)
        shape = [-1 if j == i else 1 for j in range(rank)]
        offsets = offsets + c.reshape(shape) * tv.strides[d]
        inb = inb & ok.reshape(shape)
    return tv, offsets, inb, per_dim


def _padding(t: PartitionViewType | StridedViewType | GatherScatterViewType | None,
             et: ElementType) -> np.ndarray:
    pad = getattr(t, "padding", None)
    if et.is_int or pad in (None, PaddingValue.zero):
        return np.zeros((), storage_dtype(et))
    value = {PaddingValue.neg_zero: -0.0, PaddingValue.nan: np.nan,
             PaddingValue.pos_inf: np.inf, PaddingValue.neg_inf: -np.inf}[pad]
    return from_float(np.asarray(value, np.float32), et)


def _addresses(tv: TensorView, offsets: np.ndarray) -> np.ndarray:
    size = storage_bytes(tv.element)
    return (np.uint64(tv.base) + (offsets * int(size)).astype(np.uint64)).astype(np.uint64)


def _view_operands(op: Operation, args: list, first: int) -> tuple[object, list, list, int]:
    """(view, index values, index element types, position after the indices)."""
    view = args[first]
    n = len(index_space(view)) if not isinstance(view, TensorView) else 0
    idx = args[first + 1:first + 1 + n]
    types = [v.type.element for v in op.operands[first + 1:first + 1 + n]]
    return view, idx, types, first + 1 + n


def _check_inbounds(tb, op: Operation, per_dim: list) -> None:
    """Debug mode: the ``inbounds`` promise (13.4) says no element is out of bounds
    along the flagged dimensions; breaking it is undefined behaviour."""
    flags = op.attributes.get("inbounds")
    if not tb.machine.debug or not flags:
        return
    for dim, (promised, ok) in enumerate(zip(flags, per_dim)):
        if promised and not ok.all():
            raise InterpError(f"{tb.where}: '{op.name}' promises dimension {dim} in bounds, "
                              "but the tile runs outside the tensor")


@semantics("load_view_tko")
def _load_view(tb, op: Operation, args: list) -> list:
    view, idx, types, _ = _view_operands(op, args, 0)
    tv, offsets, inb, per_dim = view_elements(view, idx, types)
    _check_inbounds(tb, op, per_dim)
    et = tv.element
    mem = tb.machine.memory
    pad = _padding(getattr(view, "type", None), et)
    if et.bitwidth == 4:
        vals = mem.load_nibbles(tv.base, np.where(inb, offsets, 0), et)
        return [np.where(inb, vals, pad), TOKEN]
    addrs = _addresses(tv, offsets)
    if inb.all():
        return [mem.load(addrs, et), TOKEN]
    out = np.broadcast_to(pad, offsets.shape).copy()
    out[inb] = mem.load(addrs[inb], et)
    return [out, TOKEN]


@semantics("store_view_tko")
def _store_view(tb, op: Operation, args: list) -> list:
    value = args[0]
    view, idx, types, _ = _view_operands(op, args, 1)
    tv, offsets, inb, per_dim = view_elements(view, idx, types)
    _check_inbounds(tb, op, per_dim)
    mem = tb.machine.memory
    value = np.broadcast_to(value, offsets.shape)
    if tv.element.bitwidth == 4:
        mem.store_nibbles(tv.base, offsets[inb], value[inb], tv.element)
    else:
        mem.store(_addresses(tv, offsets)[inb], value[inb], tv.element)
    return [TOKEN]


# --------------------------------------------------------------------------------------
# Pointer-tile loads and stores


def _groups(op: Operation, args: list) -> dict[str, object]:
    """Operands by their op-table names (optional groups may be absent)."""
    names = [o.name for o in OPS[op.name].operands]
    if op.operand_segments is not None:
        out, pos = {}, 0
        for name, size in zip(names, op.operand_segments):
            if size:
                out[name] = args[pos]
                if name == "mask" and not _is_i1(op.operands[pos].type):
                    # `load_ptr_tko %p, %pad` written without a mask: the text form alone
                    # does not say which optional operand it is; the type does.
                    out["paddingValue"] = out.pop("mask")
            pos += size
        return out
    # No segments: single operands in order, then optional ones told apart by type.
    out = {}
    rest = list(zip(args, op.operands))
    for od in OPS[op.name].operands:
        if od.kind == "single":
            out[od.name] = rest.pop(0)[0]
    for value, operand in rest:
        t = operand.type
        if not isinstance(t, TileType):
            out["token"] = value
        elif isinstance(t.element, ElementType) and t.element.name == "i1" and "mask" not in out:
            out["mask"] = value
        else:
            out["paddingValue"] = value
    return out


def _is_i1(t) -> bool:
    return isinstance(t, TileType) and getattr(t.element, "name", "") == "i1"


def _pointee(op: Operation, i: int = 0):
    return op.operands[i].type.element.pointee


@semantics("load_ptr_tko")
def _load_ptr(tb, op: Operation, args: list) -> list:
    g = _groups(op, args)
    ptrs = np.asarray(g["source"])
    et = _pointee(op)
    mem = tb.machine.memory
    mask = g.get("mask")
    if mask is None:
        return [mem.load(ptrs, et), TOKEN]
    mask = np.broadcast_to(mask, ptrs.shape)
    pad = g.get("paddingValue", np.zeros((), storage_dtype(et)))
    out = np.broadcast_to(pad, ptrs.shape).astype(storage_dtype(et))
    out[mask] = mem.load(ptrs[mask], et)
    return [out, TOKEN]


@semantics("store_ptr_tko")
def _store_ptr(tb, op: Operation, args: list) -> list:
    g = _groups(op, args)
    ptrs = np.asarray(g["destination"])
    value = np.broadcast_to(g["value"], ptrs.shape)
    mask = g.get("mask")
    et = _pointee(op)
    if mask is None:
        tb.machine.memory.store(ptrs, value, et)
    else:
        mask = np.broadcast_to(mask, ptrs.shape)
        tb.machine.memory.store(ptrs[mask], value[mask], et)
    return [TOKEN]


# --------------------------------------------------------------------------------------
# Globals and alloca


@semantics("get_global")
def _get_global(tb, op: Operation, args: list) -> list:
    name = op.attributes["name"]
    base = tb.machine.globals.get(name)
    if base is None:
        raise InterpError(f"{tb.where}: no global named @{name}")
    return [np.asarray(base, np.uint64)]


@semantics("alloca")
def _alloca(tb, op: Operation, args: list) -> list:
    pointee = op.results[0].type.element.pointee
    n = op.attributes["num_elem"]
    nbytes = int(np.ceil(n * storage_bytes(pointee)))
    base = tb.machine.memory.allocate(nbytes, "alloca", op.attributes.get("alignment", 0) or 1)
    return [np.asarray(base, np.uint64)]


