"""bench/gpu_check.py's comparisons, which decide what a GPU run reports, checked without
a GPU: the bits of ml_dtypes arrays survive the .npz, the emulator column is bit for bit,
and the interpreter column keeps the case's tolerance. ptxas is found where a user puts it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import ml_dtypes
import numpy as np

from nanotile.targets.compile import compile_to_ptx

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


def _mma_module(size: int, kind: str):
    """tests/targets/test_mma.py's kernel ``k``: out = x0 @ x1 + x2, size x size tiles."""
    from nanotile.ir.parser import parse_text

    from .test_mma import mma_kernel

    return parse_text(mma_kernel(0, size, size, size, kind, "f64" if kind == "f64" else "f32"),
                      "<k>")


def _fp8_case():
    """An FP8 matmul tile for sm_90 (wgmma keeps 13 bits of its sums) on random inputs:
    (module, PTX, arguments)."""
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((64, 64)).astype(ml_dtypes.float8_e4m3fn),
            rng.standard_normal((64, 64)).astype(ml_dtypes.float8_e4m3fn),
            rng.standard_normal((64, 64)).astype(np.float32), np.zeros((64, 64), np.float32)]
    return _mma_module(64, "f8E4M3FN"), compile_to_ptx(_mma_module(64, "f8E4M3FN"), "sm_90"), args


def test_legal_alternatives_explain_the_device_and_nothing_else():
    """A device result off the interpreter's exact sums is "ok (tensor-core sums...)" when
    it is the interpreter summing as wgmma (here: the emulator, which matches the H200 on
    such tiles); one wrong element is a MISMATCH; a kernel without reductions or tensor
    cores has no alternatives."""
    from nanotile import run
    from nanotile.ptxemu import run_ptx

    check = _gpu_check()
    module, ptx, args = _fp8_case()
    alternatives = check._legal_alternatives(module, "k", (1,), args, ptx)
    assert [label for label, _ in alternatives] == ["tensor-core sums"]
    want = [a.copy() for a in args]
    run(module, "k", (1,), *want)
    device = [a.copy() for a in args]
    run_ptx(ptx, "k", grid=(1,), args=device)
    case = {"args": [{"dtype": a.dtype.name} for a in args], "outputs": [3],
            "rtol": 1e-5, "atol": 1e-5, "alternatives": ["tensor-core sums"]}
    data = {"want3": want[3], "alt0_3": alternatives[0][1][3]}
    assert check._compare([(device[3], want[3])], 1e-5, 1e-5).startswith("MISMATCH")
    assert check._interpreter_verdict(case, data, {3: device[3]}) \
        .startswith("ok (tensor-core sums: bit-identical)")
    wrong = device[3].copy()
    wrong[1, 2] += 1.0
    assert check._interpreter_verdict(case, data, {3: wrong}).startswith("MISMATCH")
    f64 = _mma_module(16, "f64")
    assert check._legal_alternatives(f64, "k", (1,), [np.zeros((16, 16))] * 4,
                                     compile_to_ptx(_mma_module(16, "f64"), "sm_90")) == []
