"""Layouts in tile types (languages tile-layout and simt): printed, parsed back, compared,
and refused by the bytecode writer; convert_layout and the simt ops are internal ops (no
opcode). The algebra itself: test_linear_layouts.py."""

from __future__ import annotations

import pytest

from nanotile.diagnostics import CompileError
from nanotile.ir import types as T
from nanotile.ir.layouts import REGS, SharedLayout, default_blocked, replicated
from nanotile.ir.optable import INTERNAL_OPS, OPS, OPS_BY_OPCODE, lookup
from nanotile.ir.parser import parse_text, parse_type
from nanotile.ir.printer import print_module

BLOCKED = "#blocked<per_thread=[1], lanes=[32], warps=[4], order=[0]>"
KERNEL = f"""cuda_tile.module @m {{
  entry @k(%p: tile<ptr<f32>, #replicated>, %x: tile<256xf32, {BLOCKED}>) {{
    %c = constant <f32: 1.000000e+00> : tile<256xf32, {BLOCKED}>
    %y = addf %x, %c  : tile<256xf32, {BLOCKED}>
    %s = convert_layout %y : tile<256xf32, {BLOCKED}> -> tile<256xf32, #shared<offset=0>>
    %t = convert_layout %x : tile<256xf32, {BLOCKED}> -> tile<256xf32, #shared<offset=?>>
    return
  }} {{nanotile.shared_bytes = 1024}}
}}
"""


@pytest.mark.parametrize("text, layout", [
    (f"tile<256xf32, {BLOCKED}>", default_blocked((256,), 4)),
    ("tile<f32, #replicated>", replicated(())),
    ("tile<1x1xptr<f32>, #replicated>", replicated((1, 1))),
    ("tile<128x64xf32, #shared<offset=0>>", SharedLayout((128, 64), 0)),
    ("tile<128x64xf32, #shared<offset=?>>", SharedLayout((128, 64))),
    ("tile<8xf32, #regs>", REGS),
])
def test_type_round_trip(text, layout):
    t = parse_type(text)
    assert isinstance(t, T.TileType) and t.layout == layout
    assert str(t) == text
    assert parse_type(str(t)) == t


def test_layout_is_part_of_equality():
    bare = T.TileType((16, 32), T.F32)
    assert str(bare) == "tile<16x32xf32>" and bare.layout is None
    blocked = default_blocked((16, 32), 4)
    assert bare != T.TileType((16, 32), T.F32, blocked)
    assert T.TileType((16, 32), T.F32, blocked) == T.TileType((16, 32), T.F32,
                                                              default_blocked((16, 32), 4))
    assert T.TileType((16, 32), T.F32, blocked) != T.TileType((16, 32), T.F32,
                                                              default_blocked((16, 32), 8))
    # equality is the linear map: 32 elements over 4 or 8 warps are held the same way
    assert default_blocked((4, 8), 4) == default_blocked((4, 8), 8)


@pytest.mark.parametrize("text, message", [
    ("tile<4xf32, #replicated>", "one-element"),
    ("tile<4xf32, #swizzled>", "unknown layout"),
    ("tile<4xf32, #shared<offset=0, color=3>>", "unknown field"),
    ("tile<4x4xf32, #shared<offset=0, order=[0, 0]>>", "permutation"),
])
def test_bad_layouts(text, message):
    with pytest.raises(CompileError, match=message):
        parse_type(text)


def test_module_round_trip():
    m = parse_text(KERNEL, "k.mlir")
    text = print_module(m)
    assert text == KERNEL
    assert print_module(parse_text(text, "again.mlir")) == text
    ops = m.items[0].regions[0].block.ops
    assert ops[2].results[0].type.layout == SharedLayout((256,), 0)
    assert ops[0].attributes["value"].type == T.TileType((256,), T.F32)  # constant: bare


def test_entry_attributes_before_the_body_read_too():
    """cuda-tile prints an entry's discardable attributes after its body; the form
    ``attributes {...}`` before the body reads the same."""
    before = KERNEL.replace(") {\n    %c", ") attributes {nanotile.shared_bytes = 1024} {\n    %c"
                            ).replace("} {nanotile.shared_bytes = 1024}", "}")
    assert before != KERNEL
    assert print_module(parse_text(before, "b.mlir")) == KERNEL


@pytest.mark.parametrize("name", ["convert_layout", "barrier", "splat", "pick", "coordinates",
                                  "shared_store", "shared_load", "shared_gather",
                                  "warp_mma", "ldmatrix", "mma_sync", "vprintf"])
def test_back_end_ops_are_internal(name):
    d = lookup(name)
    assert d is not None and d.internal and name in INTERNAL_OPS
    assert name not in OPS
    assert all(row.name != name for row in OPS_BY_OPCODE.values())


def test_bytecode_writer_refuses_layouts():
    from nanotile.bytecode.writer import write_bytecode

    with pytest.raises(CompileError, match="layout"):
        write_bytecode(parse_text(KERNEL, "k.mlir"))
    plain = KERNEL.replace(", #replicated", "").replace(f", {BLOCKED}", "").replace(
        ", #shared<offset=0>", "").replace(", #shared<offset=?>", "").replace(
        " {nanotile.shared_bytes = 1024}", "")
    with pytest.raises(CompileError, match="internal to nanotile"):
        write_bytecode(parse_text(plain, "plain.mlir"))
