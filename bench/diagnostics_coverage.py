"""Which of cuda-tile's diagnostics nanotile gives, by cuda-tile source file.

    .venv/bin/python bench/diagnostics_coverage.py --cuda-tile PATH [--missing]

PATH is NVIDIA/cuda-tile: a checkout, or a bare git repository (read at HEAD), e.g. the
mirror that `fetch github:NVIDIA/cuda-tile` brings. Every ``emitError`` /
``emitOpError`` / ``emitWarning`` / ``emitRemark`` statement of its C++ sources (the
verifiers, type and attribute parsers, the bytecode reader and writer) is one
diagnostic; its fixed text is the longest string literal of the statement. A diagnostic
counts as

- *given* when that text occurs in nanotile's package (the message is produced), and
- *tested* when it also occurs in nanotile's tests, or in the expected-error lines of
  cuda-tile's own test files under ../shared/corpus/cuda-tile-tests (which the
  conformance runner checks against nanotile's output).

Literals of six characters or fewer (``"expected "``) say too little to match and are
reported as *too short to tell*. ``--missing`` lists the texts not given.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS_TESTS = ROOT.parent / "shared" / "corpus" / "cuda-tile-tests" / "test"
_EMIT = re.compile(r"\b(emitOpError|emitError|emitWarning|emitRemark)\b")
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')
MIN_TEXT = 7


def cuda_tile_sources(path: Path) -> dict[str, str]:
    """C++ file name -> text, from a checkout or a bare repository."""
    if (path / "lib").is_dir():
        return {str(p.relative_to(path)): p.read_text() for p in sorted(path.glob("lib/**/*.cpp"))}
    names = subprocess.run(["git", "-C", str(path), "ls-tree", "-r", "--name-only", "HEAD",
                            "lib"], capture_output=True, text=True, check=True).stdout.split()
    return {name: subprocess.run(["git", "-C", str(path), "show", f"HEAD:{name}"],
                                 capture_output=True, text=True, check=True).stdout
            for name in names if name.endswith(".cpp")}


def diagnostics(source: str) -> list[str]:
    """The fixed text of each diagnostic statement of a C++ file ('' when it has none)."""
    texts = []
    for match in _EMIT.finditer(source):
        statement = source[match.start():source.find(";", match.end()) + 1]
        literals = [_unescape(s) for s in _LITERAL.findall(statement)]
        # the fixed words only: the quotes and brackets around a value printed beside
        # them are spelt in other ways in Python (f-strings, repr)
        texts.append(max(literals, key=len, default="").strip(" '\"`:,.;()[]{}"))
    return texts


def _unescape(text: str) -> str:
    return text.replace('\\"', '"').replace("\\'", "'").replace("\\\\", "\\")


def corpus(folder: Path, pattern: str) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(folder.glob(pattern)))


def python_strings(folder: Path) -> str:
    """The string literals of the Python files under ``folder`` as Python reads them:
    a message split over lines (adjacent literals, f-strings) is one text, a value
    formatted into it a NUL, so that a fixed text broken only by the line ends matches."""
    texts = []
    for path in sorted(folder.glob("**/*.py")):
        try:
            tree = ast.parse(path.read_text(errors="replace"))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                texts.append("".join(v.value if isinstance(v, ast.Constant) else "\0"
                                     for v in node.values))
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                texts.append(node.value)
    return "\n".join(texts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cuda-tile", required=True, type=Path, help="NVIDIA/cuda-tile")
    parser.add_argument("--missing", action="store_true", help="list the texts not given")
    args = parser.parse_args()
    package = corpus(ROOT / "nanotile", "**/*.py") + python_strings(ROOT / "nanotile")
    tests = (corpus(ROOT / "tests", "**/*.py") + python_strings(ROOT / "tests")
             + corpus(ROOT / "tests", "**/*.mlir"))
    if CORPUS_TESTS.is_dir():
        tests += "\n".join(line for line in corpus(CORPUS_TESTS, "**/*.mlir").splitlines()
                           if "expected-" in line)
    rows, missing = [], defaultdict(list)
    for name, source in cuda_tile_sources(args.cuda_tile).items():
        texts = diagnostics(source)
        if not texts:
            continue
        told = [t for t in texts if len(t) >= MIN_TEXT]
        given = [t for t in told if t in package]
        tested = [t for t in given if t in tests]
        missing[name] = sorted({t for t in told if t not in package})
        rows.append((name, len(texts), len(texts) - len(told), len(given), len(tested)))
    print(_table(rows))
    if args.missing:
        for name, texts in missing.items():
            for text in texts:
                print(f"{name}: {text}")
    return 0


def _table(rows: list[tuple[str, int, int, int, int]]) -> str:
    header = f"{'cuda-tile source':<58}{'diagnostics':>12}{'too short':>10}{'given':>8}{'tested':>8}"
    lines = [header, "-" * len(header)]
    totals = [0, 0, 0, 0]
    for name, *counts in rows:
        lines.append(f"{name:<58}" + "".join(f"{c:>{w}}" for c, w in zip(counts, (12, 10, 8, 8))))
        totals = [a + b for a, b in zip(totals, counts)]
    lines.append("-" * len(header))
    lines.append(f"{'total':<58}" + "".join(f"{c:>{w}}" for c, w in zip(totals, (12, 10, 8, 8))))
    judged = totals[0] - totals[1]
    if judged:
        lines.append(f"given: {totals[2]}/{judged} ({100 * totals[2] / judged:.0f}%), "
                     f"tested: {totals[3]}/{judged} ({100 * totals[3] / judged:.0f}%)")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
