"""Interpreter benchmark: cuTile's matmul_f16 (512x512x512) and row_softmax (4096x1024).

Run from the repository root:  .venv/bin/python bench/interp_bench.py [--repeat N]
Prints one row per kernel: grid, tile blocks, best wall time over the repeats, and the
largest error against NumPy (a sanity check that the run computed the right thing).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

# The interpreter does many small matrix products; BLAS threads only add overhead (and
# on a shared, loaded machine, a lot of it). Must be set before NumPy is imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nanotile.interp import cutile_args, run
from nanotile.loader import load_file

CORPUS = ROOT / ".." / "shared" / "corpus" / "cutile"


def bench_matmul(repeat: int) -> tuple[str, tuple, float, float]:
    m = k = n = 512
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    c = np.zeros((m, n), np.float16)
    module = load_file(str(CORPUS / "matmul_f16.tileirbc"))
    grid = (m // 128, n // 128)
    best = min(_timed(lambda: run(module, "matmul_f16", grid, *cutile_args(a, b, c)))
               for _ in range(repeat))
    ref = a.astype(np.float32) @ b.astype(np.float32)
    return "matmul_f16 512x512x512", grid, best, float(np.abs(c - ref).max())


def bench_softmax(repeat: int) -> tuple[str, tuple, float, float]:
    rows, cols = 4096, 1024
    x = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32)
    out = np.zeros_like(x)
    module = load_file(str(CORPUS / "row_softmax.tileirbc"))
    best = min(_timed(lambda: run(module, "row_softmax", (rows,), *cutile_args(x, out)))
               for _ in range(repeat))
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return "row_softmax 4096x1024", (rows,), best, float(np.abs(out - e / e.sum(1, keepdims=True)).max())


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    print(f"{'kernel':26s} {'grid':>10s} {'blocks':>7s} {'best s':>8s} {'max err':>10s}")
    for fn in (bench_matmul, bench_softmax):
        name, grid, secs, err = fn(args.repeat)
        blocks = int(np.prod(grid))
        print(f"{name:26s} {'x'.join(map(str, grid)):>10s} {blocks:7d} {secs:8.3f} {err:10.2e}")


if __name__ == "__main__":
    main()
