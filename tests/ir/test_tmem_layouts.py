"""The layout of sm_100a's tcgen05 accumulator read from tensor memory (nanotile/ir/
layouts.py: tmem_accumulator, ``#tmem<acc, m128nN>``): thread t of warp w holds row
32 w + t, register j its column j (PTX ISA, tcgen05 "Data path layout", M = 128, and
tcgen05.ld.32x32b); through print and parse, in a tile type of the IR text too."""

from __future__ import annotations

import pytest

from nanotile.ir.layouts import (
    conversion,
    default_blocked,
    parse_layout,
    tmem_accumulator,
    tmem_params,
    wgmma_accumulator,
)
from nanotile.ir.parser import parse_text
from nanotile.ir.printer import print_module


@pytest.mark.parametrize("n", [16, 64, 256])
def test_tmem_layout(n):
    layout = tmem_accumulator((128, n))
    assert layout.registers == n and tmem_params(layout) == n
    for warp, lane in [(0, 0), (1, 5), (3, 31)]:
        row = 32 * warp + lane
        assert layout.thread_elements(lane, warp) == [row * n + j for j in range(n)]
    assert parse_layout(str(layout), (128, n)) == layout


@pytest.mark.parametrize("text,shape", [("#tmem<acc, m128n64>", (128, 32)),
                                        ("#tmem<acc, m64n64>", (64, 64)),
                                        ("#tmem<a, m128n64>", (128, 64)),
                                        ("#tmem<acc, m128n64, x=1>", (128, 64))])
def test_tmem_layout_refused(text, shape):
    with pytest.raises(ValueError):
        parse_layout(text, shape)


def test_tmem_layout_text_round_trip():
    text = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<f32>>) {
    %z = constant <f32: 0.0> : tile<128x32xf32, #tmem<acc, m128n32>>
    return
  }
}
"""
    module = parse_text(text, "<k>")
    printed = print_module(module)
    assert "tile<128x32xf32, #tmem<acc, m128n32>>" in printed
    assert print_module(parse_text(printed, "<k>")) == printed


def test_tmem_params_is_none_for_other_layouts():
    assert tmem_params(wgmma_accumulator((128, 64))) is None
    assert tmem_params(default_blocked((128, 64), 4)) is None
    # the same bases under another name are not a #tmem layout
    layout = tmem_accumulator((128, 64))
    assert tmem_params(layout.named("#x")) is None


def test_conversions_from_the_tmem_layout():
    layout = tmem_accumulator((128, 32))
    assert conversion(layout, layout) == "none"
    assert conversion(layout, default_blocked((128, 32), 4)) != "none"
