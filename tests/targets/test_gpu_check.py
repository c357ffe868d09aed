"""bench/gpu_check.py's comparisons, which decide what a GPU run reports, checked without
a GPU: the bits of ml_dtypes arrays survive the .npz, the emulator column is bit for bit,
and the interpreter column keeps the case's tolerance. ptxas is found where a user puts it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import ml_dtypes
import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _gpu_check():
    spec = importlib.util.spec_from_file_location("gpu_check", ROOT / "bench" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ml_dtypes_arrays_travel_as_bits(tmp_path):
    check = _gpu_check()
    for dtype in (ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fn, ml_dtypes.bfloat16):
        array = np.array([1.5, -2.0, np.nan], dtype)
        np.savez(tmp_path / "a.npz", a=check._storable(array))
        back = check._typed(np.load(tmp_path / "a.npz")["a"], {"dtype": array.dtype.name})
        assert back.dtype == array.dtype
        assert back.view(np.uint8).tobytes() == array.view(np.uint8).tobytes()


def test_emulator_column_is_bit_for_bit():
    check = _gpu_check()
    a = np.array([1.0, 2.0, np.nan], np.float32)
    assert check._emulator_verdict([(a, a.copy())]) == "emu ok"
    b = a.copy()
    b[1] = np.nextafter(np.float32(2.0), np.float32(3.0))
    assert check._emulator_verdict([(a, b)]) == "emu 1 differ"
    assert check._emulator_verdict([]) == ""


def test_interpreter_column_keeps_the_tolerance():
    check = _gpu_check()
    got = np.array([1.0, 2.0], np.float32)
    near = np.array([1.0, 2.0 + 1e-6], np.float32)
    assert check._compare([(got, near)], 1e-5, 1e-5).startswith("ok (max")
    assert check._compare([(got, near)], 0.0, 0.0) == "MISMATCH 1/2 elements"
    assert check._compare([(got, got.copy())], 0.0, 0.0) == "ok (bit-identical)"


def test_ptxas_from_the_environment(monkeypatch, tmp_path):
    from nanotile.targets.compile import ptxas_path

    fake = tmp_path / "ptxas"
    monkeypatch.setenv("NANOTILE_PTXAS", str(fake))
    assert ptxas_path() == fake


def test_tensor_map_encoding_arguments():
    """The driver's cuTensorMapEncodeTiled gets dimension 0 innermost, strides in bytes for
    dimensions 1 and up, and for a vector still a one-entry stride array (an empty list
    reaches it as a null pointer: CUDA_ERROR_INVALID_VALUE on an H200)."""
    from types import SimpleNamespace

    check = _gpu_check()
    calls = []

    class Enum:
        def __getattr__(self, name):
            return name

    driver = SimpleNamespace(
        cuuint64_t=int, cuuint32_t=int, CUtensorMapDataType=Enum(),
        CUtensorMapInterleave=Enum(), CUtensorMapSwizzle=Enum(),
        CUtensorMapL2promotion=Enum(), CUtensorMapFloatOOBfill=Enum(),
        cuTensorMapEncodeTiled=lambda *a: calls.append(a) or (0, "map"))
    matrix = {"element": "f16", "dims": [200, 96], "strides": [104, 1], "box": [128, 32],
              "swizzle": 64}
    assert check.encode_tensor_map(driver, lambda r: r[1], 4096, matrix) == "map"
    kind, rank, base, dims, strides, box, steps, _, swizzle, _, _ = calls[-1]
    assert (kind, rank, base, dims, strides, box, steps, swizzle) == (
        "CU_TENSOR_MAP_DATA_TYPE_FLOAT16", 2, 4096, [96, 200], [208], [32, 128], [1, 1],
        "CU_TENSOR_MAP_SWIZZLE_64B")
    vector = {"element": "f32", "dims": [1000], "strides": [1], "box": [256], "swizzle": 0}
    check.encode_tensor_map(driver, lambda r: r[1], 4096, vector)
    assert calls[-1][3:6] == ([1000], [4000], [256])
    assert calls[-1][8] == "CU_TENSOR_MAP_SWIZZLE_NONE"


def test_fp8_products_compared_within_the_accumulation():
    """An f8 product is compared within 2^-10 * (|A| @ |B|) (Hopper's wgmma sums FP8
    products with about 13 bits): the rounding of such an accumulator passes, a product of
    the wrong operand layout does not, and the other outputs stay bit for bit."""
    check = _gpu_check()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((32, 64)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((64, 16)).astype(ml_dtypes.float8_e4m3fn)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = 2.0 ** -10 * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    rounded = (exact + 0.5 * bound * rng.choice([-1, 1], exact.shape)).astype(np.float32)
    want = exact.astype(np.float32)
    verdict = check._within_fp8_accumulation([(a, a.copy()), (rounded, want)], a, b)
    assert verdict.startswith("ok (within FP8 accumulation)"), verdict
    wrong = (a.astype(np.float64)[:, ::-1] @ b.astype(np.float64)).astype(np.float32)
    assert check._within_fp8_accumulation([(wrong, want)], a, b).startswith("MISMATCH")
    changed = a.copy()
    changed[0, 0] = ml_dtypes.float8_e4m3fn(7.0)
    assert check._within_fp8_accumulation([(changed, a), (rounded, want)], a, b) \
        .startswith("MISMATCH")


def test_fp8_products_found_in_the_kernel():
    """The manifest names A and B of a kernel whose mmaf multiplies f8 tiles, and none
    for other kernels."""
    from nanotile.ir.parser import parse_text

    from .test_mma import mma_kernel

    check = _gpu_check()
    arrays = [np.zeros((64, 32), ml_dtypes.float8_e4m3fn), np.zeros((32, 64),
              ml_dtypes.float8_e4m3fn), np.zeros((64, 64), np.float32),
              np.zeros((64, 64), np.float32)]
    fp8 = parse_text(mma_kernel(0, 64, 64, 32, "f8E4M3FN", "f32"), "<k>")
    assert check._fp8_product_operands(fp8, arrays) == [0, 1]
    f16 = parse_text(mma_kernel(0, 64, 64, 32, "f16", "f32"), "<k>")
    assert check._fp8_product_operands(f16, arrays) == []
