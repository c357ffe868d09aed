"""View construction and queries: make_tensor_view, make_partition_view,
make_strided_view, make_gather_scatter_view, get_tensor_shape, get_index_space_shape."""

from __future__ import annotations

from nanotile.ir.core import Operation
from nanotile.ir.types import PointerType, TensorViewType, TileType

from .engine import fail, group, q, rule
from .memory import view_index_rank


@rule("make_tensor_view")
def _make_tensor_view(op: Operation) -> None:
    res = op.results[0].type
    base = op.operands[0].type
    if not isinstance(res, TensorViewType) or not isinstance(base, TileType):
        return
    pointee = base.element.pointee if isinstance(base.element, PointerType) else None
    if res.element != pointee:
        raise fail(f"expected pointer to {q(res.element)} to build tensor_view of this "
                   f"type, got {q(pointee)}")
    shape, strides = group(op, "dynamicShape"), group(op, "dynamicStrides")
    n_shape = sum(d is None for d in res.shape)
    n_strides = sum(s is None for s in res.strides)
    if op.operand_segments is None and len(op.operands) - 1 == n_shape + n_strides:
        shape, strides = op.operands[1:1 + n_shape], op.operands[1 + n_shape:]
    if n_shape != len(shape):
        raise fail(f"expected {n_shape} dynamic shape operands, got {len(shape)}")
    if n_strides != len(strides):
        raise fail(f"expected {n_strides} dynamic stride operands, got {len(strides)}")
    first = (shape or strides or [None])[0]
    for what, vals in (("shape", shape), ("stride", strides)):
        for i, v in enumerate(vals):
            if v.type != first.type:
                raise fail(f"expected dynamic {what} index {i} to be of the same type as "
                           f"the other dynamic values ({q(first.type)}), got {q(v.type)}")


@rule("make_partition_view", "make_strided_view", "make_gather_scatter_view")
def _make_view(op: Operation) -> None:
    given = op.operands[0].type
    wanted = getattr(op.results[0].type, "tensor_view", None)
    if wanted is not None and given != wanted:
        raise fail(f"expected the type of the provided tensor_view value ({q(given)}) to "
                   f"be the same as the view's tensor_view type ({q(wanted)})")


@rule("get_index_space_shape")
def _index_space_shape(op: Operation) -> None:
    rank = view_index_rank(op.operands[0].type)
    if len(op.results) != rank:
        raise fail(f"expected {rank} results due to view index space rank, but got "
                   f"{len(op.results)}")


@rule("get_tensor_shape")
def _tensor_shape(op: Operation) -> None:
    src = op.operands[0].type
    rank = len(src.shape) if isinstance(src, TensorViewType) else 0
    if len(op.results) != rank:
        raise fail(f"expected {rank} results due to tensor rank, but got "
                   f"{len(op.results)}")
