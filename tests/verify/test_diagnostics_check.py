"""MLIR's -verify-diagnostics protocol (nanotile.verify.diagnostics_check)."""

from __future__ import annotations

from pathlib import Path

import pytest

from nanotile.diagnostics import Diagnostic
from nanotile.verify.diagnostics_check import (
    check_expected,
    count_expectations,
    parse_expectations,
    split_input_file,
)

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "cuda-tile-tests"


def err(line, msg, severity="error", column=3):
    return Diagnostic(severity, msg, "t.mlir", line, column)


def test_designators_resolve_lines():
    lines = [
        "a",                                   # 1
        "// expected-error @below {{one}}",    # 2 -> 4 (skips the designator on 3)
        "// expected-note @below{{two}}",      # 3 -> 4
        "b",                                   # 4
        "// expected-error @above {{three}}",  # 5 -> 4
        "// expected-error @+2 {{four}}",      # 6 -> 8
        "// expected-error@-6 {{five}}",       # 7 -> 1
        "c  // expected-warning {{six}}",      # 8 -> 8
        "// expected-error @unknown {{seven}}",
    ]
    text = "\n".join(lines)
    exps, problems = parse_expectations(text)
    assert problems == []
    assert [(e.severity, e.line) for e in exps] == [
        ("error", 4), ("note", 4), ("error", 4), ("error", 8), ("error", 1),
        ("warning", 8), ("error", None)]


def test_all_matched():
    text = "// expected-error @below {{must be tile}}\nx = op\n"
    ok, report = check_expected(text, "t.mlir", [err(2, "'cuda_tile.addi' op must be tile")])
    assert ok and report == []


def test_missing_and_unexpected_reported_like_mlir():
    text = "// expected-error @below {{must be tile}}\nx = op\ny = op\n"
    ok, report = check_expected(text, "t.mlir", [err(3, "something else")])
    assert not ok
    assert "t.mlir:3:3: error: unexpected error: something else" in report
    assert 't.mlir:1:4: error: expected error "must be tile" was not produced' in report


def test_wrong_line_is_not_a_match():
    text = "// expected-error @below {{boom}}\nx\ny\n"
    ok, report = check_expected(text, "t.mlir", [err(3, "boom")])
    assert not ok and len(report) == 2


def test_severity_mismatch_is_a_near_miss():
    text = "// expected-error @below {{boom}}\nx\n"
    ok, report = check_expected(text, "t.mlir", [err(2, "boom", "warning")])
    assert not ok
    assert any("'warning' diagnostic emitted when expecting a 'error'" in r for r in report)


def test_notes_attached_to_errors_are_checked():
    text = ("// expected-note @below {{prior use here}}\nx\n"
            "// expected-error @below {{expects different type}}\ny\n")
    main = err(4, "use of value '%x' expects different type than prior uses")
    main.notes.append(err(2, "prior use here", "note"))
    assert check_expected(text, "t.mlir", [main]) == (True, [])
    main.notes.clear()
    ok, report = check_expected(text, "t.mlir", [main])
    assert not ok and 'expected note "prior use here" was not produced' in report[0]


def test_diagnostics_in_other_files_are_unexpected():
    text = "// expected-error @below {{boom}}\nx\n"
    other = Diagnostic("error", "boom", "/tmp/foo.py", 2, 1)
    ok, report = check_expected(text, "t.mlir", [other])
    assert not ok and report[0].startswith("/tmp/foo.py:2:1: error: unexpected error: boom")
    same = Diagnostic("error", "boom", "/abs/dir/t.mlir", 2, 1)
    assert check_expected(text, "t.mlir", [same]) == (True, [])


def test_regex_parts():
    text = "// expected-error @below {{dim {{[0-9]+}} must be}}\nx\n"
    assert check_expected(text, "t.mlir", [err(2, "op dim 12 must be a power")])[0]
    assert not check_expected(text, "t.mlir", [err(2, "op dim x must be")])[0]


def test_plain_text_is_not_a_regex():
    text = "// expected-error @below {{a.b (c)}}\nx\n"
    assert check_expected(text, "t.mlir", [err(2, "xx a.b (c) yy")])[0]
    assert not check_expected(text, "t.mlir", [err(2, "axb (c)")])[0]


def test_unknown_location():
    text = "// expected-error @unknown {{no position}}\n"
    diag = Diagnostic("error", "no position", "t.mlir")
    assert check_expected(text, "t.mlir", [diag]) == (True, [])


def test_no_expectations_no_diagnostics():
    assert check_expected("x\n", "t.mlir", []) == (True, [])


def test_split_input_file_keeps_line_numbers():
    text = "a\n// -----\nb\n// expected-error @below {{e}}\nc\n// -----\nd\n"
    chunks = split_input_file(text)
    assert len(chunks) == 3
    assert chunks[1].splitlines()[2:] == ["b", "// expected-error @below {{e}}", "c"]
    assert chunks[2].splitlines()[6] == "d"
    ok, _ = check_expected(chunks[1], "t.mlir", [err(5, "e")])
    assert ok
    # The expectation of chunk 1 does not leak into chunk 2.
    assert check_expected(chunks[2], "t.mlir", []) == (True, [])


@pytest.mark.parametrize("name,count", [("arith_invalid.mlir", 381), ("invalid.mlir", 274),
                                        ("math_invalid.mlir", 158)])
def test_counts_in_reference_files(name, count):
    path = CORPUS / "test" / "Dialect" / "CudaTile" / name
    if not path.exists():
        pytest.skip(f"{path} not found")
    text = path.read_text()
    assert count_expectations(text) == count
    # Every @below designator finds a line in its own chunk.
    for chunk in split_input_file(text):
        assert parse_expectations(chunk)[1] == []
