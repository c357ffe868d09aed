"""lower-views: views become pointer tiles, masks and padding.  tile -> tile-ptr.

A load/store/atomic reduction through a view becomes the same op on a tile of pointers:
along tile dimension j (tensor dimension dim_map[j]) the coordinate is index_j * step_j +
iota (step: tile size, traversal stride, or 1 beside a gather view's sparse dimension,
whose index is a tile of coordinates); address = base + sum(coord * stride) in i64; mask
= every coordinate < its extent (unsigned); out-of-bounds loads yield the padding value
(zero if none). Index-space and shape queries become arithmetic; view ops and assumes
(already recorded as facts by assume-to-facts) go.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..diagnostics import CompileError, Diagnostic
from ..ir import types as T
from ..ir.builder import OpBuilder
from ..ir.core import Module, Operation, Value, make_op
from ..ir.enums import AtomicRMWMode, ComparisonPredicate, Signedness
from ..ir.rewrite import all_ops, erase, insert_before, is_plain_number, replace_uses
from .base import Pass, PassContext

I32, I64, I1 = T.I32, T.I64, T.I1
_PAD = {T.PaddingValue.zero: 0.0, T.PaddingValue.neg_zero: -0.0, T.PaddingValue.nan: float(
    "nan"), T.PaddingValue.pos_inf: float("inf"), T.PaddingValue.neg_inf: float("-inf")}


def _view_chain(v: Value) -> tuple[Operation, Operation]:
    """(view-making op, make_tensor_view op) behind a view value."""
    part = v.owner
    if isinstance(part, Operation) and part.name == "make_tensor_view":
        return part, part
    if not isinstance(part, Operation) or part.name not in (
            "make_partition_view", "make_strided_view", "make_gather_scatter_view"):
        raise _refuse(part if isinstance(part, Operation) else None,
                      "views not made by a view op in the same kernel")
    return part, part.operands[0].owner  # type: ignore[return-value]


def _refuse(op: Operation | None, what: str) -> CompileError:
    src = op.source if op is not None else None
    return CompileError(Diagnostic("error", f"lower-views: {what} are not lowered yet",
                                   *((src.filename, src.line, src.column) if src else ())))


def _tensor_parts(tensor: Operation) -> tuple[Value, list, list]:
    """Base pointer, shape and strides (ints or i32 scalar values) of a make_tensor_view."""
    base, sizes, steps = (iter(g) for g in tensor.operand_groups()) \
        if tensor.operand_segments else (iter(tensor.operands), iter(()), iter(()))
    vt = tensor.results[0].type
    return (next(base), [next(sizes) if d is None else d for d in vt.shape],
            [next(steps) if s is None else s for s in vt.strides])


def _coordinates(b: OpBuilder, part: Operation, index: list[Value]):
    """Per tile dimension: (tensor dimension, i32/i64 coordinate tile)."""
    vt = part.results[0].type
    tile = tuple(getattr(vt, "tile_shape", None) or vt.shape)
    if None in tile:
        raise _refuse(part, "whole-tensor loads of dynamic shape")
    rank, sparse = len(tile), getattr(vt, "sparse_dim", None)
    dims = list(getattr(vt, "dim_map", None) or range(rank))
    steps = getattr(vt, "traversal_strides", None) or tile
    out = []
    for j in range(rank):
        lifted = tuple(tile[j] if d == j else 1 for d in range(rank))
        if j == sparse:  # a tile of element indices, one per row
            out.append((dims[j], b.broadcast(b.reshape(index[j], lifted), tile)))
            continue
        coord = b.broadcast(b.reshape(b.op("iota", [], T.TileType((tile[j],), I32)), lifted),
                            tile)
        if index:
            step = 1 if sparse is not None else steps[j]
            at = index[j] if index[j].type.element == I32 else \
                b.op("trunci", [index[j]], T.TileType((), I32))  # i64 indices: i32 math
            start = b.op("muli", [at, b.scalar(step)], T.TileType((), I32))
            coord = b.op("addi", [b.splat(start, tile), coord], T.TileType(tile, I32))
        out.append((dims[j], coord))
    return tile, out


def pointers_and_mask(b: OpBuilder, view: Value, index: list[Value]) -> tuple[Value, Value]:
    """The pointer tile and in-bounds mask of the view tile at ``index``."""
    part, tensor = _view_chain(view)
    base, shape, strides = _tensor_parts(tensor)
    tile, coords = _coordinates(b, part, index)
    offset, mask = None, None
    for d, coord in coords:
        bound = b.scalar(shape[d])
        if bound.type.element == I64 and coord.type.element == I32:
            coord = b.op("exti", [coord], T.TileType(tile, I64), signedness=Signedness.signed)
        et = coord.type.element
        bound = _widen(b, bound, et)
        inside = b.op("cmpi", [coord, b.splat(bound, tile)], T.TileType(tile, I1),
                      comparison_predicate=ComparisonPredicate.less_than,
                      signedness=Signedness.unsigned)
        mask = inside if mask is None else b.op("andi", [mask, inside], T.TileType(tile, I1))
        wide = coord if et == I64 else b.op("exti", [coord], T.TileType(tile, I64),
                                            signedness=Signedness.signed)
        if strides[d] != 1:
            stride = _widen(b, b.scalar(strides[d]), I64)
            wide = b.op("muli", [wide, b.splat(stride, tile)], T.TileType(tile, I64))
        offset = wide if offset is None else b.op("addi", [offset, wide], T.TileType(tile, I64))
    return b.op("offset", [b.splat(base, tile), offset], T.TileType(tile, base.type.element)), mask


def _widen(b: OpBuilder, v: Value, et: T.ElementType) -> Value:
    """``v`` (a rank-0 i32 or i64) as ``et``, sign-extended when it is narrower."""
    return v if v.type.element == et else b.op("exti", [v], T.TileType((), et), signedness=Signedness.signed)


def _memory_attrs(op: Operation) -> dict:
    keep = ("memory_ordering_semantics", "memory_scope")
    return {k: v for k, v in op.attributes.items() if k in keep}


def _lower_access(op: Operation) -> dict[Value, Value]:
    """Replace a view access by its pointer form; returns old result -> new result."""
    groups, b = op.operand_groups(), OpBuilder(op)
    token, kind = groups[-1], op.name
    if kind == "load_view_tko":
        view, index, rt = groups[0][0], groups[1], op.results[0].type
        pad = [b.const(_PAD[view.type.padding] if view.type.padding and rt.element.is_float
                       else 0, rt)] if is_plain_number(rt.element) else []
        operands, results, attrs = pad, op.result_types, _memory_attrs(op)
        kind = "load_ptr_tko"
    elif kind == "store_view_tko":
        value, view, index = groups[0][0], groups[1][0], groups[2]
        operands, results, attrs = [value], op.result_types, _memory_attrs(op)
        kind = "store_ptr_tko"
    else:  # atomic_red_view_tko: an rmw whose result is unused
        view, index, value = groups[0][0], groups[1], groups[2][0]
        operands, results = [value], [value.type, op.results[0].type]
        attrs = {**_memory_attrs(op), "mode": op.attributes.get("mode", AtomicRMWMode.add)}
        kind = "atomic_rmw_tko"
    ptrs, mask = pointers_and_mask(b, view, index)
    order = [ptrs, mask, *operands] if kind == "load_ptr_tko" else [ptrs, *operands, mask]
    new = insert_before(op, make_op(kind, [*order, *token], results, attrs,
                                    operand_segments=[1, 1, len(order) - 2, len(token)]))
    return dict(zip(op.results, new.results[-len(op.results):]))


def _lower_shape_query(op: Operation) -> dict[Value, Value]:
    b = OpBuilder(op)
    part, tensor = _view_chain(op.operands[0])
    _, shape, _ = _tensor_parts(tensor)
    pt = part.results[0].type
    if op.name == "get_tensor_shape" or part is tensor:
        tile, dims = (1,) * len(shape), list(range(len(shape)))
    elif getattr(pt, "sparse_dim", None) is not None:
        raise _refuse(op, "index spaces of gather/scatter views")
    else:
        tile = tuple(getattr(pt, "traversal_strides", None) or pt.tile_shape)
        dims = list(pt.dim_map or range(len(tile)))
    out = {}
    for r, d, t in zip(op.results, dims, tile):
        s = b.scalar(shape[d], r.type.element)
        if s.type.element != r.type.element:  # an i64 extent, an i32 index space
            s = b.op("trunci", [s], r.type)
        if t != 1:
            s = b.op("addi", [s, b.scalar(t - 1)], r.type)
            s = b.op("divi", [s, b.scalar(t)], r.type, signedness=Signedness.unsigned)
        out[r] = s
    return out


@dataclass(frozen=True)
class LowerViews(Pass):
    """Lower view loads/stores to pointer tiles with masks and padding (tile-ptr)."""

    name = "lower-views"
    input = "tile"
    output = "tile-ptr"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        mapping: dict[Value, Value] = {}
        doomed: list[Operation] = []
        for op in list(all_ops(module)):
            if op.name in ("load_view_tko", "store_view_tko", "atomic_red_view_tko"):
                mapping.update(_lower_access(op))
            elif op.name in ("get_index_space_shape", "get_tensor_shape"):
                mapping.update(_lower_shape_query(op))
            elif op.name == "assume":
                mapping[op.results[0]] = op.operands[0]
            else:
                continue
            doomed.append(op)
        replace_uses(module, mapping)
        for op in doomed:
            erase(op)
        views = [op for op in all_ops(module) if op.name.startswith("make_") and
                 op.name.endswith("_view")]
        for op in reversed(views):
            erase(op)
        return bool(doomed or views)
