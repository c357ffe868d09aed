"""nanotile/grammar.lark: in step with the op table, an LALR(1) grammar Lark accepts, and
read the same by Lark's own parser and by nanotile's loop over Lark's tables."""

from __future__ import annotations

import logging
import re

import pytest

from nanotile.ir import grammar_gen
from nanotile.ir.optable import INTERNAL_OPS, OPS, TESTING_OPS
from nanotile.ir.parser import parse_modules
from nanotile.ir.printer import print_modules

from .helpers import CORPUS, run_cli


def test_grammar_file_is_current() -> None:
    """The op rules of grammar.lark are what the op table's asm column generates: a
    table change needs `python -m nanotile.ir.grammar_gen --write`."""
    current = grammar_gen.GRAMMAR_PATH.read_text()
    assert current == grammar_gen.expected_grammar(current), (
        "grammar.lark is out of date: run python -m nanotile.ir.grammar_gen --write")


def test_check_mode_fails_on_a_stale_file(tmp_path, monkeypatch) -> None:
    stale = tmp_path / "grammar.lark"
    text = grammar_gen.GRAMMAR_PATH.read_text()
    stale.write_text(text.replace('"addf"', '"addf_old"'))
    monkeypatch.setattr(grammar_gen, "GRAMMAR_PATH", stale)
    assert grammar_gen.main(["--check"]) == 1
    assert grammar_gen.main(["--write"]) == 0
    assert stale.read_text() == text


def test_a_foreign_table_cache_is_built_again(tmp_path, monkeypatch) -> None:
    """A cached table file whose pickle names a module this program cannot import (one
    written by another copy of nanotile under another package name) is replaced, not an
    error for every parse."""
    from nanotile.ir import text_lalr

    monkeypatch.setattr(text_lalr.tempfile, "gettempdir", lambda: str(tmp_path))
    path = text_lalr._cache_path(text_lalr.grammar_text())
    path.write_bytes(b"cnanotile_elsewhere.ir.text_lalr\nTables\n.")
    tables = text_lalr.load_tables()
    assert isinstance(tables, text_lalr.Tables)
    assert b"nanotile_elsewhere" not in path.read_bytes()


def test_every_row_has_its_rule() -> None:
    text = grammar_gen.GRAMMAR_PATH.read_text()
    rows = {**OPS, **TESTING_OPS, **INTERNAL_OPS}
    for name, d in rows.items():
        if name == "module":  # written by hand: cuda_module, builtin_module
            continue
        rule = grammar_gen.rule_name(d)
        lines = [line for line in text.splitlines() if line.endswith(f"-> {rule}")]
        assert len(lines) == 1 and f'"{name}"' in lines[0], (name, lines)


def test_slots_match_the_children_of_each_rule() -> None:
    """Each generated rule has as many children as its slots (Lark puts None in place of
    an absent optional part, so every alternative has the same number)."""
    from nanotile.ir.text_lalr import load_tables

    tables = load_tables()
    rules = {r.name: r for r in grammar_gen.op_rules()}
    seen = set()
    for rule, name in zip(tables.rules, tables.names):
        if name not in rules:
            continue
        seen.add(name)
        kept = sum(1 for s in rule.expansion if not (s.is_term and s.filter_out)
                   and not s.name.startswith("_"))
        helpers = [s.name for s in rule.expansion if not s.is_term and s.name.startswith("_")]
        nones = sum(rule.options.empty_indices or [])
        spliced = sum(_helper_children(tables, h) for h in helpers)
        assert kept + nones + spliced == len(rules[name].slots), (name, rule)
    assert seen == set(rules)


def _helper_children(tables, helper: str) -> int:
    for rule, origin in zip(tables.rules, tables.origins):
        if origin == helper:
            kept = sum(1 for s in rule.expansion if not (s.is_term and s.filter_out))
            return kept + sum(rule.options.empty_indices or [])
    raise AssertionError(helper)


def test_lalr_conflicts_are_the_known_ones(caplog) -> None:
    """Lark builds the LALR(1) table: no reduce/reduce collision (it would refuse), and
    the only shift/reduce conflicts are a terminator's optional operands followed by
    another op's results (`return` then `%x = ...`): Lark shifts, as MLIR's optional
    group does, which tries operands when a value comes next."""
    from lark import Lark
    from lark import logger as lark_logger

    from nanotile.ir.text_lalr import LARK_OPTIONS, grammar_text

    lark_logger.setLevel(logging.DEBUG)
    try:
        with caplog.at_level(logging.DEBUG, logger="lark"):
            Lark(grammar_text(), cache=False, **LARK_OPTIONS)
    finally:
        lark_logger.setLevel(logging.WARNING)
    conflicts = [r.getMessage() for r in caplog.records if "Shift/Reduce" in r.getMessage()]
    rules = [r.getMessage() for r in caplog.records if r.getMessage().startswith(" * ")]
    assert conflicts and all("terminal VALUE" in c for c in conflicts)
    assert {re.sub(r" \* <(\w+) : .*", r"\1", r) for r in rules} == {"custom_op"}
    assert all(re.search(r": (BREAK|CONTINUE|RETURN|YIELD)\b", r) for r in rules), rules


@pytest.mark.parametrize("path", sorted((CORPUS / "cutile").glob("*.mlir")),
                         ids=lambda p: p.name)
def test_lark_itself_reads_the_same(path) -> None:
    """Lark.parse (its own loop and contextual lexer, no type memo) with the same
    Transformer gives the same module as nanotile's loop over Lark's tables."""
    from nanotile.ir import text_reader
    from nanotile.ir.text_lalr import parse_with_lark

    if not path.exists():
        pytest.skip("corpus not found")
    text = path.read_text()
    ours = print_modules(parse_modules(text, path.name), debuginfo=True)

    def with_lark(runner):
        modules = parse_with_lark(text, runner.transformer)
        text_reader._resolve_aliases(runner.transformer, modules)
        return modules
    theirs = print_modules(text_reader._read(text, path.name, False, with_lark),
                           debuginfo=True)
    assert theirs == ours


def test_print_grammar() -> None:
    res = run_cli("nanotile.cli", "--print-grammar")
    assert res.returncode == 0, res.stderr
    assert res.stdout == grammar_gen.GRAMMAR_PATH.read_text()
    assert "custom_op:" in res.stdout and "tile_type:" in res.stdout
