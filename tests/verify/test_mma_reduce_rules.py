"""mmaf/mmai/mmaf_scaled shapes and type pairs; reduce/scan bodies."""

from __future__ import annotations

import pytest

from nanotile.ir.attrs import FloatAttr, IntegerAttr
from nanotile.ir.enums import Signedness
from nanotile.ir.types import TOKEN

from .build import EL, Kernel, errors, only_error, region, tile


def mma(name, lhs, rhs, acc, extra=()):
    k = Kernel(lhs, rhs, acc, *extra)
    ops = [k.arg(i) for i in range(3 + len(extra))]
    attrs = {"signedness_lhs": Signedness.signed, "signedness_rhs": Signedness.signed}
    k.op(name, ops, [acc], attrs if name == "mmai" else None)
    return k.module()


def test_mmaf_shapes():
    assert errors(mma("mmaf", tile((16, 8), "f16"), tile((8, 32), "f16"),
                      tile((16, 32)))) == []
    assert errors(mma("mmaf", tile((2, 16, 8), "f16"), tile((2, 8, 32), "f16"),
                      tile((2, 16, 32)))) == []
    msg = only_error(mma("mmaf", tile((16, 8), "f16"), tile((16, 32), "f16"),
                         tile((16, 32))))
    assert msg.endswith("shape error: dim 1 of lhs (8) and dim 0 of rhs (16) must match, "
                        "but got lhs shape (16, 8) and rhs shape (16, 32)")
    msg = only_error(mma("mmaf", tile((2, 16, 8), "f16"), tile((4, 8, 32), "f16"),
                         tile((2, 16, 32))))
    assert "dim 0 of lhs (2) and dim 0 of rhs (4) must match" in msg
    msg = only_error(mma("mmaf", tile((16, 8), "f16"), tile((8, 32), "f16"),
                         tile((2, 16, 32))))
    assert msg.endswith("failed to verify that all of {lhs, rhs, acc} have same rank")


def test_mmaf_type_pairs():
    msg = only_error(mma("mmaf", tile((16, 8), "bf16"), tile((8, 32), "bf16"),
                         tile((16, 32), "f16")))
    assert msg.endswith("op unsupported combination of element types. Input type 'bf16' "
                        "expects accumulator/result type to be one of {'f32'}, but got 'f16'")
    msg = only_error(mma("mmaf", tile((16, 8), "f16"), tile((8, 32), "f32"),
                         tile((16, 32))))
    assert msg.endswith("failed to verify that all of {lhs, rhs} have the same element type")
    msg = only_error(mma("mmaf", tile((16, 8), "i8"), tile((8, 32), "i8"), tile((16, 32))))
    assert "operand #0 must be mmaf operand tile type of f16 or bf16" in msg


def test_mmai():
    assert errors(mma("mmai", tile((16, 8), "i8"), tile((8, 32), "i8"),
                      tile((16, 32), "i32"))) == []
    msg = only_error(mma("mmai", tile((16, 8), "f16"), tile((8, 32), "i8"),
                         tile((16, 32), "i32")))
    assert "operand #0 must be mmai operand tile type of i8 values" in msg


def test_mmaf_scaled():
    scales = (tile((16, 2), "f8E8M0FNU"), tile((2, 32), "f8E8M0FNU"))
    assert errors(mma("mmaf_scaled", tile((16, 64), "f8E4M3FN"), tile((64, 32), "f8E4M3FN"),
                      tile((16, 32)), scales)) == []
    bad_block = (tile((16, 4), "f8E8M0FNU"), tile((4, 32), "f8E8M0FNU"))
    msg = only_error(mma("mmaf_scaled", tile((16, 64), "f8E4M3FN"),
                         tile((64, 32), "f8E4M3FN"), tile((16, 32)), bad_block))
    assert msg.endswith("shape error: f8 element type requires block scale factor of "
                        "lhs_scale and rhs_scale to be 32, but got 16")
    e4_scales = (tile((16, 2), "f8E4M3FN"), tile((2, 32), "f8E4M3FN"))
    msg = only_error(mma("mmaf_scaled", tile((16, 64), "f8E5M2"), tile((64, 32), "f8E5M2"),
                         tile((16, 32)), e4_scales))
    assert msg.endswith("Scale type 'f8E4M3FN' expects lhs and rhs element types to be "
                        "'f4E2M1FN', but got 'f8E5M2'")


