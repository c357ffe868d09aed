"""broadcast, reshape, permute, cat, extract, iota, pack rules."""

from __future__ import annotations

from nanotile.ir.attrs import DenseElementsAttr

from .build import Kernel, errors, only_error, tile


def unary(name, src, dst, attrs=None):
    k = Kernel(src)
    k.op(name, [k.arg(0)], [dst], attrs)
    return k.module()


def test_broadcast():
    assert errors(unary("broadcast", tile((1, 4)), tile((8, 4)))) == []
    assert only_error(unary("broadcast", tile((2, 4)), tile((8, 4)))).endswith(
        "expects the shape of source tile to be compatible with that of the result tile, "
        "but got: 2, 4 and 8, 4")
    assert only_error(unary("broadcast", tile((4,)), tile((8, 4)))).endswith(
        "failed to verify that all of {source, result} have same rank")
    assert only_error(unary("broadcast", tile((4,)), tile((4,), "f16"))).endswith(
        "requires the same element type for all operands and results")


def test_reshape():
    assert errors(unary("reshape", tile((4, 8)), tile((32,)))) == []
    assert only_error(unary("reshape", tile((4, 8)), tile((16,)))).endswith(
        "expected source tile and result tile to have the same number of elements")


def test_permute():
    ok = unary("permute", tile((2, 4, 8)), tile((8, 2, 4)), {"permutation": (2, 0, 1)})
    assert errors(ok) == []
    cases = [
        ((0, 1), "expect permutation size (2) to equal the rank of the source (3)"),
        ((0, 0, 1), "expect permutation elements to be unique"),
        ((0, 1, 3), "permutation element at index 2 (3) is out of bound [0, 3)"),
        ((0, 1, 2), "result shape invalid at index 0, expected: 2, but got: 8"),
    ]
    for perm, message in cases:
        m = unary("permute", tile((2, 4, 8)), tile((8, 2, 4)), {"permutation": perm})
        assert only_error(m).endswith(message), perm
    assert "expects at least rank 2" in only_error(
        unary("permute", tile((4,)), tile((4,)), {"permutation": (0,)}))


def cat(lhs, rhs, res, dim):
    k = Kernel(lhs, rhs)
    k.op("cat", [k.arg(0), k.arg(1)], [res], {"dim": dim})
    return k.module()


def test_cat():
    assert errors(cat(tile((2, 4)), tile((2, 4)), tile((4, 4)), 0)) == []
    assert only_error(cat(tile((2, 4)), tile((2, 4)), tile((4, 4)), 2)).endswith(
        "expect dim to be [0, 2), but got: 2")
    assert only_error(cat(tile((2, 4)), tile((2, 4)), tile((8, 4)), 0)).endswith(
        "invalid concat at position 0, expected: 4 but got: 8")
    assert only_error(cat(tile((2, 4)), tile((2, 8)), tile((4, 4)), 0)).endswith(
        "expect lhs and rhs shapes to match at non-concat position 1, expected: 4 but got: 8")
    assert only_error(cat(tile((2, 4)), tile((2, 4)), tile((4, 4), "f16"), 0)).endswith(
        "failed to verify that all of {lhs, rhs, result} have the same element type")


def test_extract():
    k = Kernel(tile((8, 8)), tile((), "i32"))
    k.op("extract", [k.arg(0), k.arg(1), k.arg(1)], [tile((4, 8))])
    assert errors(k.module()) == []
    k = Kernel(tile((8, 8)), tile((), "i32"))
    k.op("extract", [k.arg(0), k.arg(1)], [tile((4, 8))])
    assert only_error(k.module()).endswith("expected 2 indices, but got 1")
    k = Kernel(tile((8, 8)), tile((), "i32"))
    k.op("extract", [k.arg(0), k.arg(1), k.arg(1)], [tile((4, 16))])
    assert "source dimension 1 size (8) must be evenly divisible by result dimension 1" \
        in only_error(k.module())
    k = Kernel(tile((8, 8)), tile((), "i64"))
    k.op("extract", [k.arg(0), k.arg(1), k.arg(1)], [tile((4, 8))])
    assert "operand #1 must be variadic of 0D tile of i32 values" in only_error(k.module())


def test_iota():
    k = Kernel()
    k.op("iota", [], [tile((256,), "i8")])
    assert errors(k.module()) == []
    k = Kernel()
    k.op("iota", [], [tile((512,), "i8")])
    assert only_error(k.module()).endswith(
        "the number of elements 512 exceeds the maximum value of element type 'i8'")
    k = Kernel()
    k.op("iota", [], [tile((4, 4), "i32")])
    assert only_error(k.module()).endswith("expects result type to be 1-d tile")


def test_pack_unpack():
    assert errors(unary("pack", tile((8,), "f16"), tile((16,), "i8"))) == []
    assert only_error(unary("pack", tile((8,), "f16"), tile((8,), "i8"))).endswith(
        "expects source and result to have the same size in bytes, but got source tile "
        "size 16 bytes and result tile size 8 bytes")
    assert only_error(unary("unpack", tile((8,), "i8"), tile((8,), "i8"))).endswith(
        "expects source and result to have different element type widths")
    assert only_error(unary("pack", tile((2, 4), "f16"), tile((2, 8), "i8"))).endswith(
        "expects source and result to be rank-1 tiles")


def test_constant_type_matches_value():
    k = Kernel()
    value = DenseElementsAttr(tile((4,), "i32"), b"\0\0\0\0", True)
    k.op("constant", [], [tile((8,), "i32")], {"value": value})
    assert "all of {value, result} have same type" in only_error(k.module())


def test_insert():
    k = Kernel(tile((4, 8)), tile((8, 8)), tile((), "i32"))
    k.op("insert", [k.arg(0), k.arg(1), k.arg(2), k.arg(2)], [tile((8, 8))])
    assert errors(k.module()) == []
    k = Kernel(tile((4, 8)), tile((8, 8)), tile((), "i32"))
    k.op("insert", [k.arg(0), k.arg(1), k.arg(2), k.arg(2)], [tile((4, 8))])
    assert only_error(k.module()).endswith("result type must match the destination type")
    k = Kernel(tile((3, 8), "f16"), tile((8, 8), "f16"), tile((), "i32"))
    k.op("insert", [k.arg(0), k.arg(1), k.arg(2), k.arg(2)], [tile((8, 8), "f16")])
    assert errors(k.module())[0] == "all dimensions must be powers of two, got 3, 8"
