"""``nanotile-translate`` (nanotile.translate.main): cuda-tile-translate's flags.

The text side needs the parser and printer (issue 2); those tests are skipped while
nanotile.ir.parser / nanotile.ir.printer do not exist. The reference lit tests of
cuda-tile (test/Bytecode) run through tests/conformance.
"""

from __future__ import annotations

import importlib.util
import subprocess

import pytest

from nanotile.translate import main

from .corpus import CUTILE, REFERENCE_TESTS, corpus_files, normalise_ssa, nvidia_tool
from .forge import sample

HAVE_TEXT = all(importlib.util.find_spec(f"nanotile.ir.{m}") for m in ("parser", "printer"))
needs_text = pytest.mark.skipif(not HAVE_TEXT, reason="needs nanotile.ir.parser and "
                                "nanotile.ir.printer (issue 2)")
TILEIRDISASM = nvidia_tool("tileirdisasm")
NO_REFERENCE_TESTS = "needs ../shared/corpus/cuda-tile-tests (absent from a fresh clone)"
NO_CUTILE = "needs ../shared/corpus/cutile (absent from a fresh clone)"


def test_list_versions(capsys):
    assert main(["--list-versions"]) == 0
    # Production versions first, then NVIDIA's test-only versions (cuda-tile with tests).
    assert capsys.readouterr().out.split() == ["13.1", "13.2", "13.3", "13.4", "250.0",
                                               "250.1"]


@pytest.mark.parametrize("value", ["12.0", "13.5", "13", "x"])
def test_bad_bytecode_version_argument(value, capsys):
    assert main(["-mlir-to-cudatilebc", f"-bytecode-version={value}", "x.mlir"]) != 0
    err = capsys.readouterr().err
    assert f"Invalid argument '{value}': the supported versions are [13.1 - 13.4]" in err


