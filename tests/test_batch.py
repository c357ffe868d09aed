"""``nanotile A B ...``: several inputs in worker processes, each compiled as if alone,
outputs in a directory (or in order on stdout), failures reported without stopping the
others, and a progress line on terminals."""

from __future__ import annotations

import io

import pytest

from nanotile.batch import _Progress
from nanotile.cli import main

KERNEL = """cuda_tile.module @m {{
  entry @{name}(%p: tile<ptr<i32>>, %x: tile<i32>) {{
    %c = constant <i32: {value}> : tile<i32>
    %y = muli %x, %c : tile<i32>
    %t = store_ptr_tko weak %p, %y : tile<ptr<i32>>, tile<i32> -> token
    return
  }}
}}
"""


@pytest.fixture
def kernels(tmp_path):
    paths = []
    for k, name in enumerate(["first", "second", "third"]):
        path = tmp_path / f"{name}.mlir"
        path.write_text(KERNEL.format(name=name, value=k + 8))
        paths.append(path)
    return paths


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_outputs_match_compiling_each_alone(capsys, kernels, tmp_path, jobs):
    out_dir = tmp_path / "out"
    status, _, err = run(capsys, *kernels, "-j", jobs, "--emit=bytecode", "-o", out_dir)
    assert status == 0, err
    for path in kernels:
        alone = tmp_path / "alone.tileirbc"
        assert run(capsys, path, "--emit=bytecode", "-o", alone)[0] == 0
        assert (out_dir / f"{path.stem}.tileirbc").read_bytes() == alone.read_bytes()


def test_ptx_of_several_kernels_in_workers(capsys, kernels, tmp_path):
    status, _, err = run(capsys, *kernels[:2], "-j2", "--emit=ptx", "--gpu-name=sm_90",
                         "-o", tmp_path / "ptx")
    assert status == 0, err
    for path in kernels[:2]:
        alone = tmp_path / "alone.ptx"
        assert run(capsys, path, "--gpu-name=sm_90", "-o", alone)[0] == 0
        assert (tmp_path / "ptx" / f"{path.stem}.ptx").read_text() == alone.read_text()


def test_text_goes_to_stdout_in_the_order_given(capsys, kernels):
    status, out, _ = run(capsys, kernels[2], kernels[0], "-j", "2")
    assert status == 0
    assert out.index("@third") < out.index("@first") and "@second" not in out


def test_a_failing_input_does_not_stop_the_others(capsys, kernels, tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("cuda_tile.module @m {\n  entry @k() {\n    nonsense\n  }\n}\n")
    out_dir = tmp_path / "out"
    status, _, err = run(capsys, kernels[0], bad, kernels[1], "-j", "2", "-o", out_dir)
    assert status == 1
    assert f"{bad}:3:" in err and "Traceback" not in err
    assert sorted(p.name for p in out_dir.iterdir()) == ["first.mlir", "second.mlir"]


@pytest.mark.parametrize("extra, message", [
    (["--emit=cubin"], "need -o DIR"),
    (["-", "-o", "DIR"], "standard input"),
    (["-j", "0"], "-j needs a positive number"),
])
def test_command_lines_that_cannot_work(capsys, kernels, tmp_path, extra, message):
    extra = [str(tmp_path / "d") if a == "DIR" else a for a in extra]
    status, _, err = run(capsys, *kernels, *extra)
    assert status == 2 and message in err


def test_two_inputs_for_one_output_file(capsys, kernels, tmp_path):
    other = tmp_path / "sub"
    other.mkdir()
    twin = other / "first.mlir"
    twin.write_text(kernels[0].read_text())
    status, _, err = run(capsys, kernels[0], twin, "-o", tmp_path / "out")
    assert status == 2 and "would both be written to" in err
    a_file = tmp_path / "file.txt"
    a_file.write_text("")
    assert "names a directory" in run(capsys, *kernels, "-o", a_file)[2]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_on_a_terminal_only():
    screen = Terminal()
    progress = _Progress(4, screen)
    progress.step(0)
    progress.clear()
    progress.step(1)
    progress.done()
    text = screen.getvalue()
    assert "1/4" in text and "2/4  1 failed" in text and text.endswith("\n")
    quiet = io.StringIO()
    _Progress(4, quiet).step(0)
    assert quiet.getvalue() == ""
