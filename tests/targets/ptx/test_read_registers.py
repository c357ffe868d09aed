"""read_registers: select-instructions writes only the registers some instruction reads.

A 2-D copy through views of run-time shape stores vectors of four f32 elements, each
under one mask: the masks (and pointers) of the other three elements of each vector are
never read, so the analysis leaves them out, selection does not compute them, and the
first ptx-dead-code finds no mask left to remove. The kernel still computes what the
interpreter computes, in the emulator, for both targets (edges of the array included)."""

from __future__ import annotations

import io

import numpy as np
import pytest

import nanotile
from nanotile.ir.parser import parse_text
from nanotile.passes.manager import PipelineRun, RunOptions
from nanotile.passes.pipelines import default_pipeline
from nanotile.passes.registry import parse_pipeline
from nanotile.targets.ptx.read_registers import read_registers
from nanotile.targets.ptx.select_instructions import Selection
from nanotile.targets.ptx.vectorize_memory import vector_of
from nanotile.targets.target import get_target

VIEW = "tensor_view<?x?xf32, strides=[?,1]>"
LOADS = f"partition_view<tile=(64x64), padding_value = zero, {VIEW}>"
STORES = f"partition_view<tile=(64x64), {VIEW}>"
COPY_2D = f"""
entry @copy2d(%arg0: tile<ptr<f32>>, %arg1: tile<i32>, %arg2: tile<i32>,
              %arg3: tile<ptr<f32>>) {{
  %0 = make_token : token
  %1 = assume div_by<16>, %arg0 : tile<ptr<f32>>
  %2 = assume div_by<16>, %arg3 : tile<ptr<f32>>
  %3 = assume bounded<0, ?>, %arg1 : tile<i32>
  %4 = assume bounded<0, ?>, %arg2 : tile<i32>
  %5 = assume div_by<4>, %4 : tile<i32>
  %6 = make_tensor_view %1, shape = [%3, %5], strides = [%5, 1] : tile<i32> -> {VIEW}
  %7 = make_tensor_view %2, shape = [%3, %5], strides = [%5, 1] : tile<i32> -> {VIEW}
  %8, %9, %10 = get_tile_block_id : tile<i32>
  %11 = make_partition_view %6 : {LOADS}
  %12, %13 = load_view_tko weak %11[%8, %9] token = %0
      : {LOADS}, tile<i32> -> tile<64x64xf32>, token
  %14 = addf %12, %12 : tile<64x64xf32>
  %15 = make_partition_view %7 : {STORES}
  %16 = store_view_tko weak %14, %15[%8, %9] token = %0
      : tile<64x64xf32>, {STORES}, tile<i32> -> token
  return
}}
"""


def _until(gpu: str, last: str):
    """The copy kernel through the default pipeline up to the first pass ``last``."""
    module = parse_text(COPY_2D, "copy2d.mlir")
    steps = parse_pipeline(default_pipeline(gpu))
    upto = [s.name for s in steps].index(last) + 1
    PipelineRun(RunOptions(), io.StringIO()).run(module, steps[:upto])
    return module


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_a_vector_store_reads_the_mask_and_pointer_of_each_vector_s_first_element(gpu):
    module = _until(gpu, "pipeline-k-loops")
    entry = module.entries()[0]
    selection = Selection(entry, get_target(gpu))
    reads = read_registers(entry, selection.count)
    store = next(op for op in entry.walk() if op.name == "store_ptr_tko")
    width = vector_of(store)
    assert width == 4
    groups = store.operand_groups()
    pointers, values, mask = groups[0][0], groups[1][0], groups[2][0]
    registers = selection.count(values.type)
    assert reads[pointers] == set(range(0, registers, width))
    assert reads[mask] == set(range(0, registers, width))
    assert values not in reads  # every value register is stored


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_selection_writes_no_mask_that_dead_code_removes(gpu):
    selected = _until(gpu, "select-instructions").ptx.render()
    assert "%unread" not in selected
    kept = _until(gpu, "ptx-dead-code").ptx.render()  # the first one
    for mnemonic in ("and.pred", "setp.lt.u32", "add.s64"):
        assert selected.count(mnemonic) == kept.count(mnemonic), mnemonic
    assert kept.count("st.global.v4.f32") == kept.count("ld.global.v4.f32") > 0


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_the_copy_computes_what_the_interpreter_computes(gpu, tmp_path):
    path = tmp_path / "copy2d.mlir"
    path.write_text(COPY_2D)
    rows, columns = 100, 180  # neither a multiple of 64: the masks matter
    source = np.random.default_rng(5).standard_normal((rows, columns)).astype(np.float32)
    grid = ((rows + 63) // 64, (columns + 63) // 64, 1)
    want, got = np.zeros_like(source), np.full_like(source, 7.0)
    nanotile.run(str(path), "copy2d", grid, source, np.int32(rows), np.int32(columns), want)
    nanotile.run(str(path), "copy2d", grid, source, np.int32(rows), np.int32(columns), got,
                 device="emulator", gpu_name=gpu)
    np.testing.assert_array_equal(want, 2 * source)
    np.testing.assert_array_equal(got, want)
