"""make_inputs gives integer scalars values that keep the kernel's ``assume div_by``
promises: the compiled code trusts them (vector accesses through a stride), so a value
that breaks one faults or reads the wrong elements in the emulator."""

from __future__ import annotations

import io

import numpy as np
import pytest

from nanotile.interp import run
from nanotile.ir.parser import parse_text
from nanotile.ir.array_list import ArrayList, copy_arguments, output_arrays
from nanotile.passes.semantics import (array_layout, index_parameters, list_parameters,
                                       make_inputs, scalar_divisors, sliced_reach)

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


# cuTile's list-of-arrays pattern (corpus/cutile-tests test_list__*): %list holds records
# {address, rows, columns, row stride, column stride} of 2-D f32 arrays; the kernel reads
# record 4 (so the list must have at least 5), adds 1 to the element's tile (1, 1) in
# place and copies that tile to %out. div_by<16> on the row stride: rows padded apart.
LIST = """cuda_tile.module @m {
  entry @k(%list: tile<ptr<i64>>, %n: tile<i32>, %out: tile<ptr<f32>>, %on: tile<i32>,
           %os: tile<i32>) {
    %tv = make_tensor_view %list, shape = [%n, 5], strides = [5, 1]
        : tile<i32> -> tensor_view<?x5xi64, strides=[5,1]>
    %pv = make_partition_view %tv : partition_view<tile=(1x8), tensor_view<?x5xi64, strides=[5,1]>>
    %i0 = constant <i32: 0> : tile<i32>
    %i1 = constant <i32: 1> : tile<i32>
    %i2 = constant <i32: 2> : tile<i32>
    %i3 = constant <i32: 3> : tile<i32>
    %i4 = constant <i32: 4> : tile<i32>
    %rec, %t0 = load_view_tko weak %pv[%i4, %i0]
        : partition_view<tile=(1x8), tensor_view<?x5xi64, strides=[5,1]>>,
          tile<i32> -> tile<1x8xi64>, token
    %e0 = extract %rec[%i0, %i0] : tile<1x8xi64> -> tile<1x1xi64>
    %address = reshape %e0 : tile<1x1xi64> -> tile<i64>
    %e1 = extract %rec[%i0, %i1] : tile<1x8xi64> -> tile<1x1xi64>
    %r1 = reshape %e1 : tile<1x1xi64> -> tile<i64>
    %rows = trunci %r1 : tile<i64> -> tile<i32>
    %e2 = extract %rec[%i0, %i2] : tile<1x8xi64> -> tile<1x1xi64>
    %r2 = reshape %e2 : tile<1x1xi64> -> tile<i64>
    %columns = trunci %r2 : tile<i64> -> tile<i32>
    %e3 = extract %rec[%i0, %i3] : tile<1x8xi64> -> tile<1x1xi64>
    %r3 = reshape %e3 : tile<1x1xi64> -> tile<i64>
    %stride = trunci %r3 : tile<i64> -> tile<i32>
    %stride16 = assume div_by<16>, %stride : tile<i32>
    %p = int_to_ptr %address : tile<i64> -> tile<ptr<f32>>
    %ev = make_tensor_view %p, shape = [%rows, %columns], strides = [%stride16, 1]
        : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %epv = make_partition_view %ev : partition_view<tile=(4x4), tensor_view<?x?xf32, strides=[?,1]>>
    %x, %t1 = load_view_tko weak %epv[%i1, %i1]
        : partition_view<tile=(4x4), tensor_view<?x?xf32, strides=[?,1]>>,
          tile<i32> -> tile<4x4xf32>, token
    %one = constant <f32: 1.0> : tile<4x4xf32>
    %y = addf %x, %one : tile<4x4xf32>
    %t2 = store_view_tko weak %y, %epv[%i1, %i1] token = %t1
        : tile<4x4xf32>, partition_view<tile=(4x4), tensor_view<?x?xf32, strides=[?,1]>>,
          tile<i32> -> token
    %ov = make_tensor_view %out, shape = [%on], strides = [%os]
        : tile<i32> -> tensor_view<?xf32, strides=[?]>
    %opv = make_partition_view %ov : partition_view<tile=(16), tensor_view<?xf32, strides=[?]>>
    %flat = reshape %x : tile<4x4xf32> -> tile<16xf32>
    %t3 = store_view_tko weak %flat, %opv[%i0]
        : tile<16xf32>, partition_view<tile=(16), tensor_view<?xf32, strides=[?]>>,
          tile<i32> -> token
    return
  }
}
"""

