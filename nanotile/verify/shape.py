"""Shape-changing ops: broadcast, reshape, permute, cat, extract, insert, iota, pack,
unpack, constant."""

from __future__ import annotations

from nanotile.ir.core import Operation
from nanotile.ir.rewrite import splat_value
from nanotile.ir.types import ElementType, TileType

from .arith import bit_width, value_width
from .engine import fail, q, rule, shape_text, warn


def _tile(t) -> TileType | None:
    return t if isinstance(t, TileType) else None


@rule("broadcast")
def _broadcast(op: Operation) -> None:
    src, res = _tile(op.operands[0].type), _tile(op.results[0].type)
    if src is None or res is None:
        return
    for s, r in zip(src.shape, res.shape):
        if s != r and s != 1:
            raise fail("expects the shape of source tile to be compatible with that of "
                       f"the result tile, but got: {shape_text(src.shape)} and "
                       f"{shape_text(res.shape)}")


@rule("reshape")
def _reshape(op: Operation) -> None:
    src, res = _tile(op.operands[0].type), _tile(op.results[0].type)
    if src and res and src.num_elements != res.num_elements:
        raise fail("expected source tile and result tile to have the same number of "
                   "elements")


@rule("permute")
def _permute(op: Operation) -> None:
    src, res = _tile(op.operands[0].type), _tile(op.results[0].type)
    if src is None or res is None:
        return
    rank = src.rank
    perm = tuple(op.attributes.get("permutation", ()))
    if rank < 2:
        raise fail(f"expects at least rank 2, but got: {rank}")
    if len(perm) != rank:
        raise fail(f"expect permutation size ({len(perm)}) to equal the rank of the "
                   f"source ({rank})")
    if len(set(perm)) != len(perm):
        raise fail("expect permutation elements to be unique")
    for i, p in enumerate(perm):
        if p < 0 or p >= rank:
            raise fail(f"permutation element at index {i} ({p}) is out of bound "
                       f"[0, {rank})")
    for i, p in enumerate(perm):
        if res.shape[i] != src.shape[p]:
            raise fail(f"result shape invalid at index {i}, expected: {src.shape[p]}, "
                       f"but got: {res.shape[i]}")


@rule("cat")
def _cat(op: Operation) -> None:
    lhs, rhs = _tile(op.operands[0].type), _tile(op.operands[1].type)
    res = _tile(op.results[0].type)
    if lhs is None or rhs is None or res is None:
        return
    dim, rank = op.attributes.get("dim", 0), lhs.rank
    if dim < 0 or dim >= rank:
        raise fail(f"expect dim to be [0, {rank}), but got: {dim}")
    if lhs.shape[dim] + rhs.shape[dim] != res.shape[dim]:
        raise fail(f"invalid concat at position {dim}, expected: "
                   f"{lhs.shape[dim] + rhs.shape[dim]} but got: {res.shape[dim]}")
    for i in range(rank):
        if i == dim:
            continue
        if lhs.shape[i] != rhs.shape[i]:
            raise fail(f"expect lhs and rhs shapes to match at non-concat position {i}, "
                       f"expected: {lhs.shape[i]} but got: {rhs.shape[i]}")
        if lhs.shape[i] != res.shape[i]:
            raise fail(f"expect lhs and result shapes to match at non-concat position "
                       f"{i}, expected: {lhs.shape[i]} but got: {res.shape[i]}")


def _check_indices(op: Operation, big: TileType, small: TileType, indices,
                   warn_bounds: bool = False) -> None:
    for i in range(big.rank):
        if big.shape[i] % small.shape[i] != 0:
            raise fail(f"source dimension {i} size ({big.shape[i]}) must be evenly "
                       f"divisible by result dimension {i} size ({small.shape[i]})")
    if len(indices) != big.rank:
        raise fail(f"expected {big.rank} indices, but got {len(indices)}")
    for i, v in enumerate(indices):
        t = v.type
        if not isinstance(t, TileType):
            raise fail(f"index {i} must be a Tile type")
        if t.rank != 0:
            raise fail(f"index {i} must be a scalar tile, got rank {t.rank}")
        if str(t.element) != "i32":
            raise fail(f"index {i} must have i32 element type")
        if warn_bounds:
            _warn_constant_index(op, i, v, big.shape[i] // small.shape[i] - 1)


def _warn_constant_index(op: Operation, i: int, index, max_valid: int) -> None:
    """extract's warnings (not errors: the op still compiles) for a constant index."""
    value = splat_value(index)
    if value is None:
        return
    value = int(value)
    if value < 0:
        warn(f"extract index {i} has negative value {value}, which may cause undefined "
             "behavior", op)
    if value > max_valid:
        warn(f"extract index {i} value {value} may be out of bounds (max valid index: "
             f"{max_valid})", op)


@rule("extract")
def _extract(op: Operation) -> None:
    src, res = _tile(op.operands[0].type), _tile(op.results[0].type)
    if src is None or res is None:
        return
    if src.element != res.element:
        raise fail("source and result element type do not match")
    if src.rank != res.rank:
        raise fail("source and result must have the same rank")
    _check_indices(op, src, res, op.operands[1:], warn_bounds=True)


@rule("insert")
def _insert(op: Operation) -> None:
    src, dst = _tile(op.operands[0].type), _tile(op.operands[1].type)
    res = _tile(op.results[0].type)
    if src is None or dst is None or res is None:
        return
    if res != dst:
        raise fail("result type must match the destination type")
    if src.element != dst.element:
        raise fail("source and destination element type do not match")
    if src.rank != dst.rank:
        raise fail("source and destination must have the same rank")
    _check_indices(op, dst, src, op.operands[2:])


@rule("iota")
def _iota(op: Operation) -> None:
    res = _tile(op.results[0].type)
    if res is None:
        return
    if res.rank != 1:
        raise fail("expects result type to be 1-d tile")
    width = res.element.bitwidth if isinstance(res.element, ElementType) else 64
    if width < 64 and res.shape[0] > (1 << width):
        raise fail(f"the number of elements {res.shape[0]} exceeds the maximum value of "
                   f"element type {q(res.element)}")


def _bits(t: TileType) -> int:
    width = 1 if str(t.element) == "i1" else bit_width(t.element)
    return width * t.num_elements


@rule("pack", "unpack")
def _pack(op: Operation) -> None:
    src, res = _tile(op.operands[0].type), _tile(op.results[0].type)
    if src is None or res is None:
        return
    if src.rank != 1:
        raise fail("expects source and result to be rank-1 tiles")
    if value_width(src.element) == value_width(res.element):
        raise fail("expects source and result to have different element type widths")
    sb, rb = _bits(src), _bits(res)
    if sb % 8:
        raise fail("expects source tile to be byte-aligned")
    if rb % 8:
        raise fail("expects result tile to be byte-aligned")
    if sb != rb:
        raise fail(f"expects source and result to have the same size in bytes, but got "
                   f"source tile size {sb // 8} bytes and result tile size {rb // 8} bytes")


@rule("constant")
def _constant(op: Operation) -> None:
    value = op.attributes.get("value")
    vtype = getattr(value, "type", None)
    if vtype is not None and op.results and vtype != op.results[0].type:
        raise fail("failed to verify that all of {value, result} have same type")
