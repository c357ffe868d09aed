"""The PTX back end on the cuTile corpus (../shared/corpus/cutile).

1. Every kernel compiles for sm_90 and sm_100 and NVIDIA's ptxas accepts the PTX with
   -arch=sm_90a / -arch=sm_100a (one test per kernel and target).
2. The PTX, run in the PTX emulator (nanotile.ptxemu), computes what the
   interpreter (nanotile.interp) computes on the same random inputs. Tolerances: exact
   for data movement and integer kernels; approximate transcendentals (ex2/tanh.approx)
   and other summation orders are allowed a few ulps of the stored type.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from nanotile.interp import cutile_args, run
from nanotile.loader import load_file
from nanotile.targets.compile import assemble, compile_to_ptx, ptxas_path

from .corpus_cases import CORPUS, KERNELS
from .corpus_cases import corpus_case as _case

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


@pytest.mark.parametrize("name", KERNELS)
def test_emulator_matches_interpreter(name):
    from nanotile.ptxemu import run_ptx

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
