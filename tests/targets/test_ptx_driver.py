"""The `nanotile` driver's PTX outputs: `-o K.ptx` / `--emit=ptx|cubin` with
`--gpu-name`, a clean error (no traceback, no output file) for a kernel the back end
cannot lower, and the sm_100 PTX running in the emulator like the sm_90 PTX."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nanotile.targets.compile import ptxas_path

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / ".." / "shared" / "corpus"


def nanotile(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nanotile.cli", *args], cwd=ROOT,
                          check=False, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("gpu,target", [("sm_90", "sm_90a"), ("sm_100", "sm_100a")])
def test_driver_writes_ptx(tmp_path, gpu, target):
    out = tmp_path / "k.ptx"
    result = nanotile(str(SHARED / "cutile" / "transpose.mlir"), f"--gpu-name={gpu}", "-o",
                      str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert f".target {target}" in text and ".visible .entry transpose(" in text
    assert text.count(".param .u64") == 2 and text.count(".param .u32") == 8


def test_driver_emits_cubin(tmp_path):
    if ptxas_path() is None:
        pytest.skip("ptxas not installed (nvidia-cuda-nvcc wheel)")
    out = tmp_path / "k.cubin"
    result = nanotile(str(SHARED / "cutile" / "vector_add.tileirbc"), "--gpu-name=sm_100",
                      "--emit=cubin", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert out.read_bytes()[:4] == b"\x7fELF"


def test_unsupported_kernel_is_a_clean_error(tmp_path):
    # atan2 has no PTX lowering yet (no approximate instruction; no sequence written)
    path = SHARED / "cutile-tests" / \
        "test_binary_elementwise+jit__array_atan2__f32x1_f16x1_f32x1_64.mlir"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    out = tmp_path / "k.ptx"
    result = nanotile(str(path), "--gpu-name=sm_90", "-o", str(out))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "error:" in result.stderr and "'atan2' is not lowered" in result.stderr
    assert ":" in result.stderr.split("error:")[0]  # file:line:col of the op
    assert not out.exists()


def test_unknown_gpu_name_is_a_usage_error():
    result = nanotile(str(SHARED / "cutile" / "vector_add.mlir"), "--gpu-name=sm_80",
                      "--emit=ptx")
    assert result.returncode != 0 and "sm_80" in result.stderr
    assert "Traceback" not in result.stderr


def test_sm100_ptx_runs_like_the_interpreter():
    from nanotile.interp import cutile_args, run
    from nanotile.loader import load_file
    from nanotile.targets.compile import compile_to_ptx
    from nanotile.targets.emulator import run_ptx

    path = str(SHARED / "cutile" / "row_softmax.tileirbc")
    x = np.random.default_rng(5).standard_normal((3, 500), dtype=np.float32)
    want, got = np.zeros_like(x), np.zeros_like(x)
    run(path, "row_softmax", (3,), *cutile_args(x.copy(), want))
    run_ptx(compile_to_ptx(load_file(path), "sm_100"), "row_softmax", grid=(3,),
            args=cutile_args(x.copy(), got))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
