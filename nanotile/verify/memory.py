"""Memory ops: pointer loads/stores, view loads/stores, atomics, alloca, globals,
tokens, print and assert. Memory ordering and scope rules live here."""

from __future__ import annotations

from nanotile.ir.core import Operation
from nanotile.ir.enums import AtomicRMWMode, MemoryOrderingSemantics, MemoryScope
from nanotile.ir.types import (
    ElementType,
    GatherScatterViewType,
    PartitionViewType,
    PointerType,
    StridedViewType,
    TileType,
    Type,
)

from .arith import value_width
from .engine import attr, fail, group, one, q, result_named, rule, shape_text
from .hints import check_op_hints

M = MemoryOrderingSemantics


def _el(t: Type) -> Type | None:
    return t.element if isinstance(t, TileType) else None


# per access: the orderings it takes, cuda-tile's message for another, for a weak access
# with a scope, and the access's name in "memory scope is required for ..."
_LOAD = ((M.weak, M.relaxed, M.acquire), "expect one of: weak, relaxed, or acquire, but got: ",
         "weak load must not have memory scope", "load")
_STORE = ((M.weak, M.relaxed, M.release), "expect one of: weak, relaxed, or release, but got: ",
          "weak store must not have memory scope", "store")


def _memory_model(op: Operation, model) -> None:
    allowed, not_allowed, weak_scoped, what = model
    sem = attr(op, "memory_ordering_semantics")
    scope = op.attributes.get("memory_scope")
    if sem not in allowed:
        raise fail(not_allowed + str(getattr(sem, "name", sem)))
    if sem is M.weak:
        if scope is not None:
            raise fail(weak_scoped)
    elif scope is None:
        raise fail(f"memory scope is required for {sem.name} {what}")


def _load_model(op: Operation) -> None:
    _memory_model(op, _LOAD)


def _store_model(op: Operation) -> None:
    _memory_model(op, _STORE)


def _pointer_of(ptrs: Type, values: Type) -> bool:
    """``ptrs`` is a tile of pointers to the elements of ``values``, same shape."""
    if not (isinstance(ptrs, TileType) and isinstance(values, TileType)):
        return False
    p = ptrs.element
    return (isinstance(p, PointerType) and ptrs.shape == values.shape
            and p.pointee == values.element)


def _same_shape(a: Type, b: Type) -> bool:
    return isinstance(a, TileType) and isinstance(b, TileType) and a.shape == b.shape


@rule("load_ptr_tko")
def _load_ptr(op: Operation) -> None:
    source, result = one(op, "source"), result_named(op, "result")
    if source is not None and result is not None and not _pointer_of(source.type,
                                                                     result.type):
        raise fail("failed to verify that `source` type is expected a pointer type of "
                   "`result` type")
    mask = one(op, "mask")
    if mask is not None and not _same_shape(source.type, mask.type):
        raise fail("failed to verify that shape of 'mask' must match the shape of "
                   "'source'")
    pad = one(op, "paddingValue")
    if pad is not None and not (_same_shape(result.type, pad.type)
                                and _el(result.type) == _el(pad.type)):
        raise fail("failed to verify that type of 'paddingValue' must match the type of "
                   "'result'")
    check_op_hints(op)
    _load_model(op)


@rule("store_ptr_tko")
def _store_ptr(op: Operation) -> None:
    dest, value = one(op, "destination"), one(op, "value")
    if dest is not None and value is not None and not _pointer_of(dest.type, value.type):
        raise fail("failed to verify that `destination` type is expected a pointer type "
                   "of `value` type")
    mask = one(op, "mask")
    if mask is not None and not _same_shape(dest.type, mask.type):
        raise fail("failed to verify that shape of 'destination' must match the shape of "
                   "'mask'")
    check_op_hints(op)
    _store_model(op)


def view_tile_type(view: Type) -> TileType | None:
    if isinstance(view, PartitionViewType | StridedViewType | GatherScatterViewType):
        return TileType(tuple(view.tile_shape), view.tensor_view.element)
    return None


def view_index_rank(view: Type) -> int:
    return len(getattr(view, "tile_shape", ()))