# The records of a list of 1-D arrays ({address, extent, stride}) copied to %out as
# they are: what a runner passes.
RECORDS = """cuda_tile.module @m {
  entry @records(%list: tile<ptr<i64>>, %n: tile<i32>, %out: tile<ptr<i64>>, %m: tile<i32>) {
    %tv = make_tensor_view %list, shape = [%n, 3], strides = [3, 1]
        : tile<i32> -> tensor_view<?x3xi64, strides=[3,1]>
    %pv = make_partition_view %tv : partition_view<tile=(4x4), tensor_view<?x3xi64, strides=[3,1]>>
    %ov = make_tensor_view %out, shape = [%m, 3], strides = [3, 1]
        : tile<i32> -> tensor_view<?x3xi64, strides=[3,1]>
    %opv = make_partition_view %ov : partition_view<tile=(4x4), tensor_view<?x3xi64, strides=[3,1]>>
    %i0 = constant <i32: 0> : tile<i32>
    %r, %t0 = load_view_tko weak %pv[%i0, %i0]
        : partition_view<tile=(4x4), tensor_view<?x3xi64, strides=[3,1]>>,
          tile<i32> -> tile<4x4xi64>, token
    %t1 = store_view_tko weak %r, %opv[%i0, %i0] token = %t0
        : tile<4x4xi64>, partition_view<tile=(4x4), tensor_view<?x3xi64, strides=[3,1]>>,
          tile<i32> -> token
    return
  }
}
"""


def test_a_list_parameter_is_found_with_its_record_and_promises():
    entry = parse_text(LIST, "list.mlir").entries()[0]
    (param, lst), = list_parameters(entry).items()
    assert param is entry.regions[0].block.arguments[0]
    assert lst.record == 5 and lst.rank == 2 and lst.pointee.name == "f32"
    assert lst.tiles == [4, 4] and lst.divisors == [1, 1, 16, 1]  # rows, cols, strides
    assert lst.length == 5  # record 4 is read


def test_records_that_reach_no_int_to_ptr_are_an_array():
    module = parse_text(RECORDS, "records.mlir")
    assert list_parameters(module.entries()[0]) == {}
    _, args = make_inputs(module.entries()[0], np.random.default_rng(0))
    assert isinstance(args[0], np.ndarray) and args[0].dtype == np.int64


def test_make_inputs_passes_a_list_of_arrays_the_kernel_can_read():
    module = parse_text(LIST, "list.mlir")
    _, args = make_inputs(module.entries()[0], np.random.default_rng(0))
    elements, n, out = args[:3]
    assert isinstance(elements, ArrayList) and n == len(elements) == 5
    # two 4x4 tiles per dimension; rows 16 apart (div_by<16>): passed as flat memory
    assert elements.shapes == [(8, 8)] * 5 and elements.strides == [(16, 1)] * 5
    assert all(a.shape == (8 * 16,) and a.dtype == np.float32 for a in elements.arrays)
    assert len({a.tobytes() for a in elements.arrays}) == 5  # each its own contents
    got = copy_arguments(args)
    run(module, "k", 1, *got, debug=True, out=io.StringIO())
    fourth = np.lib.stride_tricks.as_strided(args[0].arrays[4], (8, 8), (64, 4))
    assert np.array_equal(got[2][:16], fourth[4:8, 4:8].reshape(16))  # read via record 4
    written = np.lib.stride_tricks.as_strided(got[0].arrays[4], (8, 8), (64, 4))
    assert np.array_equal(written[4:8, 4:8], fourth[4:8, 4:8] + 1)  # and written through it
    changed = [not np.array_equal(a, b) for a, b in zip(output_arrays(got), output_arrays(args))]
    assert changed == [False, False, False, False, True, True]  # elements 0-4, then %out


