"""``nanotile run``: runs a kernel (examples/axpy: out = alpha * x + y) on .npz inputs; every error is one clean line
(exit status 1 or 2, no traceback) and a failed run writes no output file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nanotile.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
AXPY = str(EXAMPLES / "axpy.tileirbc")  # 128 elements per block


@pytest.fixture
def inputs(tmp_path):
    a = np.arange(3000, dtype=np.float32)
    b = np.full(3000, 0.5, np.float32)
    path = tmp_path / "in.npz"
    np.savez(path, x=a, y=b, out=np.zeros(3000, np.float32), alpha=np.float32(2))
    return path, a, b


def test_run_axpy_cutile_abi(inputs, tmp_path):
    path, a, b = inputs
    out = tmp_path / "out.npz"
    assert main(["run", AXPY, "--kernel", "axpy", "--grid", "24",
                 "--inputs", str(path), "--outputs", str(out)]) == 0
    with np.load(out) as got:
        assert sorted(got.files) == ["out", "x", "y"]  # arrays only, not the scalar alpha
        np.testing.assert_array_equal(got["out"], 2 * a + b)


def test_run_raw_abi(tmp_path):
    a = np.arange(5, dtype=np.float32)
    args = {"x": a, "xn": np.int32(5), "xs": np.int32(1), "y": a, "yn": np.int32(5),
            "ys": np.int32(1), "out": np.zeros(5, np.float32), "outn": np.int32(5),
            "outs": np.int32(1), "alpha": np.float32(3)}
    np.savez(tmp_path / "in.npz", **args)
    assert main(["run", AXPY, "--grid", "1", "--abi", "raw", "--inputs",
                 str(tmp_path / "in.npz"), "--outputs", str(tmp_path / "o.npz")]) == 0
    with np.load(tmp_path / "o.npz") as got:
        np.testing.assert_array_equal(got["out"], 4 * a)


@pytest.mark.parametrize("argv,code,message", [
    (["--grid", "3,x"], 2, "--grid: expected"),
    (["--grid", "0"], 2, "--grid: expected"),
    (["--grid", "1", "--kernel", "nope"], 1, "no kernel named 'nope'"),
    (["--grid", "1"], 1, "takes 10 arguments, 0 given"),
])
def test_errors_are_clean(argv, code, message, capsys):
    assert main(["run", AXPY, *argv]) == code
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_missing_file_and_bad_inputs(tmp_path, capsys):
    assert main(["run", str(tmp_path / "none.mlir"), "--grid", "1"]) == 1
    assert "cannot read file" in capsys.readouterr().err
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    assert main(["run", AXPY, "--grid", "1", "--inputs", str(bad)]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_runtime_error_writes_no_output(tmp_path, capsys):
    # Arrays too short for the shape the kernel is told: an out-of-bounds access.
    short = np.zeros(4, np.float32)
    args = {"x": short, "xn": np.int32(4096), "xs": np.int32(1), "y": short,
            "yn": np.int32(4096), "ys": np.int32(1), "out": short.copy(),
            "outn": np.int32(4096), "outs": np.int32(1), "alpha": np.float32(1)}
    np.savez(tmp_path / "in.npz", **args)
    out = tmp_path / "out.npz"
    assert main(["run", AXPY, "--grid", "1", "--inputs", str(tmp_path / "in.npz"),
                 "--outputs", str(out)]) == 1
    err = capsys.readouterr().err
    assert "outside every array" in err and "Traceback" not in err
    assert not out.exists()


def test_parse_error_is_a_diagnostic(tmp_path, capsys):
    bad = tmp_path / "bad.mlir"
    bad.write_text("cuda_tile.module @m {\n  entry @k() {\n    %0 = bogus_op : tile<i32>\n"
                   "    return\n  }\n}\n")
    assert main(["run", str(bad), "--grid", "1"]) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3:" in err and "error:" in err and "Traceback" not in err


def test_run_text_file_with_a_single_entry(tmp_path):
    src = tmp_path / "k.mlir"
    src.write_text((EXAMPLES / "axpy.mlir").read_text())
    a = np.arange(10, dtype=np.float32)
    np.savez(tmp_path / "in.npz", x=a, y=a, out=np.zeros(10, np.float32),
             alpha=np.float32(-1))
    assert main(["run", str(src), "--grid", "1", "--inputs", str(tmp_path / "in.npz"),
                 "--outputs", str(tmp_path / "out.npz")]) == 0
    with np.load(tmp_path / "out.npz") as got:
        np.testing.assert_array_equal(got["out"], np.zeros(10, np.float32))


def test_trace_logs_each_op(inputs, capsys):
    path, _, _ = inputs
    assert main(["run", AXPY, "--grid", "24", "--inputs", str(path), "--trace"]) == 0
    lines = capsys.readouterr().err.splitlines()
    fmas = [line for line in lines if " fma " in f"{line} "]
    assert len(fmas) == 24 and fmas[1].startswith("[1,0,0] fma")
    assert "tile<128xf32> = [256.5, 258.5, 260.5, 262.5, ...]" in fmas[1]


def test_unwritable_output_is_reported(inputs, tmp_path, capsys):
    path, _, _ = inputs
    out = tmp_path / "missing" / "out.npz"
    assert main(["run", AXPY, "--grid", "24", "--inputs", str(path),
                 "--outputs", str(out)]) == 1
    err = capsys.readouterr().err
    assert err == f"{out}: error: cannot write output: folder '{out.parent}' does not exist\n"
