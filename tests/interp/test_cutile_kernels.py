"""The eleven cuTile kernels of ../shared/corpus/cutile, run by the interpreter on random
inputs of several sizes (some not multiples of the tile) and compared with NumPy
versions written from kernels.py.

Tolerances: exact for data movement and integer kernels; f32 elementwise kernels 1e-6
relative; softmax/layernorm 1e-5 (reduction order); results stored as f16/bf16 are allowed
one unit in the last place of that type (rtol 2**-10 for f16, 2**-7 for bf16), with an
absolute floor for values near zero that accumulated rounding error.

Each kernel runs from its bytecode (.tileirbc) and, when the text parser exists, from its
tileirdisasm text (.mlir) too.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from nanotile.interp import cutile_args, run
from tests.shared_corpus import missing_reason

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "cutile"
RNG = np.random.default_rng(1234)


FORMATS = ["tileirbc", "mlir"]


def kernel_path(name: str, fmt: str) -> Path:
    path = CORPUS / f"{name}.{fmt}"
    if not path.exists():
        pytest.skip(missing_reason(path))
    return path


def launch(name: str, fmt: str, grid, *args) -> None:
    run(str(kernel_path(name, fmt)), name, grid, *cutile_args(*args))


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("n", [1024, 3000, 5])
def test_vector_add(fmt, n):
    a, b = RNG.standard_normal((2, n), dtype=np.float32)
    c = np.zeros(n, np.float32)
    launch("vector_add", fmt, cdiv(n, 1024), a, b, c)
    np.testing.assert_array_equal(c, a + b)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("n", [256, 1000])
def test_scaled_add(fmt, n):
    x, y = RNG.standard_normal((2, n), dtype=np.float32)
    out = np.zeros(n, np.float32)
    alpha, beta = np.float32(1.5), np.float32(-0.25)
    launch("scaled_add", fmt, cdiv(n, 256), x, y, out, alpha, beta)
    np.testing.assert_allclose(out, alpha * x + beta * y, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("shape", [(4, 1024), (7, 1000), (3, 17)])
def test_row_softmax(fmt, shape):
    x = RNG.standard_normal(shape, dtype=np.float32) * 4
    out = np.zeros(shape, np.float32)
    launch("row_softmax", fmt, shape[0], x, out)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def _matmul(name, fmt, m, k, n):
    a = RNG.standard_normal((m, k)).astype(np.float16)
    b = RNG.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float16)
    launch(name, fmt, (cdiv(m, 128), cdiv(n, 128)), a, b, c)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    # f32 accumulation, one rounding to f16: within one f16 ulp (2**-10 relative).
    np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2 ** -10, atol=1e-3 * np.sqrt(k))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("mkn", [(128, 64, 128), (200, 100, 130), (64, 32, 256)])
def test_matmul_f16(fmt, mkn):
    _matmul("matmul_f16", fmt, *mkn)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("mkn", [(256, 96, 128), (136, 40, 72)])
def test_matmul_f16_tma(fmt, mkn):
    _matmul("matmul_f16_tma", fmt, *mkn)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("shape", [(64, 32), (100, 70), (128, 96)])
def test_transpose(fmt, shape):
    x = RNG.standard_normal(shape, dtype=np.float32)
    out = np.zeros(shape[::-1], np.float32)
    launch("transpose", fmt, (cdiv(shape[0], 64), cdiv(shape[1], 32)), x, out)
    np.testing.assert_array_equal(out, x.T)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("shape", [(3, 1024), (5, 700)])
def test_layernorm(fmt, shape):
    bf16 = ml_dtypes.bfloat16
    m, n = shape
    x = RNG.standard_normal(shape).astype(bf16)
    w = RNG.standard_normal(n, dtype=np.float32)
    b = RNG.standard_normal(n, dtype=np.float32)
    out = np.zeros(shape, bf16)
    eps = np.float32(1e-5)
    launch("layernorm", fmt, m, x, w, b, out, eps)
    # The kernel divides by BN=1024 and pads x with zeros: mirror that exactly.
    xp = np.zeros((m, 1024), np.float64)
    xp[:, :n] = x.astype(np.float64)
    mean = xp.sum(axis=1, keepdims=True) / 1024
    d = xp - mean
    var = (d * d).sum(axis=1, keepdims=True) / 1024
    ref = (d / np.sqrt(var + 1e-5))[:, :n] * w + b
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2 ** -7, atol=1e-2)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("tiles,n_iter,threshold,tail", [(2, 3, 0.5, 0), (3, 4, -1.0, 50),
                                                        (1, 1, 0.0, 0)])
def test_control_flow(fmt, tiles, n_iter, threshold, tail):
    length = tiles * n_iter * 128 - tail  # a partial last tile reads zero padding
    x = RNG.standard_normal(length, dtype=np.float32)
    out = np.zeros(tiles * 128, np.float32)
    launch("control_flow", fmt, tiles, x, out, np.int32(n_iter), np.float32(threshold))
    xp = np.zeros(tiles * n_iter * 128, np.float32)
    xp[:length] = x
    blocks = xp.reshape(tiles, n_iter, 128)
    signs = np.where(np.arange(n_iter) % 2 == 0, 1, -1).astype(np.float32)
    acc = np.zeros((tiles, 128), np.float32)
    for k in range(n_iter):  # same order of f32 additions as the kernel
        acc = acc + signs[k] * blocks[:, k]
    if threshold > 0:
        acc = np.where(acc > threshold, acc, 0)
    np.testing.assert_array_equal(out, acc.reshape(-1))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("n,bins", [(1024, 16), (512, 300), (700, 8)])
def test_histogram_atomic(fmt, n, bins):
    idx = RNG.integers(-3, bins + 3, n).astype(np.int32)  # out-of-range bins are masked
    hist = np.zeros(bins, np.int32)
    launch("histogram_atomic", fmt, cdiv(n, 256), idx, hist)
    ok = (idx >= 0) & (idx < bins)
    ref = np.bincount(idx[ok], minlength=bins).astype(np.int32)
    # The kernel loads a partial last tile without padding: the interpreter reads those
    # lanes as 0 (documented), so they count in bin 0.
    ref[0] += cdiv(n, 256) * 256 - n
    np.testing.assert_array_equal(hist, ref)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("n", [512, 2000, 100_000])
def test_sum_reduce_atomic(fmt, n):
    x = RNG.integers(-(2 ** 31), 2 ** 31, n, dtype=np.int64).astype(np.int32)
    total = np.zeros(1, np.int32)
    launch("sum_reduce_atomic", fmt, cdiv(n, 512), x, total)
    expected = np.asarray(np.sum(x.astype(np.int64))).astype(np.int32)  # wraps like i32
    assert total[0] == expected


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("n", [512, 1500])
def test_gelu_cast(fmt, n):
    x = RNG.standard_normal(n, dtype=np.float32) * 3
    out = np.zeros(n, ml_dtypes.bfloat16)
    launch("gelu_cast", fmt, cdiv(n, 512), x, out)
    x64 = x.astype(np.float64)
    ref = 0.5 * x64 * (1 + np.tanh(0.7978845608 * (x64 + 0.044715 * x64 ** 3)))
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2 ** -7, atol=1e-6)


def test_public_api_nanotile_run():
    import nanotile

    a = np.arange(5, dtype=np.float32)
    c = np.zeros(5, np.float32)
    nanotile.run(str(kernel_path("vector_add", "tileirbc")), "vector_add", (1,),
                 *cutile_args(a, a, c))
    np.testing.assert_array_equal(c, 2 * a)