def reduce_kernel(body_types, yield_from=0, dim=0, res=None, identity=None, impure=False):
    k = Kernel(tile((8, 4)))
    reg, body = region(*body_types)
    if impure:
        k.op("print_tko", [], [TOKEN], {"str": "x"}, segments=[0, 0], block=body)
    k.op("yield", [body.arguments[yield_from]] if body.arguments else [], [], block=body)
    attrs = {"dim": dim, "identities": (identity or FloatAttr(0, EL["f32"]),)}
    k.op("reduce", [k.arg(0)], [res or tile((4,))], attrs, regions=[reg])
    return k.module()


def test_reduce_valid():
    assert errors(reduce_kernel([tile(()), tile(())])) == []


def test_reduce_rules():
    assert only_error(reduce_kernel([tile(())])).endswith(
        "expect 2 block arguments but got: 1")
    assert only_error(reduce_kernel([tile((2,)), tile(())])).endswith(
        "expect 0-rank tile type at index: 0 but got: '!cuda_tile.tile<2xf32>'")
    assert only_error(reduce_kernel([tile(()), tile(())], dim=2)).endswith(
        "dimension (2) is out of bound [0, 2)")
    assert only_error(reduce_kernel([tile(()), tile(())],
                                    identity=IntegerAttr(0, EL["i32"]))).endswith(
        "expect same type for operand at index: 0 and identity at index: 0 but got: "
        "'f32' and 'i32'")
    inferred, failed = errors(reduce_kernel([tile(()), tile(())], res=tile((8,))))
    assert "inferred type(s) '!cuda_tile.tile<4xf32>' are incompatible" in inferred
    assert failed == "'cuda_tile.reduce' op failed to infer returned types"


def test_reduce_body_must_be_pure():
    msg = only_error(reduce_kernel([tile(()), tile(())], impure=True))
    assert msg == "'cuda_tile.print_tko' op only pure operations are allowed inside " \
                  "'cuda_tile.reduce'"


def test_mma_operands_are_2d_or_3d():
    assert only_error(mma("mmaf", tile((16,), "f16"), tile((16,), "f16"), tile((16,)))) == \
        "'cuda_tile.mmaf' op operands must be 2D or 3D tiles"


def _reduce(n_results=1, identities=1, yields=1, body=("f32", "f32"), operands=1,
            name="reduce"):
    """A reduce (or scan) of ``operands`` tiles<8x4xf32> along dim 0. Each message below
    is the one tileiras 13.4 gives for the same op written to bytecode."""
    k = Kernel(tile((8, 4)))
    reg, block = region(*(tile((), e) for e in body))
    k.op("yield", list(block.arguments[:yields]), [], block=block)
    attrs = {"dim": 0, "identities": (FloatAttr(0, EL["f32"]),) * identities}
    if name == "scan":
        attrs["reverse"] = False
    shape = (4,) if name == "reduce" else (8, 4)
    k.op(name, [k.arg(0)] * operands, [tile(shape)] * n_results, attrs, regions=[reg])
    return k.module()


@pytest.mark.parametrize("kw, message", [
    ({"n_results": 2}, "expect same number of operands and results"),
    ({"identities": 0}, "expect identities to match the number of operands but got: "
                        "1 operands and 0 identities"),
    ({"yields": 2}, "expect number of terminators operands (2) to match number of "
                    "operands (1)"),
    ({"body": ("f32", "i32")}, "expect same element type for block argument at index: 0 "
                               "and 1 but got: 'f32' and 'i32'"),
    # SameOperandsShape asks for an operand before the op's own verifier does
    ({"operands": 0, "n_results": 0, "identities": 0, "body": (), "yields": 0},
     "expected 1 or more operands, but found 0"),
    ({"operands": 0, "n_results": 0, "identities": 0, "body": (), "yields": 0,
      "name": "scan"}, "expected 1 or more operands, but found 0"),
])
def test_aggregate_rules(kw, message):
    name = kw.get("name", "reduce")
    assert only_error(_reduce(**kw)) == f"'cuda_tile.{name}' op {message}"
