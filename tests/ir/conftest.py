"""Prints how many corpus files round-tripped (works under pytest-xdist too)."""

from __future__ import annotations


def pytest_terminal_summary(terminalreporter) -> None:
    counts: dict[str, int] = {}
    for outcome in ("passed", "failed", "xfailed", "skipped"):
        for rep in terminalreporter.stats.get(outcome, []):
            if "test_corpus_roundtrip.py::test_roundtrip[" in getattr(rep, "nodeid", "") \
                    and getattr(rep, "when", "call") == "call":
                counts[outcome] = counts.get(outcome, 0) + 1
    if counts:
        total = sum(counts.values())
        terminalreporter.write_line(
            f"corpus round trip: {total} files; parsed+fixpoint+equal to input: "
            f"{counts.get('passed', 0)}; known differences: {counts.get('xfailed', 0)}; "
            f"failed: {counts.get('failed', 0)}")
