"""print_tko lowered to vprintf: the emulated PTX prints exactly what the interpreter
prints, for cuTile's print test kernels (a scalar and an 8-element tile per block)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from nanotile.interp import cutile_args, run
from nanotile.loader import load_file
from nanotile.targets.compile import assemble, compile_to_ptx, ptxas_path

TESTS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "cutile-tests"
CASES = [("f16x1_8", np.float16), ("bf16x1_8", ml_dtypes.bfloat16), ("i64x1_8", np.int64),
         ("i8x1_8", np.int8), ("i16x1_8", np.int16)]


@pytest.mark.parametrize("suffix,dtype", CASES, ids=[c[0] for c in CASES])
def test_print_matches_interpreter(suffix, dtype):
    from nanotile.ptxemu import run_ptx

    path = TESTS / f"test_print__kernel_builtin_print__{suffix}.tileirbc"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    ptx = compile_to_ptx(load_file(str(path)), "sm_90")
    if ptxas_path() is not None:
        assemble(ptx, "sm_90")
    x = (np.arange(8) * 1.5 - 3).astype(dtype)
    outputs = []
    for runner in (lambda: run(str(path), "kernel_builtin_print", (2,), *cutile_args(x.copy())),
                   lambda: run_ptx(ptx, "kernel_builtin_print", grid=(2,),
                                   args=cutile_args(x.copy()))):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            runner()
        outputs.append(buf.getvalue())
    assert "tile[0]:[-3" in outputs[0]
    assert outputs[1] == outputs[0]
