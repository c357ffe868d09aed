"""Inputs for the cuTile corpus kernels (../shared/corpus/cutile), shared by the tests
that run them through the PTX back end and the emulator: ``corpus_case(name, rng)`` gives a grid,
arguments (before cuTile's ABI expansion), which arguments are outputs, and tolerances.
``cutile_tests_case(name)`` loads a kernel of ../shared/corpus/cutile-tests with
make_inputs' arguments (skipping the test when the file is missing)."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "cutile"
TESTS_CORPUS = CORPUS.parent / "cutile-tests"
KERNELS = ["vector_add", "scaled_add", "control_flow", "gelu_cast", "histogram_atomic",
           "layernorm", "matmul_f16", "matmul_f16_tma", "row_softmax", "sum_reduce_atomic",
           "transpose"]


def cutile_tests_case(name: str):
    """(module, kernel name, grid, arguments) for a cutile-tests kernel: its bytecode,
    and make_inputs' deterministic arguments (seed 0)."""
    import pytest

    from nanotile.loader import load_file
    from nanotile.passes.semantics import make_inputs

    path = TESTS_CORPUS / f"{name}.tileirbc"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    module = load_file(str(path))
    (entry,) = module.entries()
    grid, args = make_inputs(entry, np.random.default_rng(0))
    return module, entry.attributes["sym_name"], grid, args


def corpus_case(name: str, rng: np.random.Generator):
    """(grid, arguments, output positions, rtol, atol) for one kernel."""
    f32 = np.float32
    if name == "vector_add":
        a, b = rng.standard_normal((2, 1500), dtype=f32)
        return (2,), [a, b, np.zeros(1500, f32)], [2], 0, 0
    if name == "scaled_add":
        x, y = rng.standard_normal((2, 300), dtype=f32)
        return (2,), [x, y, np.zeros(300, f32), f32(1.5), f32(-0.25)], [2], 1e-6, 1e-7
    if name == "control_flow":
        x = rng.standard_normal(2 * 3 * 128 - 50, dtype=f32)
        return (2,), [x, np.zeros(256, f32), np.int32(3), f32(0.5)], [1], 0, 0
    if name == "gelu_cast":
        x = rng.standard_normal(700, dtype=f32) * 3
        return (2,), [x, np.zeros(700, ml_dtypes.bfloat16)], [1], 2 ** -6, 1e-5
    if name == "histogram_atomic":
        idx = rng.integers(-3, 11, 300).astype(np.int32)
        return (2,), [idx, np.zeros(8, np.int32)], [1], 0, 0
    if name == "layernorm":
        x = rng.standard_normal((2, 700)).astype(ml_dtypes.bfloat16)
        w, b = rng.standard_normal((2, 700), dtype=f32)
        return (2,), [x, w, b, np.zeros((2, 700), ml_dtypes.bfloat16), f32(1e-5)], [3], \
            2 ** -6, 2e-2
    if name in ("matmul_f16", "matmul_f16_tma"):
        # N = 24: the kernels assume row strides divisible by 8 elements (16 bytes, as
        # TMA's tensor maps need)
        a = rng.standard_normal((130, 40)).astype(np.float16)
        b = rng.standard_normal((40, 24)).astype(np.float16)
        return (2, 1), [a, b, np.zeros((130, 24), np.float16)], [2], 2 ** -9, 1e-2
    if name == "row_softmax":
        x = rng.standard_normal((2, 700), dtype=f32) * 4
        return (2,), [x, np.zeros((2, 700), f32)], [1], 1e-5, 1e-7
    if name == "sum_reduce_atomic":
        x = rng.integers(-(2 ** 31), 2 ** 31, 1000, dtype=np.int64).astype(np.int32)
        return (2,), [x, np.zeros(1, np.int32)], [1], 0, 0
    if name == "transpose":
        x = rng.standard_normal((70, 40), dtype=f32)
        return (2, 2), [x, np.zeros((40, 70), f32)], [1], 0, 0
    raise AssertionError(name)
