"""Type rules (nanotile.ir.type_rules): the checks the parser calls while building types."""

from __future__ import annotations

from nanotile.ir import types as T
from nanotile.ir.type_rules import (
    check_gather_scatter_view_type,
    check_partition_view_type,
    check_strided_view_type,
    check_tensor_view_type,
    check_tile_type,
    check_type,
)

from tests.verify.build import EL, Kernel, errors, tile

F32, I32 = EL["f32"], EL["i32"]


def test_tile_shapes():
    assert check_tile_type((4, 8), F32) is None
    assert check_tile_type((), F32) is None
    assert check_tile_type((5, 5), F32) == "all dimensions must be powers of two, got 5, 5"
    assert check_tile_type((1, 0, 2), F32) == (
        "all dimensions must be positive constants, got 1, 0, 2")
    assert check_tile_type((1024, 1024, 1024), F32) == (
        "tile would exceed the maximum of 16777216 elements")
    assert check_tile_type((4096, 4096), F32) is None  # exactly 2**24
    assert check_tile_type((5, None), F32) is not None


def test_four_bit_floats_need_an_even_count():
    f4 = EL["f4E2M1FN"]
    msg = "F4E2M1FN tiles must have an even number of elements"
    assert check_tile_type((), f4) == msg
    assert check_tile_type((1, 1), f4) == msg
    assert check_tile_type((2, 1), f4) is None
    assert check_tile_type((1, 1), EL["i4"]) is None  # the rule is for f4 only


def test_element_and_pointee_types():
    assert check_tile_type((2,), T.PointerType(F32)) is None
    msg = check_tile_type((2,), T.PointerType(T.TileType((2, 2), F32)))
    assert msg.startswith("failed to verify 'pointeeType': f16 or bf16 or f32")
    assert check_tile_type((2,), T.TokenType()).startswith("failed to verify 'elementType'")


def test_tensor_views():
    assert check_tensor_view_type(F32, (None, 128), (None, 1)) is None
    assert check_tensor_view_type(F32, (4,), (1, 1)).startswith(
        "expected shape and stride to be of same rank")
    assert check_tensor_view_type(F32, (0,), (1,)) == (
        "dimensions must have strictly positive constant sizes but got [0]")
    assert check_tensor_view_type(F32, (4, None), (0, None)) == (
        "dimensions must have strictly positive constant strides but got [0, ?]")
    assert check_tensor_view_type(T.PointerType(F32), (4,), (1, 1)).startswith(
        "failed to verify 'elementType': f16 or bf16")  # before the ranks


def test_partition_views():
    tv = T.TensorViewType(F32, (None, 64), (64, 1))
    assert check_partition_view_type((16, 32), tv) is None
    assert check_partition_view_type((16, 32), tv, (1, 0)) is None
    assert check_partition_view_type((16,), tv).startswith(
        "expected tensor_view rank and tile rank to match")
    assert check_partition_view_type((16, 24), tv) == (
        "tile shape dimensions must have power of two length but got [16, 24]")
    assert check_partition_view_type((16, 32), tv, (0, 0)) == (
        "target dimension 0 mapped at least twice (for tile dimensions 0 and 1)")
    assert check_partition_view_type((16, 32), tv, (0, 2)).startswith(
        "target dimension is outside of tensor view dimensions")
    assert check_partition_view_type((16, 32), tv, (0,)).startswith(
        "expected dim_map to map exactly all 2 dimensions")


def test_padding_only_on_floats():
    itv = T.TensorViewType(I32, (8,), (1,))
    assert check_partition_view_type((8,), itv, None, T.PaddingValue.zero) is None
    assert check_partition_view_type((8,), itv, None, T.PaddingValue.nan) == (
        "padding_value nan can only be used with floating point element types, got 'i32'")
    ftv = T.TensorViewType(F32, (8,), (1,))
    assert check_partition_view_type((8,), ftv, None, T.PaddingValue.nan) is None


def test_strided_and_gather_views():
    tv = T.TensorViewType(F32, (64, 64), (64, 1))
    assert check_strided_view_type((8, 8), (8, 8), tv) is None
    assert check_strided_view_type((8, 8), (8,), tv) == "expected 2 traversal strides, got 1"
    assert check_strided_view_type((8, 8), (8, 0), tv).startswith(
        "traversal strides must be strictly positive")
    assert check_gather_scatter_view_type((8, 8), tv, 1) is None
    assert check_gather_scatter_view_type((8, 8), tv, 2).startswith(
        "gather dimension is outside of tensor view dimensions")


def test_check_type_recurses_into_views():
    bad_tv = T.TensorViewType(F32, (0,), (1,))
    assert check_type(T.PartitionViewType((8,), bad_tv)).startswith("dimensions must have")


def test_verifier_reports_bad_types_in_the_ir():
    k = Kernel(tile((3,)))
    assert errors(k.module()) == ["all dimensions must be powers of two, got 3"]


def test_view_rules_in_full():
    """Each view rule's whole message, as cuda-tile's Types.cpp words it (the text parser
    refuses a tile dimension of 0 before these rules run, so they are reached here)."""
    tv = T.TensorViewType(F32, (64, 64), (64, 1))
    assert check_partition_view_type((16,), tv) == (
        "expected tensor_view rank and tile rank to match, got tensor_view of rank 2 and "
        "tiles of rank 1")
    assert check_partition_view_type((0, 16), tv) == (
        "tile shape dimensions must have positive length but got [0, 16]")
    assert check_partition_view_type((16, 32), tv, (-1, 0)) == (
        "target dimension must not be negative, got -1")
    assert check_partition_view_type((16, 32), tv, (0, 2)) == (
        "target dimension is outside of tensor view dimensions, expected strictly less "
        "than 2, got 2")
    assert check_strided_view_type((8, 8), (8, -1), tv) == (
        "traversal strides must be strictly positive but got [8, -1]")
    assert check_gather_scatter_view_type((8,), tv, 0) == (
        "expected tensor_view rank and tile rank to match, got tensor_view of rank 2 and "
        "tiles of rank 1")
    assert check_gather_scatter_view_type((0, 8), tv, 0) == (
        "tile shape dimensions must have positive length but got [0, 8]")
    assert check_gather_scatter_view_type((8, 8), tv, 2) == (
        "gather dimension is outside of tensor view dimensions, expected strictly less "
        "than 2, got 2")
