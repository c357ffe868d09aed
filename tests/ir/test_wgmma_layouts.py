"""The layouts of sm_90a's wgmma (nanotile/ir/layouts.py): the accumulator against the
PTX ISA's fragment table, the K-major operand layouts against the PTX emulator's model of
descriptor addressing (nanotile/ptxemu/ops_mma.py, written from the ISA on its own), and
both through print and parse."""

from __future__ import annotations

import numpy as np
import pytest

from nanotile.ir.layouts import (
    SharedLayout,
    flat_index,
    mma_layout,
    parse_layout,
    wgmma_accumulator,
    wgmma_operand,
    wgmma_params,
)
from nanotile.ptxemu.ops_mma import kmajor_addresses, mnmajor_addresses


@pytest.mark.parametrize("shape,grid", [((64, 8), (1, 1)), ((128, 128), (1, 1)),
                                        ((256, 64), (2, 1)), ((64, 512), (1, 2)),
                                        ((128, 256), (1, 1)), ((256, 32), (2, 2))])
def test_accumulator_is_the_isa_fragment(shape, grid):
    """Warp w of group (i, j) holds rows 16 (w % 4) + g (+8) of each 64-row block of its
    rows and columns 8 (r / 4) + 2t + r % 2 of each n-column block (PTX ISA, "wgmma
    register fragment D"); instruction (b, c) takes n/2 consecutive registers."""
    layout = wgmma_accumulator(shape, grid)
    gm, gn = grid
    rows, cols = shape[0] // gm, shape[1] // gn
    n = min(cols, 256)
    for w in range(4 * gm * gn):
        i, j = divmod(w // 4, gn)
        for lane in range(32):
            g, t = divmod(lane, 4)
            for b in range(rows // 64):
                for c in range(cols // n):
                    for r in range(n // 2):
                        row = i * rows + 64 * b + 16 * (w % 4) + g + 8 * (r // 2 % 2)
                        col = j * cols + n * c + 8 * (r // 4) + 2 * t + r % 2
                        register = (b * (cols // n) + c) * (n // 2) + r
                        assert layout.element(register, lane, w) == \
                            flat_index((row, col), shape)
    assert parse_layout(str(layout), shape) == layout
    assert wgmma_params(parse_layout(str(layout), shape)) == (n, grid)


def test_one_instruction_is_the_mma_sync_accumulator_over_four_warps():
    assert wgmma_accumulator((64, 128)) == mma_layout("acc", (64, 128), (4, 1))
    assert wgmma_params(mma_layout("acc", (64, 128), (4, 1))) is None


@pytest.mark.parametrize("k", [16, 32, 64, 128, 256])
@pytest.mark.parametrize("role", ["a", "b"])
def test_k_major_operand_is_what_a_descriptor_addresses(k, role):
    """Element (row, k) of each K step of 16 lies where the layout puts it, for the
    descriptor that starts at the step's first element: 32 bytes along a row within a
    swizzle atom, the next atom's block (rows x 128 bytes) beyond it."""
    shape = (128, k) if role == "a" else (k, 128)
    layout = wgmma_operand(shape, 2, role)
    width = min(2 * k, 128)
    assert layout.align == 8 * width and isinstance(layout, SharedLayout)
    assert layout.block == (64 if k > 64 else None)
    for step in range(k // 16):
        first = flat_index((0, 16 * step) if role == "a" else (16 * step, 0), shape)
        start = 2 * layout.element_offset(first)
        addresses = kmajor_addresses((start, 16, 8 * width, width), np.arange(128),
                                     np.arange(16))
        for mn in range(128):
            for kk in range(16):
                at = (mn, 16 * step + kk) if role == "a" else (16 * step + kk, mn)
                assert 2 * layout.element_offset(flat_index(at, shape)) == addresses[mn, kk]
    assert parse_layout(str(layout), shape) == layout


@pytest.mark.parametrize("k,n,instr,size", [
    (16, 16, 16, 2), (32, 64, 64, 2), (32, 128, 128, 2), (64, 256, 256, 2), (16, 256, 128, 2),
    # 8-bit (tcgen05's f8 B landed by TMA): K steps of 32, atoms of 128 columns
    (32, 32, 32, 1), (64, 128, 128, 1), (128, 256, 256, 1)])
def test_mn_major_operand_is_what_a_descriptor_addresses(k, n, instr, size):
    """B (K x N) as it is, rows along N: for each instruction of ``instr`` columns and K
    step (32 bytes of K: 16 16-bit, 32 8-bit elements), the descriptor starts at its first
    element, strides 8 rows (SBO) along K and one atom's block (LBO) along N."""
    shape = (k, n)
    layout = wgmma_operand(shape, size, "b", mn_major=True)
    width = min(size * n, 128)
    atom = width // size
    step_k = 32 // size
    leading = size * layout.element_offset(flat_index((0, atom), shape)) if n > atom else 0
    for c in range(n // instr):
        for step in range(k // step_k):
            first = flat_index((step_k * step, c * instr), shape)
            start = size * layout.element_offset(first)
            addresses = mnmajor_addresses((start, leading, 8 * width, width),
                                          np.arange(instr), np.arange(step_k), size)
            for j in range(instr):
                for kk in range(step_k):
                    at = flat_index((step_k * step + kk, c * instr + j), shape)
                    assert size * layout.element_offset(at) == addresses[j, kk]
    assert parse_layout(str(layout), shape) == layout


def test_operand_rows_are_swizzle_atoms():
    with pytest.raises(ValueError, match="swizzle atoms"):
        wgmma_operand((64, 8), 2, "a")
    with pytest.raises(ValueError):
        wgmma_operand((64, 64), 2, "a", mn_major=True)
    with pytest.raises(ValueError):
        parse_layout("#shared<offset=?, align=24>", (8, 8))
    with pytest.raises(ValueError):
        parse_layout("#shared<offset=?, block=3>", (8, 8))
