"""The reproducers of ../shared/robustness: inputs that once crashed, hung or gave a wrong
answer. Each NAME.txt holds the shell command that showed it (run from that folder); every
one must now end in a located error with exit status 1, or succeed with the right result.

The commands run as written, in a scratch copy of the folder (they write files beside
their inputs), with this environment's `nanotile` programs first on PATH."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.shared_corpus import SHARED, missing_reason

ROBUSTNESS = SHARED / "robustness"
REPRODUCERS = sorted(ROBUSTNESS.glob("*.txt")) if ROBUSTNESS.is_dir() else []
# `file:line:col: error:`, `file: error:` (no position for whole-file or run-time errors),
# `file: at byte offset N: error:` (bytecode), or a command-line error of one of the programs
LOCATED = re.compile(r"^(\S+?(:\d+)*: error: |\S+: at byte offset \d+: error: "
                     r"|nanotile[\w -]*: error: )", re.M)
HANG_GUARD_S = 600  # a reproducer that hung must not hang the suite; not a speed check


def _commands(note: Path) -> list[str]:
    """The shell commands of a reproducer's note (comments after `#` dropped)."""
    commands = []
    for line in note.read_text().splitlines():
        command = line.split("#", 1)[0].strip()
        if command.startswith(("nanotile", "time nanotile")):
            commands.append(command)
    return commands


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """A writable copy of the robustness folder, with ../corpus beside it as there."""
    if not ROBUSTNESS.is_dir():
        pytest.skip(missing_reason(ROBUSTNESS))
    folder = tmp_path / "robustness"
    shutil.copytree(ROBUSTNESS, folder)
    (tmp_path / "corpus").symlink_to(SHARED / "corpus")
    return folder


def _run(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = str(Path(sys.executable).parent)
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""))
    return subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=folder, env=env,
                           capture_output=True, text=True, timeout=HANG_GUARD_S)


@pytest.mark.skipif(not REPRODUCERS, reason=missing_reason(ROBUSTNESS))
@pytest.mark.parametrize("note", REPRODUCERS, ids=lambda p: p.stem)
def test_reproducer_ends_cleanly(note: Path, scratch: Path) -> None:
    commands = _commands(note)
    if not commands:
        pytest.skip(f"{note.name} names no command (an API reproducer: tested below)")
    for command in commands:
        result = _run(command, scratch)
        output = result.stdout + result.stderr
        assert "Traceback" not in output, f"{command}\n{output[-2000:]}"
        assert result.returncode in (0, 1), f"{command}: exit {result.returncode}\n{output}"
        if result.returncode == 1:
            assert LOCATED.search(result.stderr), f"{command}: unlocated error\n{output}"


def _shared(name: str) -> Path:
    path = ROBUSTNESS / name
    if not path.exists():
        pytest.skip(missing_reason(path))
    return path


def test_printed_text_reads_back_to_itself(scratch: Path) -> None:
    """Symbol names and hint keys that are no identifiers are printed quoted."""
    _shared("quoted_symbol_roundtrip.mlir")
    for name in ("quoted_symbol_roundtrip.mlir", "hint_key_unquoted.tileirbc"):
        once = _run(f"nanotile {name}", scratch)
        assert once.returncode == 0, once.stderr
        twice = _run(f"nanotile {name} | nanotile -", scratch)
        assert twice.returncode == 0 and twice.stdout == once.stdout, twice.stderr


@pytest.mark.parametrize("inputs", ["run_dtype_int32_for_f32.npz", "run_dtype_str_for_f32.npz"])
@pytest.mark.parametrize("device", [[], ["--emulate", "--gpu-name=sm_90"]], ids=["interp", "emulator"])
def test_run_refuses_arrays_of_another_dtype(inputs: str, device: list[str], scratch: Path) -> None:
    _shared(inputs)
    kernel = SHARED / "corpus" / "cutile" / "vector_add.mlir"
    result = _run(" ".join(["nanotile run", str(kernel), "--grid 1", "--inputs", inputs,
                            "--outputs o.npz", *device]), scratch)
    assert result.returncode == 1
    assert "argument 0 of 'vector_add': an array of" in result.stderr
    assert "(expected float32)" in result.stderr
    assert not (scratch / "o.npz").exists()


