"""Layouts in tile types (language tile-layout): printed, parsed back, compared, and
refused by the bytecode writer; convert_layout is an internal op (no opcode)."""

from __future__ import annotations

import pytest

from nanotile.diagnostics import CompileError
from nanotile.ir import types as T
from nanotile.ir.layouts import Layout, shared
from nanotile.ir.optable import OPS, OPS_BY_OPCODE, lookup
from nanotile.ir.parser import parse_text, parse_type
from nanotile.ir.printer import print_module

KERNEL = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<f32>, #replicated>, %x: tile<256xf32, #blocked<threads=128, slots=2>>) {
    %c = constant <f32: 1.000000e+00> : tile<256xf32, #blocked<threads=128, slots=2>>
    %y = addf %x, %c  : tile<256xf32, #blocked<threads=128, slots=2>>
    %s = convert_layout %y : tile<256xf32, #blocked<threads=128, slots=2>> -> tile<256xf32, #shared<offset=0>>
    %t = convert_layout %x : tile<256xf32, #blocked<threads=128, slots=2>> -> tile<256xf32, #shared<offset=?>>
    return
  } {nanotile.shared_bytes = 1024}
}
"""


@pytest.mark.parametrize("text, layout", [
    ("tile<4x8xf32, #blocked<threads=128, slots=1>>", Layout("blocked", 32, 128)),
    ("tile<1024xi64, #blocked<threads=256, slots=4>>", Layout("blocked", 1024, 256)),
    ("tile<f32, #replicated>", Layout("replicated", 1)),
    ("tile<1x1xptr<f32>, #replicated>", Layout("replicated", 1)),
    ("tile<128x64xf32, #shared<offset=0>>", shared(8192, 0)),
    ("tile<128x64xf32, #shared<offset=?>>", shared(8192)),
])
def test_type_round_trip(text, layout):
    t = parse_type(text)
    assert isinstance(t, T.TileType) and t.layout == layout
    assert str(t) == text
    assert parse_type(str(t)) == t


def test_layout_is_part_of_equality():
    bare = T.TileType((4, 8), T.F32)
    assert str(bare) == "tile<4x8xf32>" and bare.layout is None
    assert bare != T.TileType((4, 8), T.F32, Layout("blocked", 32, 128))
    assert T.TileType((4, 8), T.F32, Layout("blocked", 32, 128)) == T.TileType((4, 8), T.F32,
                                                                      Layout("blocked", 32, 128))
    assert Layout("blocked", 256, 128).slots == 2 and Layout("blocked", 200, 128).ragged
    assert shared(64, 16).slots == 0 and not shared(64).in_registers


@pytest.mark.parametrize("text, message", [
    ("tile<4x8xf32, #blocked<threads=128, slots=2>>", "does not fit"),
    ("tile<4xf32, #replicated>", "one-element"),
    ("tile<4xf32, #blocked<threads=0, slots=1>>", "threads > 0"),
    ("tile<4xf32, #swizzled>", "unknown layout"),
    ("tile<4xf32, #blocked<threads=4>>", "invalid layout"),
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
    assert ops[2].results[0].type.layout == Layout("shared", 256, 0, 0)
    assert ops[0].attributes["value"].type == T.TileType((256,), T.F32)  # constant: bare


def test_entry_attributes_before_the_body_read_too():
    """nanotile printed an entry's discardable attributes as `attributes {...}` before
    its body; cuda-tile prints them after it. Both read the same."""
    before = KERNEL.replace(") {\n    %c", ") attributes {nanotile.shared_bytes = 1024} {\n    %c"
                            ).replace("} {nanotile.shared_bytes = 1024}", "}")
    assert print_module(parse_text(before, "b.mlir")) == KERNEL


def test_convert_layout_is_internal():
    d = lookup("convert_layout")
    assert d is not None and d.internal
    assert "convert_layout" not in OPS
    assert all(row.name != "convert_layout" for row in OPS_BY_OPCODE.values())


def test_bytecode_writer_refuses_layouts():
    from nanotile.bytecode.writer import write_bytecode

    with pytest.raises(CompileError, match="layout"):
        write_bytecode(parse_text(KERNEL, "k.mlir"))
    plain = KERNEL.replace(", #replicated", "").replace(
        ", #blocked<threads=128, slots=2>", "").replace(", #shared<offset=0>", "").replace(
        ", #shared<offset=?>", "").replace(" {nanotile.shared_bytes = 1024}", "")
    with pytest.raises(CompileError, match="internal to nanotile"):
        write_bytecode(parse_text(plain, "plain.mlir"))
