"""Speed of the PTX emulator on tileiras' PTX: lane-instructions per second.

    python bench/emulator_bench.py [--n 1048576] [--kernels vector_add,matmul_f16]

Prints one row per kernel: elements, CTAs, warp instructions, lane instructions
(instructions times active lanes), wall and CPU seconds and lane-instructions per CPU
second (CPU time is steadier than wall time on a shared machine).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nanotile.ptxemu import PtxError, run_ptx

PTX = ROOT / ".." / "shared" / "corpus" / "cutile" / "ptx"


def bench_vector_add(n: int, arch: str, batch: bool = True):
    a = np.random.default_rng(0).standard_normal(n, np.float32)
    b = np.ones(n, np.float32)
    c = np.zeros(n, np.float32)
    text = (PTX / f"vector_add.{arch}.ptx").read_text()
    grid = (-(-n // 1024),)
    stats = run_ptx(text, "vector_add", grid=grid, args=[a, n, 1, b, n, 1, c, n, 1],
                    batch=batch)
    assert np.array_equal(c, a + b), "vector_add result mismatch"
    return grid[0], stats


def bench_matmul(n: int, arch: str):
    m = k = nn = n
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, nn)).astype(np.float16)
    c = np.zeros((m, nn), np.float16)
    text = (PTX / f"matmul_f16.{arch}.ptx").read_text()
    grid = (-(-m // 128), -(-nn // 128))
    stats = run_ptx(text, "matmul_f16", grid=grid,
                    args=[a, m, k, k, 1, b, k, nn, nn, 1, c, m, nn, nn, 1])
    ref = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    assert np.allclose(c.astype(np.float32), ref.astype(np.float32), rtol=1e-2, atol=1e-2), \
        "matmul result mismatch"
    return grid[0] * grid[1], stats


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 20, help="vector_add elements")
    ap.add_argument("--matmul-n", type=int, default=256, help="matmul size (n x n x n)")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--kernels", default="vector_add,vector_add/warps,matmul_f16",
                    help="vector_add (CTAs batched into wide warps), vector_add/warps "
                         "(32-lane warps, CTA by CTA), matmul_f16")
    args = ap.parse_args()
    print(f"{'kernel':<16} {'size':>9} {'CTAs':>6} {'warp-instr':>11} {'lane-instr':>12} "
          f"{'wall s':>7} {'cpu s':>7} {'lane-instr/cpu-s':>17}")
    for name in args.kernels.split(","):
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            if name in ("vector_add", "vector_add/warps"):
                size, (ctas, stats) = args.n, bench_vector_add(args.n, args.arch,
                                                               batch=name == "vector_add")
            elif name == "matmul_f16":
                size, (ctas, stats) = args.matmul_n, bench_matmul(args.matmul_n, args.arch)
            else:
                raise SystemExit(f"unknown kernel {name}")
        except PtxError as exc:
            print(f"{name:<16} does not run: {exc}")
            continue
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"{name:<16} {size:>9} {ctas:>6} {stats.instructions:>11} "
              f"{stats.lane_instructions:>12} {secs:>7.2f} {cpu:>7.2f} "
              f"{stats.lane_instructions / cpu:>17.3e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
