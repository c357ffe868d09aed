"""A user's rule file: every mistake is reported where it is written (nanotile.egraph.
rulefile), through the command line as a user sees it."""

from __future__ import annotations

import pytest

from nanotile.cli import main
from nanotile.diagnostics import CompileError
from nanotile.egraph.rulefile import top_level_forms

KERNEL = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<f32>>, %x: tile<f32>) {
    %y = addf %x, %x : tile<f32>
    %t = store_ptr_tko weak %p, %y : tile<ptr<f32>>, tile<f32> -> token
    return
  }
}
"""


def errors(tmp_path, capsys, rules: str | bytes) -> list[str]:
    """stderr of ``nanotile K.mlir -p eqsat --rules my.egg``, its lines (status 1)."""
    kernel = tmp_path / "K.mlir"
    kernel.write_text(KERNEL)
    path = tmp_path / "my.egg"
    if isinstance(rules, bytes):
        path.write_bytes(rules)
    else:
        path.write_text(rules)
    assert main([str(kernel), "-p", "eqsat", "--rules", str(path), "-o",
                 str(tmp_path / "out.mlir")]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert not (tmp_path / "out.mlir").exists()
    return [line.replace(str(path), "my.egg") for line in err.splitlines()]


def test_an_unclosed_parenthesis_is_reported_where_it_opens(tmp_path, capsys):
    """Not at the end of the file ("5:1: parse error: unexpected end of file")."""
    text = ("(ruleset r)\n(rewrite (Addf a b rm z t)\n  (Addf b a rm z t) :ruleset r\n"
            "(rule ((= x (Negf y t))) () :ruleset r)\n")
    assert errors(tmp_path, capsys, text) == [
        "my.egg:2:1: error: unclosed '(': no ')' closes this parenthesis; the form at 4:1 "
        "starts inside it",
        "(rewrite (Addf a b rm z t)",
        "^"]


def test_an_unclosed_inner_form_and_a_stray_closing_one(tmp_path, capsys):
    text = '; a ( in a comment and ")(" in a string do not count\n(ruleset r)\n(rule ((= x'
    assert errors(tmp_path, capsys, text)[0] == (
        "my.egg:3:1: error: unclosed '(': no ')' closes this parenthesis")
    assert errors(tmp_path, capsys, "(ruleset r))\n")[0] == (
        "my.egg:1:12: error: unmatched ')': it closes no '('")
    assert errors(tmp_path, capsys, '(ruleset r)\n(sort "S)\n')[0] == (
        "my.egg:2:7: error: unterminated string: no '\"' closes it")


@pytest.mark.parametrize("form, why", [
    ("(run 10)", "nanotile runs the rulesets itself (see --rule-stats for what matched)"),
    ("(run-schedule (saturate (run r)))",
     "nanotile runs the rulesets itself (see --rule-stats for what matched)"),
    ('(include "other.egg")', "pass each rule file with a --rules flag of its own"),
    ("(push)", "a rule file may only declare sorts, functions, rulesets and rules"),
    ("(check (= 1 1))", "a rule file may only declare sorts, functions, rulesets and rules"),
])
def test_commands_that_run_things_are_refused_at_their_line(tmp_path, capsys, form, why):
    head = form[1:].split()[0].rstrip(")")
    assert errors(tmp_path, capsys, f"; mine\n(ruleset r)\n  {form}\n") == [
        f"my.egg:3:3: error: '({head} ...)' is not allowed in a rule file: {why}",
        f"  {form}",
        "  ^"]


@pytest.mark.parametrize("rule", [
    "(rewrite (Addf a b rm z t) (Addf b a rm z t))",
    "(birewrite (Addf a b rm z t) (Addf b a rm z t))",
    "(rule ((= e (Addf a b rm z t))) ((union e (Addf b a rm z t))))",
])
def test_a_rule_without_ruleset_is_an_error_at_the_rule(tmp_path, capsys, rule):
    """egglog would put it in its default ruleset, which nanotile never runs."""
    assert errors(tmp_path, capsys, f"; mine\n(ruleset mine)\n\n {rule}\n") == [
        "my.egg:4:2: error: rule is not in a ruleset: add :ruleset mine",
        f" {rule}",
        " ^"]
    two = f"(ruleset a)\n(ruleset b)\n{rule}\n"
    assert errors(tmp_path, capsys, two)[0] == (
        "my.egg:3:1: error: rule is not in a ruleset: add :ruleset NAME")


def test_binary_rule_files_are_located_at_the_first_binary_byte(tmp_path, capsys):
    assert errors(tmp_path, capsys, b"(ruleset r)\n; \xe9t\xe9\n") == [
        "my.egg:2:3: error: not a rule file: egglog rules are text, and byte 0xe9 is not "
        "UTF-8"]
    assert errors(tmp_path, capsys, b"(ruleset r)\n(sort\x00 T)\n") == [
        "my.egg:2:6: error: not a rule file: egglog rules are text, and it holds a NUL byte"]


def test_top_level_forms():
    text = '; (run 1)\n(ruleset r) (sort S)\n(rule ((= x ")")) ()\n      :ruleset r)\n'
    assert [(f.head, f.line, f.column) for f in top_level_forms(text, "f.egg")] == [
        ("ruleset", 2, 1), ("sort", 2, 13), ("rule", 3, 1)]
    with pytest.raises(CompileError, match="unclosed"):
        top_level_forms("(a (b)", "f.egg")
