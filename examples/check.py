"""Run the example kernels in nanotile and compare what they write with NumPy.

    python examples/check.py [NAME ...] [--devices interp,sm_90,sm_100] [--seed N]

For each kernel NAME (default: all), NAME.mlir and NAME.tileirbc are read and must print
the same canonical text; then the kernel runs on random inputs

- in nanotile's NumPy interpreter (``interp``: nanotile.run, as ``nanotile run`` does),
- compiled to PTX for sm_90 and for sm_100 and run in nanotile's PTX emulator
  (``sm_90``, ``sm_100``: ``nanotile.run(..., device="emulator")``, as ``nanotile run
  --emulate`` does),

and its output array is compared with the NumPy function below. One line per run; the
exit status is 1 if any result differs (the worst element is printed), 0 otherwise.
Needs nanotile and NumPy only (no GPU, no cuTile). The arrays follow cuTile's calling
convention (each array is passed as its base, its shape and its strides).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

HERE = Path(__file__).resolve().parent
DEVICES = ("interp", "sm_90", "sm_100")


@dataclass
class Example:
    """inputs(rng) -> (the kernel's arguments in its Python order, the grid); ``output``:
    which argument the kernel writes; ``reference(*args)``: what it should hold after the
    run; ``rtol``/``atol``: how close (0 and 0: exactly)."""
    inputs: Callable[[np.random.Generator], tuple[list, tuple[int, ...]]]
    output: int
    reference: Callable[..., np.ndarray]
    rtol: float = 0.0
    atol: float = 0.0


def _axpy_inputs(rng):
    n = 1000  # not a multiple of the tile (128): the last block is partly outside
    x, y = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    out = np.full(n, np.nan, np.float32)
    return [x, y, out, np.float32(1.5)], (-(-n // 128),)


def _axpy(x, y, out, alpha):
    return (np.float64(alpha) * x + y).astype(np.float32)  # fma: one rounding


def _rms_norm_inputs(rng):
    rows, n = 6, 200  # n < COLS (256): the padding must not change the mean
    x = (rng.standard_normal((rows, n)) * 3).astype(np.float32)
    w = rng.uniform(0.5, 2.0, n).astype(np.float32)
    out = np.full((rows, n), np.nan, np.float32)
    return [x, w, out, np.float32(1e-5)], (rows,)


def _rms_norm(x, w, out, eps):
    x64 = x.astype(np.float64)
    return (x64 / np.sqrt((x64 * x64).mean(axis=1, keepdims=True) + eps) * w).astype(np.float32)


def _matmul_inputs(rng):
    m, n, k = 64, 64, 48  # a 2 x 2 grid of 32 x 32 tiles, three steps of the K loop
    # small integers: every product and sum is exact in f32 and the result fits f16 exactly
    a = rng.integers(-4, 5, (m, k)).astype(np.float16)
    b = rng.integers(-4, 5, (k, n)).astype(np.float16)
    c = np.full((m, n), np.nan, np.float16)
    return [a, b, c], (m // 32, n // 32)


def _matmul(a, b, c):
    return (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)


def _softmax_inputs(rng):
    rows, n = 5, 100  # n < COLS (128): the -inf padding must not count
    x = (rng.standard_normal((rows, n)) * 20).astype(np.float32)
    x[0] += 1000.0  # large: without subtracting the maximum exp would overflow
    out = np.full((rows, n), np.nan, np.float32)
    return [x, out], (rows,)


def _softmax(x, out):
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


EXAMPLES: dict[str, Example] = {
    "axpy": Example(_axpy_inputs, 2, _axpy, rtol=1e-6, atol=1e-7),
    "rms_norm": Example(_rms_norm_inputs, 2, _rms_norm, rtol=1e-5, atol=1e-6),
    "matmul_f16": Example(_matmul_inputs, 2, _matmul),
    "softmax_rows": Example(_softmax_inputs, 1, _softmax, rtol=1e-5, atol=1e-7),
}


def load(name: str):
    """The module of NAME.tileirbc, after checking that NAME.mlir is the same program."""
    import nanotile

    from_text, from_bytecode = (nanotile.load(str(HERE / (name + s)))
                                for s in (".mlir", ".tileirbc"))
    text, bc = nanotile.print_module(from_text), nanotile.print_module(from_bytecode)
    if text != bc:
        raise ValueError(f"{name}.mlir and {name}.tileirbc are not the same program "
                         f"(rerun: nanotile examples/{name}.mlir --emit=bytecode -o "
                         f"examples/{name}.tileirbc)")
    return from_bytecode


def run_one(name: str, module, device: str, seed: int = 0) -> tuple[bool, str]:
    """Run example ``name`` (its kernel is the entry of that name in ``module``) on
    ``device`` and compare with NumPy: (whether it matches, a one-line summary)."""
    import nanotile
    from nanotile.interp import cutile_args

    ex = EXAMPLES[name]
    args, grid = ex.inputs(np.random.default_rng(seed))
    expected = ex.reference(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    if device == "interp":
        nanotile.run(module, name, grid, *cutile_args(*args))
    else:
        nanotile.run(module, name, grid, *cutile_args(*args), device="emulator",
                     gpu_name=device)
    got = args[ex.output]
    close = np.isclose(got.astype(np.float64), expected.astype(np.float64),
                       rtol=ex.rtol, atol=ex.atol)
    if close.all():
        err = np.abs(got.astype(np.float64) - expected.astype(np.float64)).max()
        return True, f"ok ({got.size} elements, largest difference {err:.3g})"
    bad = np.argwhere(~close)
    where = tuple(int(i) for i in bad[0])
    return False, (f"MISMATCH at {(~close).sum()} of {got.size} elements; first at index "
                   f"{where}: got {got[where]!r}, NumPy {expected[where]!r}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("names", nargs="*", help=f"examples to run (default: all: "
                                             f"{', '.join(EXAMPLES)})")
    ap.add_argument("--devices", default=",".join(DEVICES),
                    help="where to run, comma-separated: interp, sm_90, sm_100 (default: all)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    args = ap.parse_args(argv)
    devices = args.devices.split(",")
    if unknown := ({*args.names} - EXAMPLES.keys()) | ({*devices} - {*DEVICES}):
        ap.error(f"unknown example or device: {', '.join(sorted(unknown))}")
    failures = 0
    for name in args.names or EXAMPLES:
        module = load(name)
        for device in devices:
            start = time.perf_counter()
            try:
                ok, summary = run_one(name, module, device, args.seed)
            except Exception as e:  # noqa: BLE001 - report every example, then fail
                ok, summary = False, f"ERROR {type(e).__name__}: {e}"
            took = time.perf_counter() - start
            print(f"{name:13s} {device:7s} {summary}  [{took:.1f} s]", flush=True)
            failures += not ok
    if failures:
        print(f"{failures} run(s) differ from NumPy", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