def _check_view_indices(view: Type, indices: list[Type]) -> None:
    if not indices:
        return
    if isinstance(view, GatherScatterViewType):
        _check_gather_indices(view, indices)
        return
    for t in indices:
        if not isinstance(t, TileType):
            raise fail(f"expected index type to be a tile type, got {q(t)}")
        if t.rank != 0:
            raise fail(f"expected index type to be a scalar tile, got {q(t)}")
    for i, t in enumerate(indices):
        if t != indices[0]:
            raise fail(f"expected index type {i} to be the same as other index types "
                       f"({q(indices[0])}), got {q(t)}")


def _check_gather_indices(view: GatherScatterViewType, indices: list[Type]) -> None:
    sd = view.sparse_dim
    if sd >= len(indices):
        raise fail(f"gather/scatter dimension {sd} is out of range for index count "
                   f"{len(indices)}")
    g = indices[sd]
    if not isinstance(g, TileType):
        raise fail(f"expected index at sparse_dim position {sd} to be a tile type for "
                   "GatherScatterView")
    if g.rank != 1:
        raise fail(f"expected index at sparse_dim position {sd} to be a 1D tensor for "
                   f"GatherScatterView, got rank {g.rank}")
    if g.shape[0] != view.tile_shape[sd]:
        raise fail(f"expected gather/scatter index size ({g.shape[0]}) to match tile shape "
                   f"at gather/scatter dimension {sd} ({view.tile_shape[sd]})")
    base = None
    for i, t in enumerate(indices):
        if i == sd:
            continue
        if not (isinstance(t, TileType) and t.rank == 0):
            raise fail(f"expected index {i} to be a scalar tile for GatherScatterView")
        if base is None:
            base = t
        elif t != base:
            raise fail(f"expected scalar index {i} to have the same type as other scalar "
                       f"indices ({q(base)}), got {q(t)}")


def _view_load_store(op: Operation, tile: Type) -> None:
    view = one(op, "view").type
    indices = [v.type for v in group(op, "index")]
    rank = view_index_rank(view)
    if len(indices) != rank:
        raise fail(f"expected {rank} index operands (based on view type), got "
                   f"{len(indices)}")
    expected = view_tile_type(view)
    if tile != expected:
        raise fail(f"expected tile type to be {q(expected)} (based on view type), got "
                   f"{q(tile)}")
    _check_view_indices(view, indices)
    check_op_hints(op)


@rule("load_view_tko")
def _load_view(op: Operation) -> None:
    _view_load_store(op, op.results[0].type)
    _load_model(op)


@rule("store_view_tko")
def _store_view(op: Operation) -> None:
    _view_load_store(op, one(op, "tile").type)
    _store_model(op)


_INT_MODES = (AtomicRMWMode.and_, AtomicRMWMode.or_, AtomicRMWMode.xor, AtomicRMWMode.add,
              AtomicRMWMode.max, AtomicRMWMode.min, AtomicRMWMode.umax, AtomicRMWMode.umin)


def _rmw_mode(mode: AtomicRMWMode, el: Type | None) -> None:
    name = mode.name.rstrip("_")
    is_el = isinstance(el, ElementType)
    if mode in _INT_MODES:
        if not (is_el and el.is_int and el.bitwidth in (32, 64)):
            raise fail(f"'{name}' works only with integers i32 and i64")
    elif mode is AtomicRMWMode.addf:
        if not (is_el and el.name in ("f16", "bf16", "f32", "f64")):
            raise fail(f"'{name}' works only with floats f16, bf16, f32, and f64")
    elif mode is AtomicRMWMode.xchg and not (is_el and value_width(el) in (32, 64)):
        raise fail(f"'{name}' works only with integers or float of 32 or 64 bitwidth")


def _atomic_ordering(op: Operation) -> None:
    if attr(op, "memory_ordering_semantics") not in (M.relaxed, M.acquire, M.release,
                                                      M.acq_rel):
        raise fail("memory ordering semantics must be one of: relaxed, acquire, release, "
                   "acq_rel")


def _pointee(ptrs: Type) -> Type | None:
    el = _el(ptrs)
    return el.pointee if isinstance(el, PointerType) else None


@rule("atomic_rmw_tko")
def _atomic_rmw(op: Operation) -> None:
    pointee, arg = _pointee(one(op, "pointers").type), one(op, "arg").type
    if pointee != _el(arg):
        raise fail(f"expected pointee type ({q(pointee)}) to match element type of 'arg' "
                   f"({q(_el(arg))})")
    mask = one(op, "mask")
    if mask is not None and not _same_shape(mask.type, arg):
        raise fail("failed to verify that all of {pointers, arg, mask} have same shape")
    _rmw_mode(attr(op, "mode"), _el(arg))
    _atomic_ordering(op)