def test_run_accepts_the_exact_dtype(scratch: Path) -> None:
    kernel = SHARED / "corpus" / "cutile" / "vector_add.mlir"
    if not kernel.exists():
        pytest.skip(missing_reason(kernel))
    a = np.arange(1024, dtype=np.float32)
    np.savez(scratch / "in.npz", a=a, b=a, c=np.zeros_like(a))
    result = _run(f"nanotile run {kernel} --grid 1 --inputs in.npz --outputs o.npz -q", scratch)
    assert result.returncode == 0, result.stderr
    assert np.array_equal(np.load(scratch / "o.npz")["c"], 2 * a)


def test_translate_refuses_a_predicate_that_is_none(scratch: Path) -> None:
    """As cuda-tile's reader (and tileirdisasm): an assume whose predicate is an integer
    is refused while reading, nothing is printed. (What reads but does not verify is
    refused too: tests/bytecode/test_translate.py.)"""
    _shared("print_assume_predicate_int.tileirbc")
    result = _run("nanotile-translate -cudatilebc-to-mlir print_assume_predicate_int.tileirbc",
                  scratch)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("print_assume_predicate_int.tileirbc: at byte offset 92: "
                                     "error: failed to cast parsed attribute to "
                                     "AssumePredicateAttrInterface\n")


def test_grid_beyond_the_gpu_limits_is_refused(tmp_path: Path) -> None:
    from nanotile import run
    from nanotile.interp import InterpError
    from tests.shared_corpus import EXAMPLES

    result = _run(f"nanotile run {EXAMPLES / 'axpy.tileirbc'} --grid 100000,100000,100000",
                  tmp_path)
    assert result.returncode == 2
    assert "grid size 100000 along y exceeds the GPU limit 65535" in result.stderr
    for device in ("interp", "emulator"):
        with pytest.raises(InterpError, match="along z exceeds the GPU limit 65535"):
            run(EXAMPLES / "axpy.tileirbc", "axpy", (1, 1, 65536), device=device)


def test_progress_is_reported_per_block() -> None:
    from nanotile import run
    from nanotile.interp import cutile_args
    from tests.shared_corpus import EXAMPLES

    a = np.arange(300, dtype=np.float32)
    for device in ("interp", "emulator"):
        calls: list[tuple[int, int]] = []
        arguments = cutile_args(a, a.copy(), np.zeros_like(a), np.float32(2))
        run(EXAMPLES / "axpy.tileirbc", "axpy", 3, *arguments, device=device,
            progress=lambda done, total: calls.append((done, total)))
        assert calls and calls[-1] == (3, 3), (device, calls)


@pytest.mark.parametrize(("dtype", "pointee", "accepted"), [
    ("float32", "f32", True), ("int32", "f32", False), ("<U1", "f32", False),
    ("uint32", "f32", False), ("float64", "f32", False), ("int32", "i32", True),
    ("uint32", "i32", True), ("float32", "i32", False), ("bool", "i1", True),
    ("uint16", "bf16", True), ("float16", "bf16", False), ("uint16", "f16", False),
    ("float32", "tf32", True), ("uint8", "f8E4M3FN", True), ("int8", "f8E4M3FN", False),
])
def test_pointer_arguments_take_their_pointee_dtype(dtype: str, pointee: str,
                                                    accepted: bool) -> None:
    from nanotile.interp.dtypes import accepts_array
    from nanotile.ir.types import ELEMENT_TYPES

    assert accepts_array(np.dtype(dtype), ELEMENT_TYPES[pointee]) is accepted
