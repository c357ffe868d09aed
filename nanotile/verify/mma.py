"""Matrix multiply-accumulate: mmaf, mmai, mmaf_scaled. Operands are 2-D (m x k, k x n,
m x n) or 3-D with a leading batch dimension; element type pairs are restricted."""

from __future__ import annotations

from nanotile.ir.core import Operation
from nanotile.ir.types import TileType

from .engine import fail, q, rule, shape_text


def _shapes(op: Operation) -> tuple[TileType, TileType, TileType] | None:
    lhs, rhs, acc = (v.type for v in op.operands[:3])
    if all(isinstance(t, TileType) for t in (lhs, rhs, acc)):
        return lhs, rhs, acc
    return None


def _dims_match(a_name, a, ai, b_name, b, bi, space: str = "") -> None:
    if a.shape[ai] != b.shape[bi]:
        raise fail(f"{space}shape error: dim {ai} of {a_name} ({a.shape[ai]}) and dim {bi} "
                   f"of {b_name} ({b.shape[bi]}) must match, but got {a_name} shape "
                   f"({shape_text(a.shape)}) and {b_name} shape ({shape_text(b.shape)})")


@rule("mmaf", "mmai", "mmaf_scaled")
def _mma_shapes(op: Operation) -> None:
    tiles = _shapes(op)
    if tiles is None:
        return
    lhs, rhs, acc = tiles
    if lhs.rank not in (2, 3):
        raise fail("operands must be 2D or 3D tiles")
    b = int(lhs.rank == 3)
    if b:
        _dims_match("lhs", lhs, 0, "rhs", rhs, 0)
        _dims_match("lhs", lhs, 0, "acc", acc, 0)
    row, col = b, b + 1
    # The reference writes these three with a leading space after "op".
    _dims_match("lhs", lhs, col, "rhs", rhs, row, " ")
    _dims_match("lhs", lhs, row, "acc", acc, row, " ")
    _dims_match("rhs", rhs, col, "acc", acc, col, " ")


_MMAF_PAIRS = {
    "f4E2M1FN": ("f16", "f32"), "f8E4M3FN": ("f16", "f32"), "f8E5M2": ("f16", "f32"),
    "f16": ("f16", "f32"), "bf16": ("f32",), "tf32": ("f32",), "f32": ("f32",),
    "f64": ("f64",),
}


@rule("mmaf")
def _mmaf_types(op: Operation) -> None:
    lhs, _, acc = _shapes(op)
    allowed = _MMAF_PAIRS.get(str(lhs.element))
    if allowed is None:
        raise fail(f"unsupported input element type: {q(lhs.element)}")
    if str(acc.element) not in allowed:
        names = ", ".join(f"'{a}'" for a in allowed)
        raise fail(f"unsupported combination of element types. Input type {q(lhs.element)} "
                   f"expects accumulator/result type to be one of {{{names}}}, but got "
                   f"{q(acc.element)}")


@rule("mmaf_scaled")
def _mmaf_scaled(op: Operation) -> None:
    lhs, rhs, _ = _shapes(op)
    ls, rs = op.operands[3].type, op.operands[4].type
    if not (isinstance(ls, TileType) and isinstance(rs, TileType)):
        return
    b = int(lhs.rank == 3)
    row, col = b, b + 1
    if b:
        _dims_match("lhs", lhs, 0, "lhs_scale", ls, 0)
        _dims_match("rhs", rhs, 0, "rhs_scale", rs, 0)
    _dims_match("lhs", lhs, row, "lhs_scale", ls, row)
    _dims_match("rhs", rhs, col, "rhs_scale", rs, col)
    _dims_match("lhs_scale", ls, col, "rhs_scale", rs, row)
    el, scale = str(lhs.element), str(ls.element)
    if scale == "f8E4M3FN" and el != "f4E2M1FN":
        raise fail(f"unsupported combination of element types. Scale type {q(ls.element)} "
                   f"expects lhs and rhs element types to be 'f4E2M1FN', but got "
                   f"{q(lhs.element)}")
    if scale == "f8E8M0FNU" and el not in ("f8E4M3FN", "f8E5M2", "f4E2M1FN"):
        raise fail(f"unsupported combination of element types. Scale type {q(ls.element)} "
                   "expects lhs and rhs element types to be one of {'f8E4M3FN', 'f8E5M2', "
                   f"'f4E2M1FN'}}, but got {q(lhs.element)}")
    k, ks = lhs.shape[col], ls.shape[col]
    if k % ks:
        raise fail(f"shape error: dim {col} of lhs_scale ({ks}) must be a divisor of dim "
                   f"{col} of lhs ({k}), but got lhs_scale shape ({shape_text(ls.shape)}) "
                   f"and lhs shape ({shape_text(lhs.shape)})")
    block = k // ks
    if el in ("f8E4M3FN", "f8E5M2") and block != 32:
        raise fail("shape error: f8 element type requires block scale factor of lhs_scale "
                   f"and rhs_scale to be 32, but got {block}")
    if el == "f4E2M1FN" and scale == "f8E4M3FN" and block != 16:
        raise fail("shape error: f4E2M1FN element type with f8E4M3FN scales requires block "
                   f"scale factor of lhs_scale and rhs_scale to be 16, but got {block}")
    if el == "f4E2M1FN" and scale == "f8E8M0FNU" and block not in (16, 32):
        raise fail("shape error: f4E2M1FN element type with f8E8M0FNU scales requires "
                   "block scale factor of lhs_scale and rhs_scale to be 16 or 32, but got "
                   f"{block}")
