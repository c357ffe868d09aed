"""``nanotile run``: runs a corpus kernel on .npz inputs; every error is one clean line
(exit status 1 or 2, no traceback) and a failed run writes no output file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nanotile.cli import main

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "cutile"
VECTOR_ADD = str(CORPUS / "vector_add.tileirbc")


@pytest.fixture
def inputs(tmp_path):
    a = np.arange(3000, dtype=np.float32)
    b = np.full(3000, 0.5, np.float32)
    path = tmp_path / "in.npz"
    np.savez(path, a=a, b=b, c=np.zeros(3000, np.float32))
    return path, a, b


def test_run_vector_add_cutile_abi(inputs, tmp_path):
    path, a, b = inputs
    out = tmp_path / "out.npz"
    assert main(["run", VECTOR_ADD, "--kernel", "vector_add", "--grid", "3",
                 "--inputs", str(path), "--outputs", str(out)]) == 0
    with np.load(out) as got:
        assert sorted(got.files) == ["a", "b", "c"]
        np.testing.assert_array_equal(got["c"], a + b)


def test_run_raw_abi(tmp_path):
    a = np.arange(5, dtype=np.float32)
    args = {"a": a, "an": np.int32(5), "as": np.int32(1), "b": a, "bn": np.int32(5),
            "bs": np.int32(1), "c": np.zeros(5, np.float32), "cn": np.int32(5),
            "cs": np.int32(1)}
    np.savez(tmp_path / "in.npz", **args)
    assert main(["run", VECTOR_ADD, "--grid", "1", "--abi", "raw", "--inputs",
                 str(tmp_path / "in.npz"), "--outputs", str(tmp_path / "o.npz")]) == 0
    with np.load(tmp_path / "o.npz") as got:
        np.testing.assert_array_equal(got["c"], 2 * a)


@pytest.mark.parametrize("argv,code,message", [
    (["--grid", "3,x"], 2, "--grid: expected"),
    (["--grid", "0"], 2, "--grid: expected"),
    (["--grid", "1", "--kernel", "nope"], 1, "no kernel named 'nope'"),
    (["--grid", "1"], 1, "takes 9 arguments, 0 given"),
])
def test_errors_are_clean(argv, code, message, capsys):
    assert main(["run", VECTOR_ADD, *argv]) == code
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_missing_file_and_bad_inputs(tmp_path, capsys):
    assert main(["run", str(tmp_path / "none.mlir"), "--grid", "1"]) == 1
    assert "cannot read file" in capsys.readouterr().err
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    assert main(["run", VECTOR_ADD, "--grid", "1", "--inputs", str(bad)]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_runtime_error_writes_no_output(tmp_path, capsys):
    # Arrays too short for the shape the kernel is told: an out-of-bounds access.
    short = np.zeros(4, np.float32)
    args = {"a": short, "an": np.int32(4096), "as": np.int32(1), "b": short,
            "bn": np.int32(4096), "bs": np.int32(1), "c": short.copy(),
            "cn": np.int32(4096), "cs": np.int32(1)}
    np.savez(tmp_path / "in.npz", **args)
    out = tmp_path / "out.npz"
    assert main(["run", VECTOR_ADD, "--grid", "1", "--inputs", str(tmp_path / "in.npz"),
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
    src.write_text((CORPUS / "vector_add.mlir").read_text())
    a = np.arange(10, dtype=np.float32)
    np.savez(tmp_path / "in.npz", a=a, b=a, c=np.zeros(10, np.float32))
    assert main(["run", str(src), "--grid", "1", "--inputs", str(tmp_path / "in.npz"),
                 "--outputs", str(tmp_path / "out.npz")]) == 0
    with np.load(tmp_path / "out.npz") as got:
        np.testing.assert_array_equal(got["c"], 2 * a)


def test_trace_logs_each_op(inputs, capsys):
    path, _, _ = inputs
    assert main(["run", VECTOR_ADD, "--grid", "3", "--inputs", str(path), "--trace"]) == 0
    lines = capsys.readouterr().err.splitlines()
    adds = [line for line in lines if " addf " in f"{line} "]
    assert len(adds) == 3 and adds[1].startswith("[1,0,0] addf")
    assert "tile<1024xf32> = [1024.5, 1025.5, 1026.5, 1027.5, ...]" in adds[1]


def test_unwritable_output_is_reported(inputs, tmp_path, capsys):
    path, _, _ = inputs
    out = tmp_path / "missing" / "out.npz"
    assert main(["run", VECTOR_ADD, "--grid", "3", "--inputs", str(path),
                 "--outputs", str(out)]) == 1
    err = capsys.readouterr().err
    assert err == f"{out}: error: cannot write output: folder '{out.parent}' does not exist\n"
