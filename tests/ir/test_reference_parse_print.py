"""cuda-tile's own parse/print tests, run as their RUN lines say with nanotile-opt in place
of cuda-tile-opt and the `filecheck` package in place of FileCheck:

    cuda-tile-opt %s | cuda-tile-opt | FileCheck %s
    cuda-tile-opt -mlir-print-op-generic %s | cuda-tile-opt | FileCheck %s
    cuda-tile-opt %s -split-input-file | FileCheck %s
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nanotile import opt

from .helpers import REFERENCE_TESTS

NAMES = ["ops", "arith", "conversion", "types", "dense_attr", "memory_consistency_ops",
         "opt_hints", "debuginfo_attr", "entry_opt_hints_default_silent"]


def _filecheck() -> str:
    exe = Path(sys.executable).parent / "filecheck"
    found = str(exe) if exe.exists() else shutil.which("filecheck")
    if not found:
        pytest.skip("the filecheck package is not installed")
    return found


def _cases() -> list[tuple[str, str]]:
    out = []
    for name in NAMES:
        path = REFERENCE_TESTS / f"{name}.mlir"
        runs = re.findall(r"// RUN: (.*)", path.read_text()) if path.exists() else ["missing"]
        for run in runs:
            if "cuda-tile-opt" in run and "round_trip" not in run:
                out.append((name, run))
    return out


def _opt(args: list[str], tmp_path: Path, tag: str) -> Path:
    out = tmp_path / f"{tag}.mlir"
    assert opt.main([*args, "-o", str(out)]) == 0, f"nanotile-opt {' '.join(args)} failed"
    return out


@pytest.mark.parametrize("name,run", _cases(), ids=[f"{n}:{r}" for n, r in _cases()])
def test_reference_file(name: str, run: str, tmp_path: Path) -> None:
    path = REFERENCE_TESTS / f"{name}.mlir"
    if not path.exists():
        pytest.skip(f"{path} not found")
    filecheck = _filecheck()
    stages = [s.strip() for s in run.split("|")]
    assert stages[-1] == "FileCheck %s", run
    current: Path | None = None
    for i, stage in enumerate(stages[:-1]):
        words = stage.split()
        assert words[0] == "cuda-tile-opt", stage
        args = [str(path) if w == "%s" else w for w in words[1:]]
        if current is not None:
            args.append(str(current))
        current = _opt(args, tmp_path, f"stage{i}")
    assert current is not None
    res = subprocess.run([filecheck, str(path)], stdin=current.open(), capture_output=True, check=False,
                         text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
