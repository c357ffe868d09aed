"""A user's rule file, checked before and after egglog parses it, and its rules listed.

egglog's parser reports an unclosed parenthesis at the end of the file, and some
commands (``run``, ``push``) carry no position at all; so the file's top-level forms are
found here first (strings and ``;`` comments skipped), and every mistake is reported
where it is written: an unclosed ``(`` at that parenthesis, a command other than a
declaration, rule or ruleset at its form, a rule with no ``:ruleset`` (egglog would add
it to a ruleset nanotile never runs) at the rule.

``rules_of`` lists the rules of the parsed commands (``Rule``): where each is written,
its ruleset, and the names egglog's run report counts its matches under (the rule's
``:name``, else its printed text; a birewrite is two rules, ``=>`` and ``<=``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..diagnostics import CompileError, Diagnostic

# the top-level forms a rule file may hold
ALLOWED_FORMS = {"ruleset", "unstable-combined-ruleset", "rule", "rewrite", "birewrite",
                 "constructor", "relation", "function", "datatype", "datatype*", "sort"}
RULE_COMMANDS = {"RuleCommand", "RewriteCommand", "BiRewriteCommand"}
_SPAN = re.compile(r"In (\d+):(\d+)")


@dataclass(frozen=True)
class Form:
    """A top-level form: its head symbol and where its ``(`` is (1-based)."""

    head: str
    line: int
    column: int


@dataclass(frozen=True)
class Rule:
    """One rule (rewrite, birewrite) of a rule file."""

    name: str            # the user's :name, or file:line
    filename: str
    line: int
    column: int
    ruleset: str
    keys: tuple[str, ...]  # what egglog's run report calls it

    @property
    def place(self) -> tuple[str, int, int]:
        """What tells it from every other rule (Program's ``disabled`` holds these)."""
        return self.filename, self.line, self.column

    @property
    def where(self) -> str:
        return f"{self.filename}:{self.line}"

    def describe(self) -> str:
        """``rule swap at my.egg:3 (ruleset r)``, or ``rule my.egg:3 (ruleset r)``."""
        at = "" if self.name == self.where else f" at {self.where}"
        return f"rule {self.name}{at} (ruleset {self.ruleset})"


def top_level_forms(text: str, filename: str) -> list[Form]:
    """The top-level forms of ``text``; raises a located CompileError for an unclosed
    ``(`` or string, or a ``)`` that closes nothing."""
    forms: list[Form] = []
    opened: list[tuple[int, int]] = []  # (line, column) of each open parenthesis
    inside: tuple[int, int] | None = None  # a form starting at column 1 while one is open
    head_of: Form | None = None
    line, column, i = 1, 1, 0

    def error(message: str, where: tuple[int, int]) -> CompileError:
        return CompileError(Diagnostic("error", message, filename, *where, own_text=text))

    while i < len(text):
        char = text[i]
        if char == ";":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if char == '"':
            start = (line, column)
            i += 1
            column += 1
            while i < len(text) and text[i] != '"':
                step = 2 if text[i] == "\\" else 1
                for c in text[i:i + step]:
                    line, column = (line + 1, 1) if c == "\n" else (line, column + 1)
                i += step
            if i >= len(text):
                raise error("unterminated string: no '\"' closes it", start)
        elif char == "(":
            if column == 1 and opened and inside is None:
                inside = (line, column)
            if not opened:
                head_of = Form(_head(text, i + 1), line, column)
                forms.append(head_of)
            opened.append((line, column))
        elif char == ")":
            if not opened:
                raise error("unmatched ')': it closes no '('", (line, column))
            opened.pop()
            if not opened:
                inside = None
        line, column = (line + 1, 1) if char == "\n" else (line, column + 1)
        i += 1
    if opened:
        first = opened[0]
        later = (f"; the form at {inside[0]}:{inside[1]} starts inside it"
                 if inside is not None else "")
        raise error(f"unclosed '(': no ')' closes this parenthesis{later}", first)
    return forms


def _head(text: str, start: int) -> str:
    match = re.match(r"\s*([^\s()\";]+)", text[start:])
    return match.group(1) if match else ""


def check_forms(forms: list[Form], text: str, filename: str) -> None:
    """Only declarations, rules and rulesets: nanotile runs the rulesets itself."""
    for form in forms:
        if form.head in ALLOWED_FORMS:
            continue
        if form.head in ("run", "run-schedule"):
            why = "nanotile runs the rulesets itself (see --rule-stats for what matched)"
        elif form.head == "include":
            why = "pass each rule file with a --rules flag of its own"
        else:
            why = "a rule file may only declare sorts, functions, rulesets and rules"
        raise CompileError(Diagnostic("error", f"'({form.head} ...)' is not allowed in a "
                                               f"rule file: {why}", filename, form.line,
                                      form.column, own_text=text))


def declared_rulesets(commands: list[Any]) -> list[str]:
    """The rulesets that egglog's parsed ``commands`` declare, in order."""
    return [c.name for c in commands if type(c).__name__ == "AddRuleset"]


def rules_of(commands: list[Any], filename: str, text: str) -> list[Rule]:
    """The rules of egglog's parsed ``commands``; a rule without ``:ruleset`` is a
    located error."""
    declared = declared_rulesets(commands)
    rules: list[Rule] = []
    for command in commands:
        kind = type(command).__name__
        if kind not in RULE_COMMANDS:
            continue
        body = command.rule if kind == "RuleCommand" else command.rewrite
        ruleset = body.ruleset if kind == "RuleCommand" else command.name
        line, column = _position(body.span)
        if not ruleset:
            hint = declared[0] if len(declared) == 1 else "NAME"
            raise CompileError(Diagnostic("error", f"rule is not in a ruleset: add :ruleset "
                                                   f"{hint}", filename, line, column,
                                          own_text=text))
        key = body.name or str(command)
        keys = (key + "=>", key + "<=") if kind == "BiRewriteCommand" else (key,)
        rules.append(Rule(body.name or f"{filename}:{line}", filename, line, column,
                          ruleset, keys))
    return rules


def _position(span: Any) -> tuple[int, int]:
    match = _SPAN.match(str(span))
    return (int(match.group(1)), int(match.group(2))) if match else (1, 1)


def read_text(data: bytes, filename: str) -> str:
    """The text of a rule file; binary data (a byte that is not UTF-8, a NUL) is an
    error at its first such byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _binary(data, filename, e.start, f"byte 0x{data[e.start]:02x} is not UTF-8")
    if "\0" in text:
        raise _binary(data, filename, data.index(b"\0"), "it holds a NUL byte")
    return text


def _binary(data: bytes, filename: str, start: int, why: str) -> CompileError:
    line = data.count(b"\n", 0, start) + 1
    column = start - (data.rfind(b"\n", 0, start) + 1) + 1
    return CompileError(Diagnostic("error", f"not a rule file: egglog rules are text, and "
                                            f"{why}", filename, line, column,
                                   own_text=""))  # (binary: no line to show)
