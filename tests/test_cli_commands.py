"""What every command does alike (nanotile, nanotile run, nanotile-opt, nanotile-translate,
python -m nanotile.passes): output files, help, --version, Ctrl-C, errors on the command
line. The kernel is written here: no corpus needed."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import numpy as np
import pytest

KERNEL = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<i32>>, %x: tile<i32>) {
    %c8 = constant <i32: 8> : tile<i32>
    %y = muli %x, %c8 : tile<i32>
    %t = store_ptr_tko weak %p, %y : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
"""


@pytest.fixture
def kernel(tmp_path) -> Path:
    path = tmp_path / "k.mlir"
    path.write_text(KERNEL)
    np.savez(tmp_path / "in.npz", p=np.zeros(1, np.int32), x=np.array(5, np.int32))
    return path


def _main(command: str):
    if command == "nanotile":
        from nanotile.cli import main
    elif command == "nanotile-opt":
        from nanotile.opt import main
    elif command == "nanotile-translate":
        from nanotile.translate import main
    else:
        from nanotile.cli_options import main
    return main


def _write_argv(command: str, source: Path, out: Path) -> tuple[str, list[str]]:
    """The command line of ``command`` that writes ``source``'s output to ``out``."""
    if command == "nanotile run":
        return "nanotile", ["run", str(source), "--grid", "1", "--inputs",
                            str(source.parent / "in.npz"), "--outputs", str(out)]
    if command == "nanotile-translate":
        return command, ["-mlir-to-cudatilebc", str(source), "-o", str(out)]
    return command, [str(source), "-o", str(out)]


WRITERS = ["nanotile", "nanotile run", "nanotile-opt", "nanotile-translate",
           "python -m nanotile.passes"]


@pytest.fixture
def umask():
    """Set the umask for one test (and put the old one back)."""
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


# -- output files ---------------------------------------------------------------------


@pytest.mark.parametrize("command", WRITERS)
def test_outputs_are_created_with_the_umask(command, kernel, tmp_path, umask, capsys):
    for mask, mode in ((0o022, 0o644), (0o077, 0o600), (0o002, 0o664)):
        out = tmp_path / f"out-{mask:o}"
        umask(mask)
        program, argv = _write_argv(command, kernel, out)
        assert _main(program)(argv) == 0, capsys.readouterr().err
        assert stat.S_IMODE(out.stat().st_mode) == mode, (command, oct(mask))


@pytest.mark.parametrize("command", WRITERS)
def test_a_replaced_output_keeps_its_mode(command, kernel, tmp_path, capsys):
    out = tmp_path / "out"
    out.write_text("old")
    out.chmod(0o640)
    program, argv = _write_argv(command, kernel, out)
    assert _main(program)(argv) == 0, capsys.readouterr().err
    assert out.read_bytes() != b"old" and stat.S_IMODE(out.stat().st_mode) == 0o640


@pytest.mark.parametrize("command", WRITERS)
def test_output_into_a_missing_folder_is_one_located_line(command, kernel, tmp_path, capsys):
    out = tmp_path / "missing" / "out"
    program, argv = _write_argv(command, kernel, out)
    assert _main(program)(argv) == 1
    err = capsys.readouterr().err
    assert err == (f"{out}: error: cannot write output: folder '{out.parent}' does not "
                   "exist\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.npz", "k.mlir"]


@pytest.mark.parametrize("command", WRITERS)
def test_output_under_a_file_is_one_located_line(command, kernel, tmp_path, capsys):
    out = tmp_path / "k.mlir" / "out"
    program, argv = _write_argv(command, kernel, out)
    assert _main(program)(argv) == 1
    assert capsys.readouterr().err == (f"{out}: error: cannot write output: "
                                       f"'{kernel}' is not a folder\n")