@rule("atomic_cas_tko")
def _atomic_cas(op: Operation) -> None:
    pointee, val = _pointee(one(op, "pointers").type), one(op, "val").type
    el = _el(val)
    if pointee != el:
        raise fail(f"expected pointee type ({q(pointee)}) to match element type of 'val' "
                   f"({q(el)})")
    if not (isinstance(el, ElementType) and value_width(el) in (32, 64)):
        raise fail("expect only float or integer types with 32 or 64 bit")
    mask = one(op, "mask")
    if mask is not None and not _same_shape(mask.type, val):
        raise fail("failed to verify that all of {pointers, val, cmp and mask} have same "
                   "shape")
    _atomic_ordering(op)


@rule("atomic_red_view_tko")
def _atomic_red_view(op: Operation) -> None:
    view = one(op, "view").type
    if isinstance(view, GatherScatterViewType):
        raise fail("gather_scatter_view is not supported; use partition_view instead")
    if getattr(view, "padding", None) is not None:
        raise fail("views with padding_value are not supported for atomic reductions")
    vt = view_tile_type(view)
    value = one(op, "value").type
    if vt is None or not isinstance(value, TileType):
        return
    if vt.element != value.element:
        raise fail(f"view element type ({q(vt.element)}) must match value element type "
                   f"({q(value.element)})")
    if vt.shape != value.shape:
        raise fail(f"view tile shape {shape_text(vt.shape)} must match value shape "
                   f"{shape_text(value.shape)} for element-wise atomic operations")
    mode = attr(op, "mode")
    if mode is AtomicRMWMode.xchg:
        raise fail("atomic_red_view_tko op cannot use xchg operation")
    _rmw_mode(mode, value.element)
    if attr(op, "memory_ordering_semantics") is not M.relaxed:
        raise fail("only 'relaxed' memory ordering is supported for view-based atomic "
                   "reductions")
    if attr(op, "memory_scope") is MemoryScope.sys:
        raise fail("memory scope 'sys' is not supported for view-based atomic reductions; "
                   "use 'tl_blk' or 'device' for TMA compatibility")
    indices = group(op, "index")
    if len(indices) != vt.rank:
        raise fail(f"expected {vt.rank} index operand(s) for view with tile rank "
                   f"{vt.rank}, got {len(indices)}")
    for i, v in enumerate(indices):
        t = v.type
        if isinstance(t, TileType) and t.rank != 0:
            raise fail(f"index operand {i} must be a scalar tile (rank 0), got shape "
                       f"{shape_text(t.shape)}")


def natural_size(el: Type) -> int:
    if isinstance(el, ElementType):
        return 1 if el.name == "i1" else el.bitwidth // 8
    return 0


@rule("alloca")
def _alloca(op: Operation) -> None:
    align = op.attributes.get("alignment", 0)
    if align <= 0 or align & (align - 1):
        raise fail("'alignment' must be power of two")
    el = _el(op.results[0].type)
    pointee = el.pointee if isinstance(el, PointerType) else None
    size = natural_size(pointee)
    if align < size:
        raise fail(f"'alignment' ({align}) must be at least the natural size ({size} "
                   f"bytes) for element type {q(pointee)}")


@rule("join_tokens")
def _join(op: Operation) -> None:
    if len(op.operands) < 2:
        raise fail("expect two or more tokens")


_FORMAT_END = set("diuoxXeEfFgGaAcsSpn%")


@rule("print_tko")
def _print(op: Operation) -> None:
    text = op.attributes.get("str", "")
    expected, pos = 0, 0
    while pos < len(text):
        if text[pos] != "%":
            pos += 1
            continue
        end = next((i for i in range(pos + 1, len(text)) if text[i] in _FORMAT_END), None)
        if end is None:
            raise fail("found unterminated format expression")
        if text[pos:end + 1] == "%%":
            pos += 2
            continue
        expected += 1
        pos += 1
    args = group(op, "args")
    if expected != len(args):
        raise fail(f"incorrect number of operands: expected {expected}, found {len(args)}")
