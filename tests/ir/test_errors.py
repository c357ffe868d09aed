"""Bad input gives one clear, located error (file:line:col, the line, a caret), exit code 1
and never a Python traceback. The CLIs run as subprocesses, as a user would run them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.shared_corpus import CUTILE, EXAMPLES, shared_file

from .helpers import run_cli

GOOD = EXAMPLES / "axpy.mlir"  # the kernel each case breaks in one spot


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _mutations() -> dict[str, tuple[str, str, str]]:
    """name -> (old, new, expected message); each replaces one spot of examples/axpy.mlir."""
    return {
        "missing_brace": ("  return\n}\n", "  return\n", "expected '}'"),
        "unknown_op": ("%24 = fma", "%24 = frobnicate", "custom op 'frobnicate' is unknown"),
        "undefined_value": ("fma %23, %17, %20", "fma %23, %17, %nope",
                            "use of undeclared SSA value name '%nope'"),
        "non_power_of_two": ("-> tile<128xf32>, token", "-> tile<100xf32>, token",
                             "all dimensions must be powers of two, got 100"),
        "type_mismatch": ("fma %23, %17, %20  : tile<128xf32>",
                          "fma %23, %17, %20  : tile<128xf16>",
                          "expects different type than prior uses"),
        "redefinition": ("%24 = fma", "%23 = fma", "redefinition of SSA value '%23'"),
        "bad_token": ("%24 = fma", "%24 = fma $", "unexpected character '$'"),
        "terminator_in_middle": ("  return\n}", "  return\n  return\n}",
                                 "'return' op must be the last operation"),
    }


@pytest.mark.parametrize("case", sorted(_mutations()))
@pytest.mark.parametrize("tool", ["nanotile.cli", "nanotile.opt"])
def test_bad_input(case: str, tool: str, tmp_path: Path) -> None:
    old, new, message = _mutations()[case]
    src = GOOD.read_text()
    assert old in src
    bad = _write(tmp_path, f"{case}.mlir", src.replace(old, new, 1))
    res = run_cli(tool, str(bad))
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr
    assert res.stdout == ""
    first = res.stderr.splitlines()[0]
    assert re.match(rf"{re.escape(str(bad))}:\d+:\d+: error: ", first), first
    assert message in first
    assert len([ln for ln in res.stderr.splitlines() if ": error: " in ln]) == 1
    caret = res.stderr.splitlines()[2]
    assert caret.strip() == "^"


def test_error_points_at_the_culprit(tmp_path: Path) -> None:
    src = GOOD.read_text().replace("fma %23, %17, %20", "fma %23, %17, %nope", 1)
    bad = _write(tmp_path, "u.mlir", src)
    res = run_cli("nanotile.cli", str(bad))
    line_no = next(i for i, ln in enumerate(src.splitlines(), 1) if "%nope" in ln)
    col = src.splitlines()[line_no - 1].index("%nope") + 1
    assert res.stderr.startswith(f"{bad}:{line_no}:{col}: error:")


def test_missing_file() -> None:
    res = run_cli("nanotile.cli", "/nonexistent/x.mlir")
    assert res.returncode == 1 and "cannot read file" in res.stderr
    assert "Traceback" not in res.stderr


def test_failed_compile_leaves_no_output(tmp_path: Path) -> None:
    bad = _write(tmp_path, "b.mlir", "entry @k() {\n  %0 = nope\n}\n")
    out = tmp_path / "out.mlir"
    out.write_text("previous contents\n")
    res = run_cli("nanotile.cli", str(bad), "-o", str(out))
    assert res.returncode == 1
    assert out.read_text() == "previous contents\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".nanotile-")] == []


@pytest.mark.parametrize("tool,flag", [("nanotile.opt", "-bogus-flag"),
                                       ("nanotile.opt", "--bogus-flag"),
                                       ("nanotile.cli", "--bogus-flag")])
def test_unknown_flag(tool: str, flag: str) -> None:
    res = run_cli(tool, str(GOOD), flag)
    assert res.returncode == 2
    assert flag in res.stderr and "Traceback" not in res.stderr


def test_comments_are_ignored_everywhere(tmp_path: Path) -> None:
    """A comment after the last token, inside ops, and with code-like text in it."""
    src = GOOD.read_text().replace("  return\n", "  return // the end } %x = bogus\n")
    p = _write(tmp_path, "c.mlir", "// leading } comment\n" + src + "// trailing %y")
    res = run_cli("nanotile.cli", str(p))
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize("path", [CUTILE / "layernorm.debug.mlir", EXAMPLES / "rms_norm.mlir"],
                         ids=["layernorm.debug", "example-rms_norm"])
def test_truncated_files_fail_cleanly(path: Path) -> None:
    """Cut a kernel at many places: each piece parses or gives a located CompileError,
    never another exception (that would be a traceback for the user). The corpus kernel
    has debug info (locations, scopes); the example has none."""
    from nanotile.diagnostics import CompileError
    from nanotile.ir.parser import parse_modules
    from nanotile.ir.printer import print_modules

    src = shared_file(path).read_text()
    for cut in range(0, len(src), max(1, len(src) // 150)):
        piece = src[:cut]
        try:
            print_modules(parse_modules(piece, "t.mlir"), debuginfo=True)
        except CompileError as e:
            assert all(d.line is not None for d in e.diagnostics), e.format(piece)
