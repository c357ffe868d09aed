"""MLIR's ``-verify-diagnostics`` protocol: compare produced diagnostics with the
``expected-*`` comments written in the input.

A test input announces the diagnostics it must produce with comments such as::

    // expected-error @below {{'cuda_tile.addi' op operand #0 must be ...}}
    // expected-note @+2 {{prior use here}}
    %0 = ...  // expected-warning {{text on this very line}}

The designator after ``@`` says which line the diagnostic is on: none = this line,
``@+N``/``@-N`` = N lines after/before this one, ``@below`` = the next line that is not
itself an ``expected-*`` line, ``@above`` = the last such line before it, ``@unknown`` =
a diagnostic without a source position. The text between the outer ``{{`` ``}}`` must
occur in the message; any inner ``{{regex}}`` part is a regular expression.

``check_expected`` returns whether every produced diagnostic was expected and every
expected one was produced, plus MLIR-style report lines for the differences
(``file:L:C: error: unexpected error: ...`` and
``file:L:C: error: expected error "..." was not produced``).

``split_input_file`` cuts an input at ``// -----`` lines the way ``-split-input-file``
does, padding each chunk with empty lines so that line numbers stay those of the
original file; ``check_expected`` is then called once per chunk.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from nanotile.diagnostics import Diagnostic

SPLIT_MARKER = "// -----"

_EXPECTED = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *"
    r"(@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}$")


@dataclass
class Expectation:
    """One ``expected-*`` comment."""

    severity: str
    line: int | None  # 1-based line it refers to; None for @unknown
    text: str  # the text between the outer {{ }}
    comment_line: int  # where the comment is written
    comment_column: int
    pattern: re.Pattern[str] | None = None  # set when text has {{regex}} parts
    matched: bool = False

    def matches(self, message: str) -> bool:
        if self.pattern is not None:
            return self.pattern.search(message) is not None
        return self.text in message


def _compile_text(text: str) -> re.Pattern[str] | None:
    """A regex for a message with ``{{re}}`` parts; None when it is plain text."""
    if "{{" not in text:
        return None
    parts, pos = [], 0
    while True:
        start = text.find("{{", pos)
        if start < 0:
            parts.append(re.escape(text[pos:]))
            break
        end = text.find("}}", start + 2)
        if end < 0:
            parts.append(re.escape(text[pos:]))
            break
        parts.append(re.escape(text[pos:start]))
        parts.append("(?:" + text[start + 2:end] + ")")
        pos = end + 2
    try:
        return re.compile("".join(parts))
    except re.error:
        return None


def parse_expectations(source_text: str) -> tuple[list[Expectation], list[str]]:
    """The expectations written in ``source_text`` and problems with the comments."""
    expectations: list[Expectation] = []
    problems: list[str] = []
    pending_below: list[Expectation] = []
    last_plain_line = 0
    for index, raw in enumerate(source_text.splitlines()):
        line_no = index + 1
        line = raw.rstrip()
        m = _EXPECTED.search(line)
        if m is None:
            for e in pending_below:
                e.line = line_no
            pending_below.clear()
            last_plain_line = line_no
            continue
        severity, _, _, offset, text = m.groups()
        e = Expectation(severity, line_no, text, line_no, m.start() + 1,
                        _compile_text(text))
        expectations.append(e)
        if offset is None:
            continue
        if offset == "below":
            pending_below.append(e)
        elif offset == "above":
            e.line = last_plain_line
        elif offset == "unknown":
            e.line = None
        else:
            e.line = line_no + int(offset)
    for e in pending_below:
        problems.append(f"expected-{e.severity} @below at line {e.comment_line} "
                        "has no line below it")
    return expectations, problems


def _flatten(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Diagnostics with their attached notes, in emission order."""
    out: list[Diagnostic] = []
    for d in diagnostics:
        out.append(d)
        out.extend(_flatten(d.notes))
    return out


def _same_file(a: str, b: str) -> bool:
    return a == b or os.path.basename(a) == os.path.basename(b)


def _where(filename: str, line: int | None, column: int | None) -> str:
    if line is None:
        return filename
    return f"{filename}:{line}:{column or 1}"


def check_expected(source_text: str, filename: str,
                   diagnostics: list[Diagnostic]) -> tuple[bool, list[str]]:
    """Match produced ``diagnostics`` against the ``expected-*`` comments of the text.

    Returns (ok, report lines). A diagnostic is expected when a comment of the same
    severity refers to its line (or it has no line and the comment says ``@unknown``)
    and the comment's text occurs in its message. One comment may match several
    identical diagnostics, as in MLIR.
    """
    expectations, report = parse_expectations(source_text)
    for diag in _flatten(diagnostics):
        near_miss: Expectation | None = None
        found = False
        # A diagnostic located in another file (e.g. by a loc(...) attribute) cannot be
        # one this file expects, as in MLIR.
        here = diag.line is None or _same_file(diag.filename, filename)
        for e in expectations:
            if not here or e.line != diag.line or not e.matches(diag.message):
                continue
            if e.severity == diag.severity:
                e.matched = found = True
                break
            near_miss = near_miss or e
        if found:
            continue
        if near_miss is not None:
            report.append(f"{_where(filename, near_miss.comment_line, near_miss.comment_column)}"
                          f": error: '{diag.severity}' diagnostic emitted when expecting "
                          f"a '{near_miss.severity}'")
        else:
            where = _where(diag.filename if diag.line is not None else filename, diag.line,
                           diag.column)
            report.append(f"{where}: error: unexpected "
                          f"{diag.severity}: {diag.message}")
    for e in expectations:
        if not e.matched:
            report.append(f"{_where(filename, e.comment_line, e.comment_column)}: error: "
                          f"expected {e.severity} \"{e.text}\" was not produced")
    return not report, report


def count_expectations(source_text: str) -> int:
    """How many ``expected-*`` comments the text holds."""
    return len(parse_expectations(source_text)[0])


def split_input_file(text: str, marker: str = SPLIT_MARKER) -> list[str]:
    """Cut ``text`` at lines starting with ``// -----``.

    Each chunk is returned with the lines before it replaced by empty lines, so a
    position in a chunk is the position in the whole file.
    """
    lines = text.splitlines(keepends=True)
    chunks: list[str] = []
    start = 0
    for i, line in enumerate(lines):
        if line.lstrip().startswith(marker):
            chunks.append("\n" * start + "".join(lines[start:i]))
            start = i + 1
    chunks.append("\n" * start + "".join(lines[start:]))
    return chunks
