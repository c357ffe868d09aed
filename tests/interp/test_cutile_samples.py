"""cuTile's sample kernels (corpus/cutile-tests) against NumPy: layer_norm_fwd (a row
loop over tiles of 1024 with zero padding, masked variance, per-row Mean and Rstd, on
rows longer than one tile and not a multiple of it) and the fp8 batch_matmul (3-D views,
f8E4M3FN / f8E5M2 operands accumulated in f32)."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from nanotile.interp import cutile_args, run

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "cutile-tests"
NAME = "kernels_layer_norm__layer_norm_fwd__"


@pytest.mark.parametrize("sig,dtype,rtol", [
    ("f32x2_f32x1_f32x1_f32x2_f32x1_f32x1_sf32_1024", np.float32, 1e-4),
    ("bf16x2_bf16x1_bf16x1_bf16x2_f32x1_f32x1_sf32_1024", ml_dtypes.bfloat16, 2**-7)])
@pytest.mark.parametrize("m,n", [(3, 2500), (2, 1024)])
def test_layer_norm_fwd(sig, dtype, rtol, m, n):
    path = CORPUS / f"{NAME}{sig}.tileirbc"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    rng = np.random.default_rng(m * n)
    x = (rng.standard_normal((m, n)) * 2 + 0.5).astype(dtype)
    w = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    y = np.zeros((m, n), dtype)
    mean = np.zeros(m, np.float32)
    rstd = np.zeros(m, np.float32)
    run(str(path), "layer_norm_fwd", m, *cutile_args(x, w, b, y, mean, rstd, np.float32(1e-5)))
    xf = x.astype(np.float64)
    mu = xf.mean(axis=1)
    r = 1 / np.sqrt(((xf - mu[:, None]) ** 2).mean(axis=1) + 1e-5)
    np.testing.assert_allclose(mean, mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd, r, rtol=1e-5)
    want = (xf - mu[:, None]) * r[:, None] * w.astype(np.float64) + b.astype(np.float64)
    np.testing.assert_allclose(y.astype(np.float64), want, rtol=rtol, atol=4 * rtol)


@pytest.mark.parametrize("f8", ["f8_e4m3fn", "f8_e5m2"])
def test_batch_matmul_fp8(f8):
    # cuTile's batch_matmul sample: grid (batch, M/256, N/256), fp8 operands, f32 result.
    path = CORPUS / f"kernels_matmul__batch_matmul_kernel@ctas1__{f8}x3_{f8}x3_f32x3_256_256_128.tileirbc"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    dtype = {"f8_e4m3fn": ml_dtypes.float8_e4m3fn, "f8_e5m2": ml_dtypes.float8_e5m2}[f8]
    rng = np.random.default_rng(4)
    batch, m, k, n = 2, 256, 200, 300  # K and N not multiples of the tiles
    a = rng.standard_normal((batch, m, k)).astype(dtype)
    b = rng.standard_normal((batch, k, n)).astype(dtype)
    c = np.zeros((batch, m, n), np.float32)
    run(str(path), "batch_matmul_kernel", (batch, 1, 2), *cutile_args(a, b, c))
    want = a.astype(np.float64) @ b.astype(np.float64)  # fp8 products are exact
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)


def test_split_k_matmul_with_locks():
    # cuTile's split-K sample: tf32 mma, 4 K-slices per output tile combined under a
    # lock taken with atomic_cas and released with atomic xchg, plus a per-tile counter.
    from nanotile.interp.dtypes import round_tf32

    path = CORPUS / ("kernels_matmul__matmul_split_k_kernel__f32x2_f32x2_f32x2_i32x1_i32x1_"
                     "32_64_256_4.3f7d93.tileirbc")
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    rng = np.random.default_rng(8)
    m, n, k = 64, 128, 1000
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = np.zeros((m, n), np.float32)
    locks = np.zeros(4, np.int32)
    counts = np.zeros(4, np.int32)
    run(str(path), "matmul_split_k_kernel", (4, 4), *cutile_args(a, b, c, locks, counts))
    want = round_tf32(a).astype(np.float64) @ round_tf32(b).astype(np.float64)
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-3)
    assert locks.tolist() == [0] * 4 and counts.tolist() == [0] * 4  # released, reset
