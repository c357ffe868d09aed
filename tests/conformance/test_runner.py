"""The runner's own machinery: RUN-line parsing, substitutions, `not`, FileCheck pipes."""

from __future__ import annotations

from pathlib import Path

from tests.conformance import runner


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.mlir"
    path.write_text(text)
    return path


def test_run_lines_join_continuations():
    text = "// RUN: a %s \\\n// RUN:   | b\n// RUN: c\nx\n"
    runs = runner.run_lines(text)
    assert [(r.line, r.command) for r in runs] == [(1, "a %s | b"), (3, "c")]


def test_substitute_tools_and_paths(tmp_path):
    path = tmp_path / "dir" / "x.mlir"
    shell = runner.substitute("not cuda-tile-opt %s -o %t.bc | FileCheck %s "
                              "--check-prefix=A; cat %S/y", path, tmp_path)
    assert "__nt_tool nanotile.opt" in shell and "cuda-tile-opt" not in shell
    assert str(tmp_path / "x.mlir.tmp.bc") in shell.replace("'", "")
    assert "filecheck" in shell and "FileCheck" not in shell
    assert f"{tmp_path / 'dir'}/y" in shell.replace("'", "")


def test_filecheck_pipeline_passes_and_fails(tmp_path):
    good = _write(tmp_path, "// RUN: cat %s | FileCheck %s\n// CHECK: hello\nhello\n")
    assert runner.run_file(good).passed
    bad = _write(tmp_path, "// RUN: echo hi | FileCheck %s\n// CHECK: absent-word\n")
    result = runner.run_file(bad)
    assert not result.passed and result.runs[0].rc != 0


def test_check_prefixes(tmp_path):
    path = _write(tmp_path, "// RUN: echo foo bar | FileCheck %s --check-prefixes=A,B\n"
                            "// A: foo\n// B: bar\n// CHECK: not-checked\n")
    assert runner.run_file(path).passed
    path = _write(tmp_path, "// RUN: echo foo | FileCheck %s --check-prefix=B\n// B: bar\n")
    assert not runner.run_file(path).passed


def test_not_inverts_but_does_not_hide_crashes(tmp_path):
    assert runner.run_file(_write(tmp_path, "// RUN: not false\n")).passed
    assert not runner.run_file(_write(tmp_path, "// RUN: not true\n")).passed
    crash = _write(tmp_path, "// RUN: not sh -c 'kill -SEGV $$'\n")
    assert not runner.run_file(crash).passed


def test_pipefail(tmp_path):
    path = _write(tmp_path, "// RUN: false | cat\n")
    assert not runner.run_file(path).passed


def test_expected_diagnostics_counted_from_report(tmp_path):
    text = ("// RUN: cuda-tile-opt %s -verify-diagnostics\n"
            "// expected-error @below {{a}}\nx\n// expected-error @below {{b}}\ny\n")
    path = _write(tmp_path, text)
    result = runner.FileResult(path, expected_total=2)
    run = runner.RunLine(1, "cuda-tile-opt %s -verify-diagnostics")
    report = 't.mlir:4:4: error: expected error "b" was not produced\n'
    runner._count_matches(result, runner.RunOutcome(run, "", 1, report, False))
    assert result.expected_matched == 1
    runner._count_matches(result, runner.RunOutcome(run, "", 1, "No module named x", False))
    assert result.expected_matched == 0
    runner._count_matches(result, runner.RunOutcome(run, "", 0, "", True))
    assert result.expected_matched == 2


def test_table_reports_totals(tmp_path):
    path = _write(tmp_path, "// RUN: true\n")
    table = runner.format_table([runner.run_file(path)])
    assert "1/1" in table and "files passing: 1/1" in table


def test_check_not_ends_where_the_next_match_begins(tmp_path):
    """LLVM FileCheck's CHECK-NOT range (filecheck_llvm): the next match's own text is
    not searched, but the lines before it are."""
    import subprocess
    import sys

    checks = tmp_path / "checks.txt"
    checks.write_text("// CHECK: begin\n// CHECK-NOT: if\n// CHECK: label @inner_if\n")

    def filecheck(text: str) -> int:
        return subprocess.run([sys.executable, "-m", "tests.conformance.filecheck_llvm",
                               str(checks)], input=text, text=True, capture_output=True,
                              cwd=Path(__file__).resolve().parents[2]).returncode

    assert filecheck("begin\nlabel @inner_if\n") == 0
    assert filecheck("begin\nif\nlabel @inner_if\n") == 1
