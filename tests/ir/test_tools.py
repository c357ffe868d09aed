"""The `nanotile` driver and `nanotile-opt`: what they print, their options and files."""

from __future__ import annotations

from pathlib import Path

import pytest

from nanotile import opt
from nanotile.ir.parser import parse_modules, parse_text
from nanotile.ir.printer import print_module, print_modules

from tests.shared_corpus import CUTILE, EXAMPLES, needs_shared, shared_file

from .helpers import normalise_names, run_cli

MATMUL = CUTILE / "matmul_f16.mlir"  # tileirdisasm's text of cuTile's bytecode
EXAMPLE = EXAMPLES / "matmul_f16.mlir"  # nanotile's text of it (under a comment header)


def _without_comments(text: str) -> str:
    return "".join(line for line in text.splitlines(True) if not line.startswith("//"))


@needs_shared(MATMUL)
def test_driver_prints_matmul_kernel() -> None:
    res = run_cli("nanotile.cli", str(MATMUL))
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("entry @matmul_f16(%arg0: tile<ptr<f16>>")
    assert "mmaf %" in res.stdout
    # the same text as NVIDIA's tileirdisasm printed, up to SSA numbering
    assert normalise_names(res.stdout) == normalise_names(MATMUL.read_text())


@needs_shared(MATMUL)
def test_driver_reads_bytecode() -> None:
    res = run_cli("nanotile.cli", str(CUTILE / "matmul_f16.tileirbc"))
    assert res.returncode == 0, res.stderr
    assert normalise_names(res.stdout) == normalise_names(MATMUL.read_text())


def test_driver_prints_the_example_as_shipped() -> None:
    """examples/matmul_f16: the text and the bytecode both print as the shipped text (a
    fixed point of the printer, the comment header aside)."""
    for path in (EXAMPLE, EXAMPLE.with_suffix(".tileirbc")):
        res = run_cli("nanotile.cli", str(path))
        assert res.returncode == 0, res.stderr
        assert res.stdout.startswith("entry @matmul_f16(%arg0: tile<ptr<f16>>")
        assert "mmaf %" in res.stdout and " = for " in res.stdout
        assert res.stdout == _without_comments(EXAMPLE.read_text())


def test_driver_output_file(tmp_path: Path) -> None:
    out = tmp_path / "k.mlir"
    res = run_cli("nanotile.cli", str(EXAMPLE), "-o", str(out), "--emit=text")
    assert res.returncode == 0 and res.stdout == ""
    assert out.read_text() == _without_comments(EXAMPLE.read_text())


def test_generic_form_round_trips() -> None:
    """custom -> generic -> parse -> custom gives the same text."""
    for path in sorted(CUTILE.glob("*.mlir")) + sorted(EXAMPLES.glob("*.mlir")):
        custom = print_modules(parse_modules(path.read_text(), path.name))
        generic = print_modules(parse_modules(custom, "c"), generic=True)
        assert '"cuda_tile.' in generic
        assert print_modules(parse_modules(generic, "g")) == custom, path.name


def test_generic_form_writes_i32_enums_as_cuda_tile_does() -> None:
    """Memory ordering, memory scope and atomic modes are plain i32 attributes in
    cuda-tile (no attribute of the dialect): `memory_ordering_semantics = 2 : i32`."""
    text = ("cuda_tile.module @m {\n  entry @k(%p: tile<ptr<i32>>, %v: tile<i32>) {\n"
            "    %0, %1 = atomic_rmw_tko relaxed device %p, xchg, %v : tile<ptr<i32>>, "
            "tile<i32> -> tile<i32>, token\n    return\n  }\n}\n")
    generic = print_modules(parse_modules(text, "t"), generic=True)
    assert "memory_ordering_semantics = 1 : i32" in generic
    assert "memory_scope = 1 : i32" in generic and "mode = 9 : i32" in generic
    assert print_modules(parse_modules(generic, "g")) == print_modules(parse_modules(text, "t"))


def test_debuginfo_round_trips() -> None:
    path = shared_file(CUTILE / "vector_add.debug.mlir")
    src = path.read_text()
    m = parse_text(src, path.name)
    assert any(op.location is not None for op in m.walk())
    out = print_module(m, debuginfo=True)
    assert normalise_names(out) == normalise_names(src)
    plain = print_module(m)
    assert "loc(" not in plain and "#loc" not in plain


