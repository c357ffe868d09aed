"""Write-after-read across threads: a tile-block load followed (by token) by a store to
the same memory must not let one thread's store overwrite an element another thread of
the CTA has yet to load. cuTile's token_order tests reverse a 1024-element array in place
three times inside a loop (load a[1023-i], store a[i]); the result must be the reversed
array, as the interpreter (and the token chain load -> join -> store) says.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import nanotile
from nanotile.ir.parser import parse_text
from nanotile.targets.compile import compile_to_ptx

ROOT = Path(__file__).resolve().parents[2]
TESTS_CORPUS = ROOT / ".." / "shared" / "corpus" / "cutile-tests"
KERNELS = ["serialized_for_loop", "serialized_while_loop"]


def _path(kernel: str) -> Path:
    path = TESTS_CORPUS / f"test_token_order__TestMemoryBehavior.{kernel}__i32x1_1024.tileirbc"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    return path


@pytest.mark.parametrize("target", ["sm_90", "sm_100"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_in_place_reverse_matches_interpreter(kernel, target):
    path = _path(kernel)
    want, got = np.zeros(1024, np.int32), np.zeros(1024, np.int32)
    nanotile.run(str(path), kernel, (1, 1, 1), want, np.int32(1024), np.int32(0))
    nanotile.run(str(path), kernel, (1, 1, 1), got, np.int32(1024), np.int32(0),
                 device="emulator", gpu_name=target)
    np.testing.assert_array_equal(want, np.arange(1023, -1, -1, dtype=np.int32))
    np.testing.assert_array_equal(got, want)


def test_barrier_between_load_and_store():
    """The PTX separates a load from a later store by a CTA barrier."""
    text = """
entry @k(%p: tile<ptr<i32>>) {
  %t0 = make_token : token
  %tv = make_tensor_view %p, shape = [128], strides = [1] : tensor_view<128xi32, strides=[1]>
  %pv = make_partition_view %tv : partition_view<tile=(128), tensor_view<128xi32, strides=[1]>>
  %c0 = constant <i32: 0> : tile<i32>
  %v, %t1 = load_view_tko weak %pv[%c0] token = %t0 : partition_view<tile=(128), tensor_view<128xi32, strides=[1]>>, tile<i32> -> tile<128xi32>, token
  %w = addi %v, %v : tile<128xi32>
  %t2 = store_view_tko weak %w, %pv[%c0] token = %t1 : tile<128xi32>, partition_view<tile=(128), tensor_view<128xi32, strides=[1]>>, tile<i32> -> token
  return
}
"""
    ptx = compile_to_ptx(parse_text(text, "<war>"), "sm_90")
    last_ld = max(m.start() for m in re.finditer(r"\bld\.", ptx))
    first_st = min(m.start() for m in re.finditer(r"\bst\.", ptx))
    assert last_ld < first_st
    assert "bar.sync" in ptx[last_ld:first_st]
