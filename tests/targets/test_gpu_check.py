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