@pytest.mark.parametrize("command", WRITERS)
def test_a_failed_write_leaves_no_file(command, kernel, tmp_path, monkeypatch, capsys):
    """An error in the middle of writing (here: the disk is full) leaves the old output
    and no temporary file."""
    out = tmp_path / "out"
    out.write_text("previous\n")

    class Full:
        """A file whose every write fails (but the first few bytes')."""

        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return self.f.__exit__(*exc)

        def __getattr__(self, name):
            return getattr(self.f, name)

        def write(self, data):
            self.f.write(data[:3])
            raise OSError(28, "No space left on device")

    real_fdopen, real_open = os.fdopen, open
    monkeypatch.setattr(os, "fdopen", lambda fd, mode: Full(real_fdopen(fd, mode)))
    monkeypatch.setattr("builtins.open", lambda path, mode="r", *a, **k: (
        Full(real_open(path, mode, *a, **k)) if "w" in mode else real_open(path, mode, *a, **k)))
    program, argv = _write_argv(command, kernel, out)
    assert _main(program)(argv) == 1
    assert capsys.readouterr().err == (f"{out}: error: cannot write output: No space left "
                                       "on device\n")
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.npz", "k.mlir", "out"]


# -- --list-passes ----------------------------------------------------------------------


def test_list_passes_shows_whole_descriptions(capsys):
    from nanotile.cli import main
    from nanotile.passes.registry import PASSES

    assert main(["--list-passes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(PASSES)
    columns = set()
    for line, (name, cls) in zip(lines, sorted(PASSES.items())):
        first_paragraph = " ".join(cls.__doc__.strip().split("\n\n")[0].split())
        assert line.startswith(f"  {name} ") and line.endswith(f"  {first_paragraph}"), name
        columns.add(len(line) - len(first_paragraph))
    assert len(columns) == 1  # the descriptions start in one column
    branches = next(line for line in lines if "ptx-simplify-branches" in line)
    assert branches.endswith("drop jumps to the next label, unreachable code and unused "
                             "labels.")


# -- nanotile run -----------------------------------------------------------------------


def test_nanotile_run_targets_what_the_compiler_targets():
    import inspect

    import nanotile
    from nanotile.emulated_run import run_emulated
    from nanotile.passes.pipelines import DEFAULT_TARGET
    from nanotile.run_cli import _parser

    assert DEFAULT_TARGET == "sm_100"
    help_text = _parser().format_help()
    assert re.search(r"--gpu-name.*\n.*\(default\s+sm_100, as for\s+nanotile\)", help_text)
    assert inspect.signature(nanotile.run).parameters["gpu_name"].default is None
    assert inspect.signature(run_emulated).parameters["gpu_name"].default is None


def test_nanotile_run_defaults_to_the_compilers_gpu(kernel, tmp_path, monkeypatch, capsys):
    import nanotile.targets.compile as compile_module
    from nanotile.cli import main

    seen = []
    real = compile_module.compile_to_ptx
    monkeypatch.setattr(compile_module, "compile_to_ptx",
                        lambda module, gpu: seen.append(gpu) or real(module, gpu))
    assert main(["run", str(kernel), "--grid", "1", "--inputs", str(tmp_path / "in.npz"),
                 "--emulate"]) == 0, capsys.readouterr().err
    assert seen == ["sm_100"]


def test_nanotile_run_help_documents_abi_and_npz(capsys):
    from nanotile.cli import main

    assert main(["run", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert re.search(r"--abi \{auto,raw,cutile\} how the arrays of --inputs become", out)
    assert "the .npz convention:" in out
    for words in ("in the order they were saved", "a 0-d array is a scalar",
                  "its shape, its strides", "every array of rank >= 1",
                  "written whole or not at all", "np.savez('in.npz'"):
        assert words in out, words


def test_nanotile_run_prints_a_summary(kernel, tmp_path, capsys):
    from nanotile.cli import main

    out = tmp_path / "out.npz"
    argv = ["run", str(kernel), "--grid", "2,3", "--inputs", str(tmp_path / "in.npz")]
    assert main([*argv, "--outputs", str(out)]) == 0
    stdout, err = capsys.readouterr()
    assert stdout == ""
    assert re.fullmatch(rf"nanotile run: @k, grid 2x3 \(6 blocks\), the interpreter, "
                        rf"\d+\.\d\d\d s; wrote {re.escape(str(out))} \(p\)\n", err)
    assert np.load(out)["p"].tolist() == [40]
    assert main([*argv, "--emulate"]) == 0
    assert re.fullmatch(r"nanotile run: @k, grid 2x3 \(6 blocks\), the PTX emulator "
                        r"\(sm_100\), \d+\.\d\d\d s; no --outputs: nothing written\n",
                        capsys.readouterr().err)
    assert main([*argv, "-q"]) == 0
    assert capsys.readouterr().err == ""
