"""The example kernels of examples/ (shipped in the repository, so these run on a fresh
clone): both files of each kernel are one program, each kernel computes what NumPy computes
in the interpreter and in the PTX emulator for sm_90 and sm_100, a wrong kernel is caught
(examples/check.py exits 1), and, when cuTile is installed, the files are what exporting
the cuTile Python gives today."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import nanotile
from nanotile.cli import main as nanotile_main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NAMES = ("axpy", "rms_norm", "matmul_f16", "softmax_rows")


def _check_module():
    spec = importlib.util.spec_from_file_location("examples_check", EXAMPLES / "check.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


check = _check_module()


def test_every_example_is_checked():
    """Each kernel has its cuTile Python, its text and its bytecode, and check.py knows it."""
    assert set(check.EXAMPLES) == set(NAMES)
    for name in NAMES:
        for suffix in (".py", ".mlir", ".tileirbc"):
            assert (EXAMPLES / (name + suffix)).is_file(), name + suffix
        assert f"def {name}(" in (EXAMPLES / f"{name}.py").read_text()


@pytest.mark.parametrize("name", NAMES)
def test_text_and_bytecode_are_one_program(name):
    text = (EXAMPLES / f"{name}.mlir").read_bytes()
    bytecode = (EXAMPLES / f"{name}.tileirbc").read_bytes()
    assert bytecode.startswith(b"\x7fTileIR\x00") and not text.startswith(b"\x7fTileIR")
    module = check.load(name)  # raises if the two print differently
    assert [e.attributes["sym_name"] for e in module.entries()] == [name]


@pytest.mark.parametrize("device", check.DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_example_matches_numpy(name, device):
    ok, summary = check.run_one(name, check.load(name), device)
    assert ok, summary


def _swap_fma_operands(text: str) -> str:
    """axpy's alpha * x + y becomes alpha * y + x."""
    head, sep, tail = text.partition(" = fma ")
    assert sep, "axpy.mlir has no fma"
    operands, rest = tail.split("  :", 1) if "  :" in tail else tail.split(" :", 1)
    a, x, y = (s.strip() for s in operands.split(","))
    return f"{head}{sep}{a}, {y}, {x} :{rest}"


@pytest.mark.parametrize("device", ["interp", "sm_90"])
def test_a_wrong_kernel_is_caught(device):
    wrong = nanotile.parse(_swap_fma_operands((EXAMPLES / "axpy.mlir").read_text()))
    ok, summary = check.run_one("axpy", wrong, device)
    assert not ok and "MISMATCH" in summary


def test_check_script_exit_status(tmp_path):
    """check.py exits 0 on the examples as shipped and 1 (naming the example) when a
    kernel is wrong; here, a copy of examples/ whose axpy is altered."""
    env_path = str(Path(nanotile.__file__).resolve().parents[1])
    env = {"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"}
    run = [sys.executable, "check.py", "axpy", "--devices", "interp"]
    good = subprocess.run(run, cwd=EXAMPLES, env=env, capture_output=True, text=True)
    assert good.returncode == 0, good.stderr
    assert "axpy" in good.stdout and " ok " in good.stdout

    copy = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "axpy.mlir").write_text(_swap_fma_operands((copy / "axpy.mlir").read_text()))
    assert nanotile_main([str(copy / "axpy.mlir"), "--emit=bytecode",
                              "-o", str(copy / "axpy.tileirbc")]) == 0
    bad = subprocess.run(run, cwd=copy, env=env, capture_output=True, text=True)
    assert bad.returncode == 1
    assert "axpy" in bad.stdout and "MISMATCH" in bad.stdout


def test_check_script_refuses_files_that_disagree(tmp_path):
    """A .tileirbc left behind after editing the .mlir is reported, not run."""
    copy = tmp_path / "examples"
    shutil.copytree(EXAMPLES, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "axpy.mlir").write_text(_swap_fma_operands((copy / "axpy.mlir").read_text()))
    env = {"PYTHONPATH": str(Path(nanotile.__file__).resolve().parents[1]),
           "PATH": "/usr/bin:/bin"}
    bad = subprocess.run([sys.executable, "check.py", "axpy", "--devices", "interp"],
                         cwd=copy, env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "not the same program" in bad.stdout + bad.stderr


@pytest.mark.skipif(importlib.util.find_spec("cuda") is None
                    or importlib.util.find_spec("cuda.tile") is None,
                    reason="cuTile Python (cuda-tile) is not installed: pip install -e "
                           "'.[oracles]'")
def test_files_are_what_cutile_exports_today():
    """Exporting the cuTile Python again (no GPU needed) gives the committed files."""
    env_path = str(Path(nanotile.__file__).resolve().parents[1])
    proc = subprocess.run([sys.executable, str(EXAMPLES / "export.py"), "--check"],
                          env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(": same") == 2 * len(NAMES)
