"""scan on cuTile's own scan test kernels (corpus/cutile-tests) against NumPy's cumsum and
cumprod: f32 sums, wrapping i16 products, bf16 products, a directed rounding mode."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from nanotile.interp import cutile_args, run

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "cutile-tests"
RNG = np.random.default_rng(21)


def launch(name: str, grid: int, *args) -> None:
    path = CORPUS / f"test_scan__{name}.tileirbc"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    run(str(path), "kernel" if "make_scan" in name else name.split("__")[0], grid,
        *cutile_args(*args))


def test_cumsum_axis1_f32():
    x = RNG.standard_normal((64, 32)).astype(np.float32)
    y = np.zeros_like(x)
    launch("cumsum_axis1__f32x2_f32x2_F_32_32", 2, x, y)
    np.testing.assert_allclose(y, np.cumsum(x.astype(np.float64), axis=1), rtol=1e-5,
                               atol=1e-5)


def test_cumprod_axis0_i16_wraps():
    x = RNG.integers(-7, 8, (32, 32)).astype(np.int16)
    y = np.zeros_like(x)
    launch("cumprod_axis0__i16x2_i16x2_F_16_32", 2, x, y)
    want = np.concatenate([np.cumprod(x[:16], axis=0, dtype=np.int16),
                           np.cumprod(x[16:], axis=0, dtype=np.int16)])
    np.testing.assert_array_equal(y, want)


def test_cumprod_axis0_bf16():
    x = RNG.uniform(0.5, 1.5, (16, 32)).astype(ml_dtypes.bfloat16)
    y = np.zeros_like(x)
    launch("cumprod_axis0__bf16x2_bf16x2_F_16_32", 1, x, y)
    want = np.cumprod(x.astype(np.float64), axis=0)
    np.testing.assert_allclose(y.astype(np.float64), want, rtol=16 * 2**-8)


def test_cumsum_round_toward_zero_f32():
    x = RNG.standard_normal((16, 32)).astype(np.float32)
    y = np.zeros_like(x)
    launch("make_scan_rounding_mode.kernel-RZ-cumsum__f32x2_f32x2_16_32", 1, x, y)
    exact = np.cumsum(x.astype(np.float64), axis=0)
    np.testing.assert_allclose(y, exact, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(y[0], x[0])  # identity 0 + x0 is exact in any mode