def test_unregistered_ops_need_the_flag(tmp_path: Path) -> None:
    src = ('cuda_tile.module @m {\n  entry @k() {\n    "foo.bar"() {x = 1 : i32} : () -> ()\n'
           '    return\n  }\n}\n')
    p = tmp_path / "u.mlir"
    p.write_text(src)
    res = run_cli("nanotile.opt", str(p))
    assert res.returncode == 1 and "unregistered operation 'foo.bar'" in res.stderr
    res = run_cli("nanotile.opt", "--allow-unregistered-dialect", str(p))
    assert res.returncode == 0, res.stderr
    assert '"foo.bar"() {x = 1 : i32} : () -> ()' in res.stdout


def test_opt_reads_stdin_and_splits() -> None:
    a = "cuda_tile.module @a {\n  entry @k() {\n    return\n  }\n}\n"
    b = "cuda_tile.module @b {\n  entry @k() {\n    return\n  }\n}\n"
    res = run_cli("nanotile.opt", "-split-input-file", "-", stdin=a + "// -----\n" + b)
    assert res.returncode == 0, res.stderr
    parts = res.stdout.split("// -----\n")
    assert len(parts) == 2 and "@a" in parts[0] and "@b" in parts[1]


def test_split_keeps_file_line_numbers(tmp_path: Path) -> None:
    good = "cuda_tile.module @a {\n  entry @k() {\n    return\n  }\n}\n"
    bad = "cuda_tile.module @b {\n  entry @k() {\n    %0 = nope\n  }\n}\n"
    p = tmp_path / "s.mlir"
    p.write_text(good + "// -----\n" + bad)
    res = run_cli("nanotile.opt", "-split-input-file", str(p))
    assert res.returncode == 1
    assert res.stderr.startswith(f"{p}:9:10: error: custom op 'nope' is unknown")


def test_verify_diagnostics(tmp_path: Path) -> None:
    src = ("cuda_tile.module @m {\n  entry @k() {\n"
           "    // expected-error @below {{use of undeclared SSA value name '%x'}}\n"
           "    %0 = negf %x : tile<f32>\n    return\n  }\n}\n")
    p = tmp_path / "d.mlir"
    p.write_text(src)
    assert opt.main(["-verify-diagnostics", str(p), "-o", str(tmp_path / "o")]) == 0
    p.write_text(src.replace("'%x'", "'%y'"))
    assert opt.main(["-verify-diagnostics", str(p), "-o", str(tmp_path / "o")]) == 1


def test_flag_spellings(tmp_path: Path) -> None:
    out1, out2 = tmp_path / "1.mlir", tmp_path / "2.mlir"
    assert opt.main(["-mlir-print-op-generic", str(EXAMPLE), "-o", str(out1)]) == 0
    assert opt.main(["--mlir-print-op-generic", str(EXAMPLE), f"--o={out2}"]) == 0
    assert out1.read_text() == out2.read_text()
    assert '"cuda_tile.mmaf"' in out1.read_text()


@needs_shared(MATMUL)  # tileirdisasm's text names its values (%assume...); nanotile's does not
def test_discard_value_names() -> None:
    """--discard-value-names numbers every value, as text read back from bytecode is."""
    res = run_cli("nanotile.opt", "--discard-value-names", str(MATMUL))
    assert res.returncode == 0, res.stderr
    assert "%assume" not in res.stdout and "%0 = make_token" in res.stdout
    assert normalise_names(res.stdout) == normalise_names(MATMUL.read_text())


def test_opt_lists_passes(capsys: pytest.CaptureFixture[str]) -> None:
    """-list-passes: the table of nanotile --list-passes, cuda-tile-opt's passes among them."""
    from nanotile.cli_options import pass_table

    assert opt.main(["-list-passes"]) == 0
    out = capsys.readouterr().out
    assert out == pass_table()
    assert "  loop-split  " in out and "  fuse-fma" not in out  # fuse-fma: an alias
    assert opt.main(["--help"]) == 0
    assert "-list-passes" in capsys.readouterr().out


def test_opt_pass_with_options() -> None:
    """-PASS=OPTIONS, as mlir-opt gives a pass its options; a wrong option is an error."""
    args = opt.parse_args(["-loop-split=split-threshold=2", "--cse"])
    assert args.extra["passes"] == ["loop-split{split-threshold=2}", "cse"]
    res = run_cli("nanotile.opt", "-loop-split=colour=red", str(EXAMPLE))
    assert res.returncode == 1 and "pass 'loop-split' has no option 'colour'" in res.stderr
    assert "Traceback" not in res.stderr