def test_array_list_records_hold_address_shape_and_strides():
    a, b = np.zeros((2, 3), np.float32), np.zeros(40, np.int8)
    lst = ArrayList([a, b.reshape(5, 8)], strides=[(3, 1), (1, 5)])
    assert lst.record_length == 5 and len(lst) == 2
    records = lst.records([0x1000, 0x1_0000_0000])
    assert records.dtype == np.int64
    assert records.tolist() == [[0x1000, 2, 3, 3, 1], [0x1_0000_0000, 5, 8, 1, 5]]
    copied = lst.copy()
    copied.arrays[0][0, 0] = 1
    assert a[0, 0] == 0 and copied.shapes == lst.shapes and copied.strides == lst.strides
    with pytest.raises(ValueError, match="one rank"):
        ArrayList([np.zeros(3), np.zeros((3, 3))])


# cuTile's Array.slice in a loop (test_token_order array_slice_for_loop): slice %i is
# elements [64 %i, 64 %i + 64) of %x, for %i below %n (3): %x must hold them all, though
# no view is made of %x itself (its array was 64 elements: the first slice ran past it).
SLICES = """cuda_tile.module @m {
  entry @k(%x: tile<ptr<i32>>, %xn: tile<i32>, %xs: tile<i32>, %n: tile<i32>) {
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %c64 = constant <i32: 64> : tile<i32>
    %one = constant <i32: 1> : tile<64xi32>
    %t = make_token : token
    %r = for %i in (%c0 to %n, step %c1) : tile<i32> iter_values(%tok = %t) -> (token) {
      %start = muli %i, %c64 : tile<i32>
      %s64 = exti %start signed : tile<i32> -> tile<i64>
      %p = offset %x, %s64 : tile<ptr<i32>>, tile<i64> -> tile<ptr<i32>>
      %v = make_tensor_view %p, shape = [64], strides = [1] : tensor_view<64xi32, strides=[1]>
      %pv = make_partition_view %v : partition_view<tile=(64), tensor_view<64xi32, strides=[1]>>
      %a, %t1 = load_view_tko weak %pv[%c0] token = %tok
          : partition_view<tile=(64), tensor_view<64xi32, strides=[1]>>,
            tile<i32> -> tile<64xi32>, token
      %b = addi %a, %one : tile<64xi32>
      %t2 = store_view_tko weak %b, %pv[%c0] token = %t1
          : tile<64xi32>, partition_view<tile=(64), tensor_view<64xi32, strides=[1]>>,
            tile<i32> -> token
      continue %t2 : token
    }
    return
  }
}
"""


def test_a_sliced_array_holds_every_slice_the_kernel_reaches():
    module = parse_text(SLICES, "slices.mlir")
    entry = module.entries()[0]
    x_param, *_, n_param = entry.regions[0].block.arguments
    # the last slice starts at 2 * 64; two tiles of its view reach 128 further
    assert sliced_reach(entry, {n_param: 3}) == {x_param: 256}
    assert sliced_reach(entry, {}) == {}  # a loop bound not known: nothing claimed
    _, args = make_inputs(entry, np.random.default_rng(0))
    x, xn, xs, n = args
    assert x.shape == (256,) and (xn, xs, n) == (256, 1, 3)
    got = copy_arguments(args)
    run(module, "k", 1, *got, out=io.StringIO())  # every slice inside %x
    assert np.array_equal(got[0], x + np.repeat([1, 0], [192, 64]))
