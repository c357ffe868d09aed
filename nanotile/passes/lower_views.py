"""lower-views: views become pointer tiles, masks and padding.  tile -> tile-ptr.

A load/store/atomic reduction through a view becomes the same op on a tile of pointers,
with a mask of the elements inside the tensor (view_addresses.pointers_and_mask: each
coordinate the tile index times the tile size plus an iota, compared unsigned with its
extent; the address the base plus the coordinates times the strides, in i64);
out-of-bounds loads yield the padding value (zero if none). Index-space and shape queries
become arithmetic; view ops and assumes (already recorded as facts by assume-to-facts) go.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import types as T
from ..ir.builder import OpBuilder
from ..ir.core import Module, Operation, Value, make_op
from ..ir.enums import AtomicRMWMode, Signedness
from ..ir.rewrite import all_ops, erase, insert_before, is_plain_number, replace_uses
from .base import Pass, PassContext
from .view_addresses import pointers_and_mask, refuse, tensor_parts, view_chain

_PAD = {T.PaddingValue.zero: 0.0, T.PaddingValue.neg_zero: -0.0, T.PaddingValue.nan: float(
    "nan"), T.PaddingValue.pos_inf: float("inf"), T.PaddingValue.neg_inf: float("-inf")}


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
    part, tensor = view_chain(op.operands[0])
    _, shape, _ = tensor_parts(tensor)
    pt = part.results[0].type
    if op.name == "get_tensor_shape" or part is tensor:
        tile, dims = (1,) * len(shape), list(range(len(shape)))
    elif getattr(pt, "sparse_dim", None) is not None:
        raise refuse(op, "index spaces of gather/scatter views")
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
