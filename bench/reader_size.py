"""Size of the code that reads Tile IR text: today's grammar reader against the
format-engine reader it replaced (commit 0523b9b, the last tree that held both).

    python bench/reader_size.py [--old-commit 0523b9b] [--deletion 84d0cf7]

The counting rule, the same for both readers:

- the reader is the code that exists only to read text, and the entry points
  (nanotile/ir/parser.py: parse_text, parse_modules, parse_type) that call it;
- not counted: the printer, the op table, the IR, the attribute and type helpers both
  the printer and the reader use (asm_attrs' make_dense, parse_string_literal, ...),
  and the op rules grammar_gen writes at the end of grammar.lark (generated);
- today's reader: the text_* modules, dense_literal.py (constants' values), grammar_gen.py
  (the op rules and the slots the builder reads them with), parser.py, and grammar.lark
  up to its generated part;
- the old reader: the files and the top-level definitions (functions, classes,
  assignments) that the deletion commit 84d0cf7 removed as the old reader (asm_lexer,
  asm_toplevel, asm_generic, asm_types_old.lark, OpParser/parse_modules_old, the parsing
  half of asm_format, print_directives and asm_attrs), and parser.py.

Two measures are printed: physical lines, and code lines (no blank lines, no lines that
are only a comment, no docstrings), the usual measure of lines of code. A module's
imports count; a mixed file's lines outside the counted definitions do not.
"""

from __future__ import annotations

import argparse
import ast
import io
import subprocess
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IR = "nanotile/ir"
GENERATED_MARK = "ops (generated)"
NEW_FILES = [f"{IR}/text_errors.py", f"{IR}/text_lalr.py", f"{IR}/text_reader.py",
             f"{IR}/text_values.py", f"{IR}/dense_literal.py", f"{IR}/grammar_gen.py",
             f"{IR}/parser.py", "nanotile/grammar.lark"]
OLD_WHOLE = [f"{IR}/asm_lexer.py", f"{IR}/asm_toplevel.py", f"{IR}/asm_generic.py",
             f"{IR}/asm_types_old.lark", f"{IR}/parser.py"]
OLD_MIXED = [f"{IR}/asm_format.py", f"{IR}/print_directives.py", f"{IR}/asm_attrs.py"]


def show(commit: str | None, path: str) -> str | None:
    """The file at ``commit`` (None: the working tree), or None when it is not there."""
    if commit is None:
        file = ROOT / path
        return file.read_text() if file.exists() else None
    done = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:{path}"],
                          capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else None


def code_lines(path: str, text: str) -> set[int]:
    """The line numbers holding code: not blank, not only a comment, not a docstring."""
    lines = text.splitlines()
    if not path.endswith(".py"):
        return {i for i, line in enumerate(lines, 1)
                if line.strip() and not line.strip().startswith("//")}
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            docstrings.update(range(body[0].lineno, body[0].end_lineno + 1))
    code: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE,
                            tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            code.update(range(tok.start[0], tok.end[0] + 1))
    return code - docstrings


def definitions(text: str) -> dict[str, range]:
    """Top-level functions, classes and assignments: name -> their lines."""
    out: dict[str, range] = {}
    for node in ast.parse(text).body:
        names: list[str] = []
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        for name in names:
            out[name] = range(first, node.end_lineno + 1)
    return out


def count(path: str, text: str, lines: set[int] | None = None) -> tuple[int, int]:
    """(physical lines, code lines) of ``text``, or of its ``lines`` only."""
    every = set(range(1, len(text.splitlines()) + 1)) if lines is None else lines
    return len(every), len(code_lines(path, text) & every)


def new_reader(commit: str | None) -> dict[str, tuple[int, int]]:
    out = {}
    for path in NEW_FILES:
        text = show(commit, path)
        if text is None:
            continue
        if path.endswith(".lark"):  # the hand-written part, above the generated op rules
            text = "".join(text.splitlines(True)[:text[:text.index(GENERATED_MARK)].count("\n")])
        out[path] = count(path, text)
    return out


def old_reader(commit: str, deletion: str) -> dict[str, tuple[int, int]]:
    out = {path: count(path, show(commit, path) or "") for path in OLD_WHOLE}
    for path in OLD_MIXED:
        before, after = show(commit, path) or "", show(deletion, path) or ""
        kept = definitions(after)
        gone = [lines for name, lines in definitions(before).items() if name not in kept]
        out[path + " (deleted definitions)"] = count(path, before, {i for r in gone for i in r})
    return out


def report(title: str, sizes: dict[str, tuple[int, int]]) -> tuple[int, int]:
    print(title)
    for path, (lines, code) in sizes.items():
        print(f"  {path:52} {lines:6} {code:6}")
    total = (sum(s[0] for s in sizes.values()), sum(s[1] for s in sizes.values()))
    print(f"  {'total':52} {total[0]:6} {total[1]:6}")
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old-commit", default="0523b9b")
    ap.add_argument("--deletion", default="84d0cf7")
    ap.add_argument("--new-commit", default=None, help="default: the working tree")
    args = ap.parse_args()
    print(f"{'':54} {'lines':>6} {'code':>6}")
    old = report(f"old reader ({args.old_commit})", old_reader(args.old_commit, args.deletion))
    new = report(f"new reader ({args.new_commit or 'working tree'})",
                 new_reader(args.new_commit))
    print(f"new/old: lines {new[0] / old[0]:.2f}, code lines {new[1] / old[1]:.2f}")


if __name__ == "__main__":
    main()
