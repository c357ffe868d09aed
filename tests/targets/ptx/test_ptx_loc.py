"""PTX ``.loc``/``.file`` lines: each instruction maps back to the Tile IR op it was
selected from (the input's lines for text without loc(...)); ptxas takes them, the
emulator ignores them, the PTX parser reads them back, and --no-ptx-loc leaves them out."""

from __future__ import annotations

import re

import numpy as np
import pytest

from nanotile.driver import main
from nanotile.loader import load_file
from nanotile.targets.compile import assemble, compile_to_ptx, ptxas_path
from nanotile.targets.ptx.ir import parse_ptx_program

KERNEL = """\
entry @scale(%x: tile<ptr<f32>>, %y: tile<ptr<f32>>, %n: tile<i32>) {
  %tv = make_tensor_view %x, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
  %pv = make_partition_view %tv : partition_view<tile=(128), tensor_view<?xf32, strides=[1]>>
  %b, %bb, %bc = get_tile_block_id : tile<i32>
  %t, %tok = load_view_tko weak %pv[%b] : partition_view<tile=(128), tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<128xf32>, token
  %s = addf %t, %t rounding<nearest_even> : tile<128xf32>
  %uv = make_tensor_view %y, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
  %qv = make_partition_view %uv : partition_view<tile=(128), tensor_view<?xf32, strides=[1]>>
  %w = store_view_tko weak %s, %qv[%b] : tile<128xf32>, partition_view<tile=(128), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
  return
}
"""
LOC = re.compile(r"^\t\.loc\t1 (\d+) (\d+)$", re.MULTILINE)


@pytest.fixture
def kernel(tmp_path):
    path = tmp_path / "kernel.mlir"
    path.write_text(KERNEL)
    return path


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_loc_lines_name_the_file_and_the_ops_lines(kernel, gpu):
    ptx = compile_to_ptx(load_file(str(kernel)), gpu)
    assert ptx.rstrip().endswith(f'.file\t1 "{kernel}"')
    lines = {int(line) for line, _ in LOC.findall(ptx)}
    # the entry (parameters), the block id, the load, the addf and the store
    assert {1, 4, 5, 6, 9} <= lines <= set(range(1, 10))
    body = ptx.split(".loc\t1 6 ", 1)[1].split(".loc", 1)[0]
    assert "add.rn.f32" in body or "add.f32" in body  # the addf's instruction follows it
    assert parse_ptx_program(ptx).render() == ptx  # read back: positions kept
    if ptxas_path() is None:
        pytest.skip("ptxas not installed")
    assemble(ptx, gpu)


def test_emulator_results_unchanged_and_no_ptx_loc(kernel, tmp_path):
    from nanotile.ptxemu import run_ptx

    with_loc = compile_to_ptx(load_file(str(kernel)), "sm_90")
    out = tmp_path / "k.ptx"
    assert main([str(kernel), "--emit=ptx", "--gpu-name=sm_90", "--no-ptx-loc",
                 "-o", str(out)]) == 0
    without = out.read_text()
    assert ".loc" not in without and ".file" not in without
    assert re.sub(r"^\t\.(loc|file)\t.*\n", "", with_loc, flags=re.MULTILINE) == without
    n = 200
    x = np.arange(n, dtype=np.float32)
    results = []
    for ptx in (with_loc, without):
        y = np.zeros(n, np.float32)
        run_ptx(ptx, "scale", (2, 1, 1), args=[x, y, np.int32(n)])
        results.append(y)
    np.testing.assert_array_equal(results[0], 2 * x)
    np.testing.assert_array_equal(results[1], 2 * x)


def test_no_positions_no_loc_lines():
    from pathlib import Path

    axpy = Path(__file__).resolve().parents[3] / "examples" / "axpy.tileirbc"
    ptx = compile_to_ptx(load_file(str(axpy)), "sm_90")  # bytecode without debug info
    assert ".loc" not in ptx and ".file" not in ptx
