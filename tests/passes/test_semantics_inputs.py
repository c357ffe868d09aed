"""make_inputs gives integer scalars values that keep the kernel's ``assume div_by``
promises: the compiled code trusts them (vector accesses through a stride), so a value
that breaks one faults or reads the wrong elements in the emulator."""

from __future__ import annotations

import io

import numpy as np
import pytest

from nanotile.interp import run
from nanotile.ir.parser import parse_text
from nanotile.passes.semantics import (array_layout, index_parameters, make_inputs,
                                       scalar_divisors)

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


# The pattern of the corpus's rms_norm_kernel_gather: rows gathered through pointer
# tiles, row b at b * %rs, columns masked by %n. Its pointer tiles are 1-D, so make_inputs
# reads %n as the stride of a 1-D array (it was 1) and %rs as a scalar (it was 3): both
# broke the kernel's promises, which the compiled code trusts (16-byte vector accesses
# under one mask), and --check-semantics blamed the distribute pass for the difference.
GATHER = """cuda_tile.module @m {
  entry @gather_rows(%x: tile<ptr<f32>>, %m: tile<i32>, %n: tile<i32>, %rs: tile<i32>,
                     %cs: tile<i32>, %y: tile<ptr<f32>>, %ym: tile<i32>, %yn: tile<i32>,
                     %yrs: tile<i32>, %ycs: tile<i32>) {
    %ax = assume div_by<16>, %x : tile<ptr<f32>>
    %an = assume div_by<16>, %n : tile<i32>
    %ars = assume div_by<4>, %rs : tile<i32>
    %ay = assume div_by<16>, %y : tile<ptr<f32>>
    %b, %bb, %bbb = get_tile_block_id : tile<i32>
    %cols = iota : tile<64xi32>
    %row = muli %b, %ars : tile<i32>
    %row1 = reshape %row : tile<i32> -> tile<1xi32>
    %rows = broadcast %row1 : tile<1xi32> -> tile<64xi32>
    %index = addi %rows, %cols : tile<64xi32>
    %n1 = reshape %an : tile<i32> -> tile<1xi32>
    %ns = broadcast %n1 : tile<1xi32> -> tile<64xi32>
    %mask = cmpi less_than %cols, %ns, signed : tile<64xi32> -> tile<64xi1>
    %zero = constant <f32: 0.0> : tile<64xf32>
    %x1 = reshape %ax : tile<ptr<f32>> -> tile<1xptr<f32>>
    %xs = broadcast %x1 : tile<1xptr<f32>> -> tile<64xptr<f32>>
    %px = offset %xs, %index : tile<64xptr<f32>>, tile<64xi32> -> tile<64xptr<f32>>
    %v, %t = load_ptr_tko weak %px, %mask, %zero
        : tile<64xptr<f32>>, tile<64xi1>, tile<64xf32> -> tile<64xf32>, token
    %w = addf %v, %v : tile<64xf32>
    %y1 = reshape %ay : tile<ptr<f32>> -> tile<1xptr<f32>>
    %ys = broadcast %y1 : tile<1xptr<f32>> -> tile<64xptr<f32>>
    %py = offset %ys, %index : tile<64xptr<f32>>, tile<64xi32> -> tile<64xptr<f32>>
    %s = store_ptr_tko weak %py, %w, %mask : tile<64xptr<f32>>, tile<64xf32>, tile<64xi1> -> token
    return
  }
}
"""


def test_make_inputs_keeps_the_promises_on_shape_and_stride_parameters():
    module = parse_text(GATHER, "gather.mlir")
    grid, args = make_inputs(module.entries()[0], np.random.default_rng(0))
    x, m, n, rs, cs = args[:5]
    assert n % 16 == 0 and rs % 4 == 0
    assert x.size >= m * n  # the "stride" n pads the rows of a 1-D array apart
    run(module, "gather_rows", grid, *args, debug=True, out=io.StringIO())


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_gather_rows_keep_their_meaning_down_to_ptx(gpu):
    from nanotile.passes.manager import RunOptions, run_pipeline
    from nanotile.passes.pipelines import default_pipeline
    from nanotile.passes.registry import parse_pipeline

    module = parse_text(GATHER, "gather.mlir")
    options = RunOptions(check_semantics=True)
    run_pipeline(module, parse_pipeline(default_pipeline(gpu)), options)
    assert any(name == "(check-semantics)" for name, _ in options.timings)


def test_array_layout_transposes_before_it_pads():
    assert array_layout([128, 256], [1, 1, 1, 1]) == ([256, 512], [512, 1])  # row-major
    # a unit stride cannot divide by 16: the other dimension is innermost (column-major)
    assert array_layout([128, 256], [1, 1, 1, 16]) == ([256, 512], [1, 256])
    assert array_layout([256], [1, 16]) == ([512], [16])  # no other dimension: padded
    assert array_layout([1, 512], [16, 16, 4, 1]) == ([16, 1024], [1024, 1])  # extents grow


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
