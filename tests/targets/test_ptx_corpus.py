"""The PTX back end on the cuTile corpus (../shared/corpus/cutile).

1. Every kernel compiles for sm_90 and sm_100 and NVIDIA's ptxas accepts the PTX with
   -arch=sm_90a / -arch=sm_100a (one test per kernel and target).
2. The PTX, run in the PTX emulator (nanotile.targets.emulator), computes what the
   interpreter (nanotile.interp) computes on the same random inputs. Tolerances: exact
   for data movement and integer kernels; approximate transcendentals (ex2/tanh.approx)
   and other summation orders are allowed a few ulps of the stored type.
"""

from __future__ import annotations

import copy
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from nanotile.interp import cutile_args, run
from nanotile.loader import load_file
from nanotile.targets.compile import assemble, compile_to_ptx, ptxas_path

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "cutile"
KERNELS = ["vector_add", "scaled_add", "control_flow", "gelu_cast", "histogram_atomic",
           "layernorm", "matmul_f16", "matmul_f16_tma", "row_softmax", "sum_reduce_atomic",
           "transpose"]
TARGETS = ["sm_90", "sm_100"]


def ptx_of(name: str, target: str) -> str:
    path = CORPUS / f"{name}.tileirbc"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    return compile_to_ptx(load_file(str(path)), target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", KERNELS)
def test_ptxas_accepts(name, target):
    if ptxas_path() is None:
        pytest.skip("ptxas not installed (nvidia-cuda-nvcc wheel)")
    ptx = ptx_of(name, target)
    expected = {"sm_90": ".target sm_90a", "sm_100": ".target sm_100a"}[target]
    assert expected in ptx
    cubin, _ = assemble(ptx, target)
    assert cubin[:4] == b"\x7fELF"


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _case(name: str, rng: np.random.Generator):
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
        a = rng.standard_normal((130, 40)).astype(np.float16)
        b = rng.standard_normal((40, 20)).astype(np.float16)
        return (2, 1), [a, b, np.zeros((130, 20), np.float16)], [2], 2 ** -9, 1e-2
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


@pytest.mark.parametrize("name", KERNELS)
def test_emulator_matches_interpreter(name):
    from nanotile.targets.emulator import run_ptx

    rng = np.random.default_rng(7)
    grid, args, outputs, rtol, atol = _case(name, rng)
    ptx = ptx_of(name, "sm_90")
    mine = copy.deepcopy(args)
    theirs = copy.deepcopy(args)
    run(str(CORPUS / f"{name}.tileirbc"), name, grid, *cutile_args(*theirs))
    run_ptx(ptx, name, grid=grid, args=cutile_args(*mine))
    for i in outputs:
        got = mine[i].astype(np.float64)
        want = theirs[i].astype(np.float64)
        assert not np.array_equal(want, args[i].astype(np.float64)) or want.size == 0
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
