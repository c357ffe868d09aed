"""Pointer tiles and masks of view tiles, for lower-views.

Along tile dimension j (tensor dimension dim_map[j]) an element's coordinate is start_j +
iota (start_j = index_j * step_j; step: tile size, traversal stride, or 1 beside a gather
view's sparse dimension, whose index is a tile of coordinates); mask = every coordinate <
its extent (unsigned); address = base + sum(coordinate * stride) in i64.

A tile of WIDE_TILE elements or more computes the address from 64-bit coordinates,
sext(start) + iota (an i64 iota), rather than from the 32-bit coordinate widened. The two
agree wherever the mask holds (an in-bounds coordinate lies in [0, 2^31), so start + iota
did not wrap), and in 64 bits every register's address is another's plus a constant times
the stride, a ring identity ptx-strength-reduce uses to write each in one instruction. A
smaller tile has few registers a thread, and the 32-bit form is shorter there (it widens
nothing but the coordinate).
"""

from __future__ import annotations

from math import prod

from ..diagnostics import CompileError, Diagnostic
from ..ir import types as T
from ..ir.builder import OpBuilder
from ..ir.core import Operation, Value
from ..ir.enums import ComparisonPredicate, Signedness
from ..ir.rewrite import splat_number

I32, I64, I1 = T.I32, T.I64, T.I1
WIDE_TILE = 1024  # elements: 8 a thread of a 4-warp CTA


def view_chain(v: Value) -> tuple[Operation, Operation]:
    """(view-making op, make_tensor_view op) behind a view value."""
    part = v.owner
    if isinstance(part, Operation) and part.name == "make_tensor_view":
        return part, part
    if not isinstance(part, Operation) or part.name not in (
            "make_partition_view", "make_strided_view", "make_gather_scatter_view"):
        raise refuse(part if isinstance(part, Operation) else None,
                      "views not made by a view op in the same kernel")
    return part, part.operands[0].owner  # type: ignore[return-value]


def refuse(op: Operation | None, what: str) -> CompileError:
    src = op.source if op is not None else None
    return CompileError(Diagnostic("error", f"lower-views: {what} are not lowered yet",
                                   *((src.filename, src.line, src.column) if src else ())))


def tensor_parts(tensor: Operation) -> tuple[Value, list, list]:
    """Base pointer, shape and strides (ints or i32 scalar values) of a make_tensor_view."""
    base, sizes, steps = (iter(g) for g in tensor.operand_groups()) \
        if tensor.operand_segments else (iter(tensor.operands), iter(()), iter(()))
    vt = tensor.results[0].type
    return (next(base), [next(sizes) if d is None else d for d in vt.shape],
            [next(steps) if s is None else s for s in vt.strides])


def _coordinates(b: OpBuilder, part: Operation, index: list[Value]):
    """Per tile dimension: (tensor dimension, coordinate tile, i64 one for the address or
    None: the coordinate's, widened)."""
    vt = part.results[0].type
    tile = tuple(getattr(vt, "tile_shape", None) or vt.shape)
    if None in tile:
        raise refuse(part, "whole-tensor loads of dynamic shape")
    rank, sparse = len(tile), getattr(vt, "sparse_dim", None)
    dims = list(getattr(vt, "dim_map", None) or range(rank))
    steps = getattr(vt, "traversal_strides", None) or tile
    out = []
    for j in range(rank):
        lifted = tuple(tile[j] if d == j else 1 for d in range(rank))
        if j == sparse:  # a tile of element indices, one per row
            out.append((dims[j], b.broadcast(b.reshape(index[j], lifted), tile), None))
            continue
        coord = _iota(b, tile[j], I32, lifted, tile)
        wide = _iota(b, tile[j], I64, lifted, tile) if prod(tile) >= WIDE_TILE else None
        start = _start(b, index[j], 1 if sparse is not None else steps[j]) if index else 0
        if start != 0:
            coord = b.op("addi", [b.splat(b.scalar(start), tile), coord], coord.type)
        if start != 0 and wide is not None:
            start = b.scalar(start, I64) if isinstance(start, int) else _widen(b, start, I64)
            wide = b.op("addi", [b.splat(start, tile), wide], wide.type)
        out.append((dims[j], coord, wide))
    return tile, out


def _iota(b: OpBuilder, size: int, et: T.ElementType, lifted: tuple[int, ...],
          tile: tuple[int, ...]) -> Value:
    """0 .. size-1 of type ``et`` along one dimension of ``tile`` (``lifted``: that
    dimension's size, 1 elsewhere), broadcast over the others."""
    return b.broadcast(b.reshape(b.op("iota", [], T.TileType((size,), et)), lifted), tile)


def _start(b: OpBuilder, index: Value, step: int) -> int | Value:
    """index * step (i32 arithmetic), an int where the index is a constant."""
    known = splat_number(index)
    if isinstance(known, int):
        return (known * step + (1 << 31)) % (1 << 32) - (1 << 31)
    at = index if index.type.element == I32 else \
        b.op("trunci", [index], T.TileType((), I32))  # i64 indices: i32 math
    return b.op("muli", [at, b.scalar(step)], T.TileType((), I32))


def pointers_and_mask(b: OpBuilder, view: Value, index: list[Value]) -> tuple[Value, Value]:
    """The pointer tile and in-bounds mask of the view tile at ``index``."""
    part, tensor = view_chain(view)
    base, shape, strides = tensor_parts(tensor)
    tile, coords = _coordinates(b, part, index)
    offset, mask = None, None
    for d, coord, wide in coords:
        bound = b.scalar(shape[d])
        if bound.type.element == I64 and coord.type.element == I32:
            coord = b.op("exti", [coord], T.TileType(tile, I64), signedness=Signedness.signed)
        bound = _widen(b, bound, coord.type.element)
        inside = b.op("cmpi", [coord, b.splat(bound, tile)], T.TileType(tile, I1),
                      comparison_predicate=ComparisonPredicate.less_than,
                      signedness=Signedness.unsigned)
        mask = inside if mask is None else b.op("andi", [mask, inside], T.TileType(tile, I1))
        wide = _widen(b, coord, I64) if wide is None else wide
        if strides[d] != 1:
            stride = _widen(b, b.scalar(strides[d]), I64)
            wide = b.op("muli", [wide, b.splat(stride, tile)], T.TileType(tile, I64))
        offset = wide if offset is None else b.op("addi", [offset, wide], T.TileType(tile, I64))
    return b.op("offset", [b.splat(base, tile), offset], T.TileType(tile, base.type.element)), mask


def _widen(b: OpBuilder, v: Value, et: T.ElementType) -> Value:
    """``v`` (an i32 or i64 tile) as ``et``, sign-extended when it is narrower."""
    return v if v.type.element == et else b.op("exti", [v], T.TileType(v.type.shape, et),
                                                signedness=Signedness.signed)
