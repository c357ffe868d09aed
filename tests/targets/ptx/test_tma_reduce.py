"""Atomic view reductions by TMA (select-tma-stores: an atomic_red_view_tko becomes a
tma_store with a ``reduction``, which select-instructions writes as
cp.reduce.async.bulk.tensor): the PTX has the instruction, and the emulator, running it
in checking mode, computes what the interpreter computes from the Tile IR, on cutile-tests
kernels (tileiras compiles each of these to UTMAREDG, 128x128 i64 included); a tile too
large to stage keeps its atomics. The emulator's reduction itself is checked against NumPy."""

from __future__ import annotations

import copy
import re

import numpy as np
import pytest

import nanotile
from nanotile.ir.tensor_maps import tensor_maps
from nanotile.targets.compile import compile_to_ptx
from tests.targets.corpus_cases import cutile_tests_case

ATOMIC = "test_tiled_view__make_tv_atomic_kernel.kernel-{mode}_method-None__{types}_128_128"
GLOBAL_ATOMIC = re.compile(r"\b(?:atom|red)\.[\w.:]*global")  # atom.relaxed.gpu.global...
REDUCED = [("add", "f16x2_i32x2"), ("add", "f32x2_i32x2"), ("add", "bf16x2_i32x2"),
           ("xor", "i32x2_i32x2"), ("and", "i32x2_i32x2"), ("max", "i32x2_i32x2"),
           ("min", "i32x2_i32x2"), ("or", "i64x2_i64x2")]


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
@pytest.mark.parametrize("mode,types", REDUCED)
def test_atomic_views_reduce_by_tma_as_the_interpreter_does(mode, types, gpu):
    from nanotile.compare import first_difference

    module, name, grid, args = cutile_tests_case(ATOMIC.format(mode=mode, types=types))
    ptx = compile_to_ptx(copy.deepcopy(module), gpu)
    assert "cp.reduce.async.bulk.tensor.2d.global.shared::cta." in ptx
    assert not GLOBAL_ATOMIC.search(ptx)
    [(_, spec)] = tensor_maps(ptx, name)
    assert spec.unsigned == (mode in ("and", "or", "xor"))  # as the hardware needs
    want = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    nanotile.run(module, name, grid, *want)
    nanotile.run(module, name, grid, *got, device="emulator", gpu_name=gpu)
    assert first_difference(got, want, gpu) is None


OVER_THE_STAGING_LIMIT = """cuda_tile.module @m {
  entry @kernel(%base: tile<ptr<i64>>, %rows: tile<i32>) {
    %0 = make_token : token
    %aligned = assume div_by<16>, %base : tile<ptr<i64>>
    %view = make_tensor_view %aligned, shape = [%rows, 128], strides = [128, 1]
      : tile<i32> -> tensor_view<?x128xi64, strides=[128,1]>
    %part = make_partition_view %view
      : partition_view<tile=(SHAPE), tensor_view<?x128xi64, strides=[128,1]>>
    %ones = constant <i64: 1> : tile<SHAPExi64>
    %zero = constant <i32: 0> : tile<i32>
    %1 = atomic_red_view_tko relaxed device %part[%zero, %zero], or, %ones token = %0
      : tile<SHAPExi64>, partition_view<tile=(SHAPE), tensor_view<?x128xi64,
      strides=[128,1]>>, tile<i32> -> token
    return
  }
}"""


@pytest.mark.parametrize("shape,staged", [("128x128", True), ("256x128", False)])
def test_a_tile_over_the_staging_limit_keeps_its_atomics(shape, staged):
    """select-tma-stores stages an atomic view's tile of up to 128 KB (128x128 i64, as
    tileiras); 256x128 i64 (256 KB) keeps its atomics."""
    module = nanotile.parse(OVER_THE_STAGING_LIMIT.replace("SHAPE", shape), "k.mlir")
    ptx = compile_to_ptx(module, "sm_90")
    assert ("cp.reduce" in ptx) == staged
    assert bool(GLOBAL_ATOMIC.search(ptx)) != staged


@pytest.mark.parametrize("element,operation", [("f32", "add"), ("f16", "add"),
                                               ("bf16", "add"), ("i32", "add"),
                                               ("i32", "xor"), ("u64", "or"),
                                               ("u64", "and"), ("i32", "max"),
                                               ("i64", "min"), ("u32", "max"),
                                               ("u64", "min")])
def test_the_emulators_reduction_is_numpys(element, operation):
    """tensormap._combine against NumPy: floats rounded once to the element type,
    integers wrapping, bits combined."""
    import ml_dtypes

    from nanotile.ptxemu.tensormap import _combine

    rng = np.random.default_rng(7)
    dtype = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16,
             "i32": np.int32, "i64": np.int64, "u32": np.uint32, "u64": np.uint64}[element]
    unsigned = {2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(dtype).itemsize]
    if element.startswith(("i", "u")):
        info = np.iinfo(dtype)
        old = rng.integers(info.min, info.max, 1000, dtype=dtype, endpoint=True)
        new = rng.integers(info.min, info.max, 1000, dtype=dtype, endpoint=True)
        with np.errstate(over="ignore"):
            want = {"add": old + new, "xor": old ^ new, "or": old | new,
                    "and": old & new, "max": np.maximum(old, new),
                    "min": np.minimum(old, new)}[operation]
    else:
        old = (rng.standard_normal(1000) * 100).astype(dtype)
        new = (rng.standard_normal(1000) * 100).astype(dtype)
        want = (old.astype(np.float64) + new.astype(np.float64)).astype(dtype)
    got = _combine(old.view(unsigned), new.view(unsigned), element, operation)
    np.testing.assert_array_equal(got, want.view(unsigned))


@pytest.mark.parametrize("operation", ["and", "or", "xor"])
def test_the_emulator_refuses_bitwise_reductions_through_a_signed_64_bit_map(operation):
    """An H200 stops such a kernel (CUDA_ERROR_ILLEGAL_INSTRUCTION; through a UINT64 map
    the same reduction runs), so the emulator does too rather than compute a result."""
    from nanotile.ptxemu.errors import MemoryFault
    from nanotile.ptxemu.tensormap import _combine

    bits = np.arange(4, dtype=np.uint64)
    with pytest.raises(MemoryFault, match="INT64"):
        _combine(bits, bits, "i64", operation)
