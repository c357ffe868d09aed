"""The layout of sm_100a's tcgen05 accumulator read from tensor memory (nanotile/ir/
layouts.py: tmem_accumulator, ``#tmem<acc, mMnN>``): thread t of warp w holds row
32 w + t of each 128-row block b, register b N + j its column j (PTX ISA, tcgen05 "Data
path layout", M = 128, and tcgen05.ld.32x32b); through print and parse, in a tile type of
the IR text too."""

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


@pytest.mark.parametrize("m,n", [(128, 16), (128, 64), (128, 256), (256, 32), (256, 256)])
def test_tmem_layout(m, n):
    """Register b N + j of thread t of warp w: row 128 b + 32 w + t, column j (TMEM
    column b N + j: a tcgen05.ld.32x32b of the thread's lane reads them in order)."""
    layout = tmem_accumulator((m, n))
    assert layout.registers == m // 128 * n and tmem_params(layout) == (m, n)
    assert str(layout) == f"#tmem<acc, m{m}n{n}>"
    for warp, lane in [(0, 0), (1, 5), (3, 31)]:
        rows = [128 * b + 32 * warp + lane for b in range(m // 128)]
        assert layout.thread_elements(lane, warp) == \
            [row * n + j for row in rows for j in range(n)]
    assert parse_layout(str(layout), (m, n)) == layout


@pytest.mark.parametrize("n", [16, 64, 256])
def test_tmem_layout_of_64_rows(n):
    """M = 64 (data path layout F, read by tcgen05.ld.16x32bx2 with a half-split of
    N / 2): thread t < 16 of warp w holds row 16 w + t's first N / 2 columns, thread
    t + 16 the same row's others, in order."""
    layout = tmem_accumulator((64, n))
    assert layout.registers == n // 2 and tmem_params(layout) == (64, n)
    for warp, lane in [(0, 0), (1, 5), (2, 16), (3, 31)]:
        row, half = 16 * warp + lane % 16, lane // 16
        assert layout.thread_elements(lane, warp) == \
            [row * n + half * n // 2 + j for j in range(n // 2)]
    assert parse_layout(str(layout), (64, n)) == layout


@pytest.mark.parametrize("text,shape", [("#tmem<acc, m128n64>", (128, 32)),
                                        ("#tmem<acc, m32n64>", (32, 64)),
                                        ("#tmem<acc, m64n1>", (64, 1)),
                                        ("#tmem<acc, m512n16>", (512, 16)),
                                        ("#tmem<acc, m256n512>", (256, 512)),
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
