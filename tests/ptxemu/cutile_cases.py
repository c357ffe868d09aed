"""The cuTile corpus kernels as emulator launches: tileiras' ABI, inputs and NumPy references.

tileiras' kernels take, per array argument, a u64 base pointer followed by the shape and the
strides (in elements) as u32 values; scalars follow as their type; TMA kernels add hidden
128-byte tensor-map parameters at the end. The CTA size comes from ``.reqntid``; the grid
has one CTA per output tile (``kernels.py``). The expected results are NumPy versions of
``/work/shared/corpus/cutile/kernels.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np

from nanotile.ptxemu import TensorMap

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
PTX_DIR = SHARED / "corpus" / "cutile" / "ptx"
BF16 = ml_dtypes.bfloat16


@dataclass
class Case:
    args: list
    grid: tuple
    check: Callable[[], None]    # raises AssertionError on a mismatch


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def vector_add(rng, n: int = 3000, arch: str = "sm_90") -> Case:
    a, b = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    c = np.zeros(n, np.float32)
    return Case([a, n, 1, b, n, 1, c, n, 1], (_cdiv(n, 1024),),
                lambda: np.testing.assert_array_equal(c, a + b))


def scaled_add(rng, n: int = 1000, arch: str = "sm_90") -> Case:
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    out = np.zeros(n, np.float32)
    alpha, beta = 1.5, -0.25

    def check():
        ref = np.float32(alpha) * x + np.float32(beta) * y
        np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)
    return Case([x, n, 1, y, n, 1, out, n, 1, alpha, beta], (_cdiv(n, 256),), check)


def transpose(rng, m: int = 100, n: int = 70, arch: str = "sm_90") -> Case:
    x = rng.standard_normal((m, n), np.float32)
    out = np.zeros((n, m), np.float32)
    return Case([x, m, n, n, 1, out, n, m, m, 1], (_cdiv(m, 64), _cdiv(n, 32)),
                lambda: np.testing.assert_array_equal(out, x.T))


def gelu_cast(rng, n: int = 1500, arch: str = "sm_90") -> Case:
    x = (rng.standard_normal(n) * 3).astype(np.float32)
    out = np.zeros(n, BF16)

    def check():
        x64 = x.astype(np.float64)
        ref = 0.5 * x64 * (1.0 + np.tanh(0.7978845608 * (x64 + 0.044715 * x64 ** 3)))
        np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2 ** -7, atol=1e-5)
    return Case([x, n, 1, out, n, 1], (_cdiv(n, 512),), check)


def row_softmax(rng, m: int = 5, n: int = 1000, arch: str = "sm_90") -> Case:
    x = rng.standard_normal((m, n), np.float32)
    out = np.zeros((m, n), np.float32)

    def check():
        e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
        np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)
    return Case([x, m, n, n, 1, out, m, n, n, 1], (m,), check)


def control_flow(rng, tiles: int = 3, n_iter: int = 3, threshold: float = 0.5,
                 arch: str = "sm_90") -> Case:
    x = rng.standard_normal(tiles * n_iter * 128 - 50, np.float32)
    out = np.zeros(tiles * 128, np.float32)

    def check():
        xp = np.concatenate([x, np.zeros(50, np.float32)]).reshape(tiles, n_iter, 128)
        acc = np.zeros((tiles, 128), np.float32)
        for k in range(n_iter):
            acc = acc + xp[:, k] if k % 2 == 0 else acc - xp[:, k]
        if threshold > 0:
            acc = np.where(acc > np.float32(threshold), acc, np.float32(0))
        np.testing.assert_array_equal(out, acc.reshape(-1))
    return Case([x, x.size, 1, out, out.size, 1, n_iter, threshold], (tiles,), check)


def histogram_atomic(rng, n: int = 1024, bins: int = 37, arch: str = "sm_90") -> Case:
    idx = rng.integers(0, bins, n).astype(np.int32)
    hist = np.zeros(bins, np.int32)
    return Case([idx, n, 1, hist, bins, 1, TensorMap(idx, (256,))], (_cdiv(n, 256),),
                lambda: np.testing.assert_array_equal(hist, np.bincount(idx, minlength=bins)))


def sum_reduce_atomic(rng, n: int = 1800, arch: str = "sm_90") -> Case:
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    total = np.zeros(1, np.int32)
    return Case([x, n, 1, total, 1, 1, TensorMap(x, (256,))], (_cdiv(n, 512),),
                lambda: np.testing.assert_array_equal(total, [x.sum()]))


def layernorm(rng, m: int = 3, n: int = 1024, arch: str = "sm_90") -> Case:
    x = rng.standard_normal((m, n)).astype(BF16)
    wt = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    out = np.zeros((m, n), BF16)
    eps = 1e-5

    def check():
        t = x.astype(np.float64)
        mean = t.sum(axis=1, keepdims=True) / 1024
        d = t - mean
        var = (d * d).sum(axis=1, keepdims=True) / 1024
        ref = d / np.sqrt(var + eps) * wt + b
        np.testing.assert_allclose(out.astype(np.float64), ref, rtol=2 ** -7, atol=2e-2)
    return Case([x, m, n, n, 1, wt, n, 1, b, n, 1, out, m, n, n, 1, eps,
                 TensorMap(wt, (256,)), TensorMap(b, (256,))], (m,), check)


def matmul_f16(rng, m: int = 200, k: int = 96, n: int = 136,
               arch: str = "sm_90") -> Case:
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float16)

    def check():
        ref = a.astype(np.float64) @ b.astype(np.float64)
        np.testing.assert_allclose(c.astype(np.float64), ref, rtol=2 ** -10, atol=2 ** -10)
    return Case([a, m, k, k, 1, b, k, n, n, 1, c, m, n, n, 1], (_cdiv(m, 128), _cdiv(n, 128)),
                check)


def matmul_f16_tma(rng, m: int = 200, k: int = 96, n: int = 136,
                   arch: str = "sm_90") -> Case:
    """The TMA variant: tensor maps for A (128x32 boxes, 64-byte swizzle), B (32x64, 128-byte
    swizzle) and C (64x64 on sm_90, 128x64 on sm_100; 128-byte swizzle). Boxes and swizzles
    follow the kernel's copy sizes, its MMA descriptors and its shared-memory address
    arithmetic (the driver would take them from tileiras' launch metadata)."""
    case = matmul_f16(rng, m, k, n)
    a, b, c = case.args[0], case.args[5], case.args[10]
    c_box = (64, 64) if arch == "sm_90" else (128, 64)
    case.args += [TensorMap(a, (128, 32), swizzle=2), TensorMap(b, (32, 64), swizzle=3),
                  TensorMap(c, c_box, swizzle=3)]
    return case


CASES = {
    "vector_add": vector_add, "scaled_add": scaled_add, "transpose": transpose,
    "gelu_cast": gelu_cast, "row_softmax": row_softmax, "control_flow": control_flow,
    "histogram_atomic": histogram_atomic, "sum_reduce_atomic": sum_reduce_atomic,
    "layernorm": layernorm, "matmul_f16": matmul_f16,
    "matmul_f16_tma": matmul_f16_tma,
}