@pytest.mark.skipif(not REFERENCE_TESTS.is_dir(), reason=NO_REFERENCE_TESTS)
def test_malformed_bytecode_is_one_error_and_no_output(tmp_path, capsys):
    """One error, then cuda-tile's enclosing step as a note."""
    out = tmp_path / "out.mlir"
    bad = REFERENCE_TESTS / "invalid" / "invalid_magic_number.tileirbc"
    assert main(["-cudatilebc-to-mlir", str(bad), "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2
    assert err[0].endswith("at byte offset 1: error: invalid magic number at position 0, "
                           "got 126 expected 127")
    assert err[1].endswith("at byte offset 1: note: failed to parse bytecode header")
    assert not out.exists()


def test_what_was_read_is_verified_as_cuda_tile_does(tmp_path, capsys):
    """The verifier's error, then cuda-tile's reader's summary as a note."""
    data = bytearray(sample())
    assert data[35:37] == b"\x44\x08"  # make_token : token
    data[36] = 3  # ... : ptr<f32>
    bad = tmp_path / "bad.tileirbc"
    bad.write_bytes(bytes(data))
    assert main(["-cudatilebc-to-mlir", str(bad), "-o", str(tmp_path / "out.mlir")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert "'cuda_tile.make_token' op result #0 must be cuda tile token type" in err[0]
    assert err[-1] == (f"{bad}: note: verification failed for deserialized "
                       "cuda_tile::ModuleOp")


TILEIRAS = nvidia_tool("tileiras")
ENTRY_WITHOUT_RETURN = """cuda_tile.module @m {
  entry @k(%n: tile<i32>) {
    %c = constant <i32: 0> : tile<i32>
    %b = cmpi less_than %c, %n, signed : tile<i32> -> tile<i1>
  }
}
"""


@pytest.mark.parametrize("body", ["last op", "empty"])
def test_an_entry_read_without_its_return_is_refused(body, tmp_path, capsys):
    """The bytecode reader checks nested blocks as it reads them, not an entry's body:
    the verifier does (a fuzzed file did print, without its return, and did not read
    back). The message and its place are tileiras' (compared when it is installed)."""
    from nanotile.bytecode.writer import write_bytecode
    from nanotile.ir.parser import parse_text

    module = parse_text(ENTRY_WITHOUT_RETURN, "k.mlir")
    ops = module.entries()[0].regions[0].blocks[0].ops
    del ops[-1 if body == "last op" else 0:]  # the parser's implicit return, or all
    bad = tmp_path / "bad.tileirbc"
    bad.write_bytes(write_bytecode(module))
    assert main(["-cudatilebc-to-mlir", str(bad), "-o", str(tmp_path / "out.mlir")]) == 1
    first = capsys.readouterr().err.splitlines()[0]
    expected = ("block with no terminator, has %1 = \"cuda_tile.cmpi\"(%0, %arg0)"
                if body == "last op" else "'cuda_tile.entry' op expects a non-empty block")
    assert first.startswith(f"{bad}: error: {expected}")
    assert not (tmp_path / "out.mlir").exists()
    if TILEIRAS is not None:
        nvidia = subprocess.run([str(TILEIRAS), "--gpu-name=sm_90", str(bad), "-o",
                                 str(tmp_path / "k.cubin")], capture_output=True, text=True,
                                timeout=60)
        assert nvidia.stderr.splitlines()[0].startswith(f"error: {expected}")


@pytest.mark.skipif(not CUTILE.is_dir(), reason=NO_CUTILE)
def test_unreadable_input(tmp_path, capsys):
    assert main(["-cudatilebc-to-mlir", str(tmp_path / "missing.tileirbc")]) == 1
    assert "cannot read file" in capsys.readouterr().err


@needs_text
@pytest.mark.skipif(not CUTILE.is_dir(), reason=NO_CUTILE)
def test_bytecode_to_text_prints_the_kernel(tmp_path):
    out = tmp_path / "va.mlir"
    assert main(["-cudatilebc-to-mlir", str(CUTILE / "vector_add.tileirbc"), "-o",
                 str(out)]) == 0
    text = out.read_text()
    assert "entry @vector_add" in text and "store_view_tko" in text


@needs_text
@pytest.mark.skipif(TILEIRDISASM is None, reason="NVIDIA tileirdisasm is not installed")
@pytest.mark.parametrize("path", corpus_files()[::40], ids=lambda p: p.stem)
def test_text_to_bytecode_disassembles_to_the_same_text(path, tmp_path):
    """tileirdisasm's text -> nanotile bytecode -> tileirdisasm gives the text back."""
    source = path.with_suffix(".mlir")
    out = tmp_path / "k.tileirbc"
    version = path.read_bytes()[9]
    assert main(["-mlir-to-cudatilebc", f"-bytecode-version=13.{version}", str(source),
                 "-o", str(out)]) == 0
    proc = subprocess.run([str(TILEIRDISASM), str(out)], check=False, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert normalise_ssa(proc.stdout) == normalise_ssa(source.read_text())


@needs_text
@pytest.mark.skipif(not CUTILE.is_dir(), reason=NO_CUTILE)
@pytest.mark.parametrize("name", ["vector_add", "layernorm"])
def test_text_with_debug_info_encodes_byte_exact(name, tmp_path):
    """tileirdisasm -g's text holds everything cuTile wrote: it encodes to the same bytes."""
    out = tmp_path / "k.tileirbc"
    assert main(["-mlir-to-cudatilebc", str(CUTILE / f"{name}.debug.mlir"), "-o",
                 str(out)]) == 0
    assert out.read_bytes() == (CUTILE / f"{name}.tileirbc").read_bytes()


@needs_text
def test_round_trip_flag(tmp_path, capsys):
    source = tmp_path / "k.mlir"
    source.write_text("cuda_tile.module @kernels {\n  entry @k() {\n    return\n  }\n}\n")
    assert main(["-test-cudatile-roundtrip", "-bytecode-version=13.1", str(source)]) == 0
    assert "entry @k()" in capsys.readouterr().out


@pytest.mark.skipif(not CUTILE.is_dir(), reason=NO_CUTILE)
def test_driver_emits_bytecode(tmp_path, capsys):
    """`nanotile FILE --emit=bytecode` re-encodes a bytecode file byte for byte, and
    writes other versions on request; a bad version is one error line and no file."""
    from nanotile.driver import main as driver_main

    source = CUTILE / "vector_add.tileirbc"
    out = tmp_path / "va.tileirbc"
    assert driver_main([str(source), "--emit=bytecode", "-o", str(out)]) == 0
    assert out.read_bytes() == source.read_bytes()
    assert driver_main([str(source), "--emit=bytecode", "--bytecode-version=13.1", "-o",
                        str(out)]) == 0
    assert out.read_bytes()[8:10] == b"\x0d\x01"
    bad = tmp_path / "bad.tileirbc"
    assert driver_main([str(source), "--emit=bytecode", "--bytecode-version=12.0", "-o",
                        str(bad)]) == 1
    assert "supported versions are [13.1 - 13.4]" in capsys.readouterr().err
    assert not bad.exists()


@needs_text
@pytest.mark.skipif(TILEIRDISASM is None, reason="NVIDIA tileirdisasm is not installed")
@pytest.mark.skipif(not REFERENCE_TESTS.is_dir(), reason=NO_REFERENCE_TESTS)
def test_reference_test_modules_encode_for_tileirdisasm(tmp_path):
    """Every module of cuda-tile's test suite that parses and verifies (entries and
    globals only) encodes to bytecode that tileirdisasm reads and that nanotile reads
    back to the same bytes: hand-written IR beyond what cuTile emits."""
    from nanotile.bytecode.reader import read_bytecode
    from nanotile.bytecode.writer import write_bytecode
    from nanotile.diagnostics import CompileError
    from nanotile.ir.parser import parse_text
    from nanotile.verify import verify_module
    from nanotile.verify.diagnostics_check import split_input_file

    checked, problems = 0, []
    for path in sorted(REFERENCE_TESTS.parent.rglob("*.mlir")):
        if "invalid" in path.parts:
            continue
        for k, chunk in enumerate(split_input_file(path.read_text())):
            try:
                module = parse_text(chunk, str(path))
            except CompileError:
                continue
            if any(op.name not in ("entry", "global") for op in module.items) or any(
                    d.severity == "error" for d in verify_module(module)):
                continue
            try:
                data = write_bytecode(module)
            except CompileError:
                continue  # e.g. a FusedLoc: refused as NVIDIA's writer does
            assert write_bytecode(read_bytecode(data, "x")) == data, (path.name, k)
            out = tmp_path / f"{checked}.tileirbc"
            out.write_bytes(data)
            proc = subprocess.run([str(TILEIRDISASM), str(out)], check=False,
                                  capture_output=True, text=True)
            if proc.returncode:
                problems.append(f"{path.name} chunk {k}: {proc.stderr.strip()[:200]}")
            checked += 1
    assert checked >= 40
    assert not problems, "\n".join(problems)


@needs_text
@pytest.mark.parametrize("text", [
    "",
    "cuda_tile.module @a {\n}\ncuda_tile.module @b {\n}\n",
])
def test_text_to_bytecode_needs_a_single_module(text, tmp_path, capsys):
    """cuda-tile-translate's getCudaTileModuleOp, at the module that MLIR's parser wraps a
    file's top level in: line 0, column 0. (For an explicit `module { ... }` cuda-tile
    names that module's own position, which nanotile's parser does not keep.)"""
    src = tmp_path / "m.mlir"
    src.write_text(text)
    out = tmp_path / "m.tileirbc"
    assert main(["-mlir-to-cudatilebc", str(src), "-o", str(out)]) == 1
    assert capsys.readouterr().err == (f"{src}:0:0: error: expected a single CUDA Tile IR "
                                       "module in the MLIR module\n")
    assert not out.exists()
