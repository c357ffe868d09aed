"""Two independent executions of each corpus kernel agree: NVIDIA's tileiras PTX on the
emulator, and cuTile's Tile IR bytecode on nanotile's interpreter, with the same inputs."""

from __future__ import annotations

import numpy as np
import pytest

from nanotile.ptxemu import TensorMap, run_ptx
from tests.ptxemu.cutile_cases import CASES, PTX_DIR

interp = pytest.importorskip("nanotile.interp")

# (rtol, atol) where the two differ legitimately: approximate ex2/tanh in tileiras' code,
# accumulation order of the tensor-core MMA; None = bit-exact
TOLERANCE = {"gelu_cast": (2 ** -7, 1e-5), "row_softmax": (1e-6, 1e-9),
             "matmul_f16": (2 ** -10, 2 ** -10), "matmul_f16_tma": (2 ** -10, 2 ** -10)}


@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_emulated_ptx_matches_interpreted_tile_ir(name: str, arch: str) -> None:
    bytecode = PTX_DIR.parent / f"{name}.tileirbc"
    if not bytecode.exists():
        pytest.skip(f"{bytecode} not found")
    emu = CASES[name](np.random.default_rng(11), arch=arch)
    ref = CASES[name](np.random.default_rng(11), arch=arch)
    run_ptx((PTX_DIR / f"{name}.{arch}.ptx").read_text(), name, grid=emu.grid, args=emu.args)
    interp.run(str(bytecode), name, ref.grid,
               *[a for a in ref.args if not isinstance(a, TensorMap)])
    tol = TOLERANCE.get(name)
    for got, want in zip(emu.args, ref.args):
        if not isinstance(got, np.ndarray):
            continue
        if tol is None:
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
        else:
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                       rtol=tol[0], atol=tol[1])
