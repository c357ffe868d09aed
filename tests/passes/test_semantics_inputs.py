"""make_inputs gives integer scalars values that keep the kernel's ``assume div_by``
promises: the compiled code trusts them (vector accesses through a stride), so a value
that breaks one faults or reads the wrong elements in the emulator."""

from __future__ import annotations

import io

import numpy as np

from nanotile.interp import run
from nanotile.ir.parser import parse_text
from nanotile.passes.semantics import index_parameters, make_inputs, scalar_divisors

# %s: div_by<4>, then div_by<6> on the assumed value (a chain: lcm 12); %t: div_by<16>;
# %u: no promise. The kernel stores s + t + u, so a run checks the promises (debug).
KERNEL = """cuda_tile.module @m {
  entry @k(%s: tile<i32>, %t: tile<i32>, %u: tile<i32>, %p: tile<ptr<i32>>) {
    %s4 = assume div_by<4>, %s : tile<i32>
    %s12 = assume div_by<6>, %s4 : tile<i32>
    %t16 = assume div_by<16>, %t : tile<i32>
    %st = addi %s12, %t16 : tile<i32>
    %stu = addi %st, %u : tile<i32>
    %w = store_ptr_tko weak %p, %stu : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
"""


def test_scalar_divisors_follow_assume_chains():
    entry = parse_text(KERNEL, "k.mlir").entries()[0]
    s, t, _, _ = entry.regions[0].block.arguments
    assert scalar_divisors(entry) == {s: 12, t: 16}


def test_make_inputs_rounds_scalars_up_to_their_divisors():
    module = parse_text(KERNEL, "k.mlir")
    grid, args = make_inputs(module.entries()[0], np.random.default_rng(0))
    s, t, u, p = args
    assert s % 12 == 0 and t % 16 == 0 and 0 < s <= 12 and 0 < t <= 16
    assert u == 3  # no promise: the usual small value
    run(module, "k", grid, *args, debug=True, out=io.StringIO())  # the assumes hold
    assert p[0] == s + t + u


# ragged_copy_2d's pattern: a row start loaded from %starts, times a row stride, offsets
# %x. Its values must stay small (an index array), or the rows lie outside %x.
SCALED_INDEX = """cuda_tile.module @m {
  entry @k(%stride: tile<i32>, %starts: tile<ptr<i32>>, %x: tile<ptr<f32>>) {
    %start, %t0 = load_ptr_tko weak %starts : tile<ptr<i32>> -> tile<i32>, token
    %row = muli %stride, %start : tile<i32>
    %p = offset %x, %row : tile<ptr<f32>>, tile<i32> -> tile<ptr<f32>>
    %v, %t1 = load_ptr_tko weak %p : tile<ptr<f32>> -> tile<f32>, token
    %t2 = store_ptr_tko weak %x, %v : tile<ptr<f32>>, tile<f32> -> token
    return
  }
}
"""


def test_an_index_scaled_by_a_stride_is_an_index():
    entry = parse_text(SCALED_INDEX, "k.mlir").entries()[0]
    assert index_parameters(entry) == {entry.regions[0].block.arguments[1]}
