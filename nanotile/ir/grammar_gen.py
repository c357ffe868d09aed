"""The op rules of nanotile/grammar.lark, generated from the op table's ``asm`` column.

Each op row's format (the language of nanotile/ir/asm_format.py) becomes one Lark rule,
``op_addf: "addf" VALUE "," VALUE [rounding] [FLUSH_TO_ZERO] [attr_dict] ":" type``, and
a list of *slots* saying what each child of that rule is (operand ``lhs``, the result
type, attribute ``overflow``, ...); nanotile/ir/text_reader.py builds the op from the
children with those slots. The rules are checked in at the end of grammar.lark:

    python -m nanotile.ir.grammar_gen --write    # regenerate them after a table change
    python -m nanotile.ir.grammar_gen --check    # exit 1 if the file is out of date

Format elements map to grammar items like this (``[...]`` is optional; with Lark's
``maybe_placeholders`` an absent optional child is ``None``, so every op rule has a
fixed number of children):

    $x  (one value / optional)      VALUE                 $x  (variadic)   [values]
    type($x, ...)                   type, or types when $x is variadic
    @a  enum / enum:angle           NAME  /  "<" NAME ">"
    @a  int, bool, string, symbol   SIGNED_INT, BOOL, STRING, SYMBOL
    @a  i32/bool array, predicate, identities, hints, type
                                    int_list, predicate, typed_attrs, hints, type
    'kw @unit                       a named terminal (FLUSH_TO_ZERO: "flush_to_zero")
    'kw, punctuation                "kw"              attr-dict    [attr_dict]
    attr-dict-with-keyword          ["attributes"? attr_dict]
    ?( ... )?                       [ ... ]           !directive   see DIRECTIVES
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from .asm_format import Elem, compile_format
from .optable import INTERNAL_OPS, OPS, TESTING_FUNC, TESTING_OPS, OpDef

GRAMMAR_PATH = Path(__file__).resolve().parent.parent / "grammar.lark"
MARKER = ("// Everything below is generated from the op table's `asm` column by\n"
          "// `python -m nanotile.ir.grammar_gen --write` (tests/ir/test_grammar.py "
          "checks it is current).\n")


@dataclass(frozen=True)
class Slot:
    """One child of a generated op rule.

    kind: operand (a VALUE or None), operands (a list of VALUEs or None), type, types
    (a list), attr (the token or value of attribute ``name``), unit (a keyword token or
    None), attrdict, header (what the rule of for's, loop's, entry's or make_tensor_view's
    header read), or a directive name (rounding, units, dense, region, block_args,
    index_types)."""

    kind: str
    name: str = ""
    names: tuple[str, ...] = ()


# what the header rule of for, loop and entry read, their body, their attributes
_HEADED_REGION = (Slot("header"), Slot("region"), Slot("attrdict"))
# !directive -> (grammar items, slots); "{0}" is the directive's first argument
DIRECTIVES: dict[str, tuple[str, tuple[Slot, ...]]] = {
    "rounding": ("[rounding]", (Slot("rounding", "{0}"),)),
    "dense": ('dense_literal ":" type', (Slot("dense", "{0}"), Slot("dense_type", "{1}"))),
    "visibility": ("[PUBLIC | PRIVATE]", (Slot("attr", "{0}"),)),
    "index_types": ("types", (Slot("index_types", "{0}"),)),
    "then": ("region", (Slot("region"),)),
    "else": ("region", (Slot("region"),)),
    "arg_region": ("block_args region", (Slot("block_args"), Slot("region"))),
    "for": ("for_header region [attr_dict]", _HEADED_REGION),
    "loop": ("loop_header region [attr_dict]", _HEADED_REGION),
    "entry": ("entry_header region [attr_dict]", _HEADED_REGION),
    "make_tensor_view": ("make_tensor_view_body", (Slot("header"),)),
}

_ATTR_ITEMS = {"enum": "NAME", "int": "SIGNED_INT", "bool": "BOOL", "string": "STRING",
               "symbol": "SYMBOL", "type": "type", "i32_array": "int_list",
               "bool_array": "int_list", "attr": "predicate", "attr_array": "typed_attrs",
               "hints": "hints"}


def op_rows() -> list[OpDef]:
    """Every row with a text form, in table order: the module op has rules of its own."""
    rows = [d for d in (*OPS.values(), *TESTING_OPS.values(), *INTERNAL_OPS.values())
            if d.name != "module"]
    return [*rows, TESTING_FUNC]


def rule_name(opdef: OpDef) -> str:
    """The grammar rule of an op (``testing$func`` -> ``op_testing__func``)."""
    return "op_" + opdef.name.replace("$", "__")


class _RuleBuilder:
    """Turns one op's format elements into grammar items and slots."""

    def __init__(self, opdef: OpDef) -> None:
        self.opdef = opdef
        self.terminals: dict[str, str] = {}  # named keyword terminals this rule needs
        self.helpers: dict[str, str] = {}    # helper rules (name -> body)

    def sequence(self, elems: tuple[Elem, ...], in_group: bool = False
                 ) -> tuple[list[str], list[Slot]]:
        items: list[str] = []
        slots: list[Slot] = []
        for e in elems:
            a = self.opdef.attr(e.name) if e.kind == "attr" else None
            if a is not None and a.kind == "unit":  # `'kw @unit`: the keyword is its value
                if not items or not items[-1].startswith('"'):
                    raise ValueError(f"{self.opdef.name}: unit attribute {e.name} needs a "
                                     "keyword before it")
                items[-1] = self._keyword_terminal(items[-1].strip('"'))
                slots.append(Slot("unit", e.name))
            elif e.kind == "opt":
                group_items, group_slots = self.sequence(e.children, True)
                group = " ".join(group_items)
                # `?( , $mask )? ?( , $padding )?`: the same text twice cannot say which
                # group a lone one is; nest the second in the first (the reader decides).
                if items and items[-1] == f"[{group}]":
                    items[-1] = f"[{group} [{group}]]"
                else:
                    items.append(f"[{group}]")
                slots.extend(group_slots)
            else:
                item, new_slots = self.element(e, in_group)
                if item:
                    items.append(item)
                slots.extend(new_slots)
        return items, slots

    def _keyword_terminal(self, word: str) -> str:
        self.terminals[word.upper()] = f'"{word}"'
        return word.upper()

    def element(self, e: Elem, in_group: bool) -> tuple[str, list[Slot]]:
        d = self.opdef
        if e.kind == "space":
            return "", []
        if e.kind == "lit":
            return f'"{e.name}"', []
        if e.kind == "attrdict":  # with-keyword: MLIR's `attributes {...}`, the word optional
            item = '["attributes"? attr_dict]' if e.style == "keyword" else "[attr_dict]"
            return item, [Slot("attrdict")]
        if e.kind == "operand":
            od = d.operand(e.name)
            if od is None:
                raise ValueError(f"format of {d.name} names unknown operand {e.name}")
            if od.kind == "variadic":
                # inside an optional group the group itself makes the list optional
                return ("values" if in_group else "[values]"), [Slot("operands", e.name)]
            return "VALUE", [Slot("operand", e.name)]
        if e.kind == "type":
            for n in e.names:
                if d.operand(n) is None and all(r.name != n for r in d.results):
                    raise ValueError(f"format of {d.name} names unknown value {n}")
            if e.style != "*" and self._variadic(e.names[0]):
                return "types", [Slot("types", names=e.names)]
            kind = "type_each" if e.style == "*" else "type"
            return "type", [Slot(kind, names=e.names)]
        if e.kind == "attr":
            a = d.attr(e.name)
            if a is None:
                raise ValueError(f"format of {d.name} names unknown attribute {e.name}")
            item = '"<" NAME ">"' if e.style == "angle" else _ATTR_ITEMS[a.kind]
            return item, [Slot("attr", e.name)]
        if e.kind == "custom":
            return self.directive(e)
        raise ValueError(f"{d.name}: unknown format element {e}")

    def _variadic(self, name: str) -> bool:
        od = self.opdef.operand(name)
        if od is not None:
            return od.kind == "variadic"
        return any(r.name == name and r.variadic for r in self.opdef.results)

    def directive(self, e: Elem) -> tuple[str, list[Slot]]:
        if e.name == "units":
            terminals = [self._keyword_terminal(n) for n in e.names]
            helper = "flags_" + "_".join(e.names)
            self.helpers[helper] = "(" + " | ".join(terminals) + ")+"
            return f"[{helper}]", [Slot("units", names=e.names)]
        if e.name == "visibility":
            self._keyword_terminal("public")
            self._keyword_terminal("private")
        items, slots = DIRECTIVES[e.name]
        args = (*e.names, "", "")
        return items, [Slot(s.kind, s.name.format(*args), s.names) for s in slots]


@dataclass(frozen=True)
class OpRule:
    opdef: OpDef
    name: str
    text: str                   # `op_addf: "addf" ...`
    slots: tuple[Slot, ...]
    terminals: dict[str, str]
    helpers: dict[str, str]


# Lark expands every optional item of a rule into separate alternatives (to know where an
# absent child's None goes), so a rule with many optional items multiplies: the parse
# table grows and takes long to build. Past this many alternatives a run of optional
# items moves into a helper rule of its own (`_op_load_ptr_tko_1`, inlined by Lark).
MAX_ALTERNATIVES = 16


def _alternatives(item: str) -> int:
    """How many alternatives Lark makes of one item (`[a [b]]` -> 3, `[a] ` -> 2)."""
    counts = [1]
    quoted = False
    for ch in item:
        if ch == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif ch == "[":
            counts.append(1)
        elif ch == "]":
            inner = counts.pop()
            counts[-1] *= inner + 1
    return counts[0]


def _bundle(name: str, items: list[str], helpers: dict[str, str]) -> list[str]:
    """Move the longest runs of optional items into helper rules until the rule has at
    most MAX_ALTERNATIVES alternatives."""
    def total(seq: list[str]) -> int:
        return math.prod(_alternatives(it) for it in seq)

    while total(items) > MAX_ALTERNATIVES:
        runs: list[tuple[int, int]] = []
        start = None
        for i, it in enumerate([*items, ""]):
            if it.startswith("["):
                start = i if start is None else start
            elif start is not None:
                runs.append((start, i))
                start = None
        runs = [r for r in runs if r[1] - r[0] >= 2]
        if not runs:
            break
        lo, hi = max(runs, key=lambda r: total(items[r[0]:r[1]]))
        helper = f"_{name}_{len(helpers) + 1}"
        helpers[helper] = " ".join(items[lo:hi])
        items = [*items[:lo], helper, *items[hi:]]
    return items


def op_rule(opdef: OpDef) -> OpRule:
    builder = _RuleBuilder(opdef)
    items, slots = builder.sequence(compile_format(opdef.asm or ""))
    items = _bundle(rule_name(opdef), items, builder.helpers)
    keywords = " | ".join(f'"{n}"' for n in (opdef.name, *opdef.aliases))
    head = f"({keywords})" if opdef.aliases else keywords
    text = f"{rule_name(opdef)}: {head} {' '.join(items)}".rstrip()
    return OpRule(opdef, rule_name(opdef), text, tuple(slots), builder.terminals,
                  builder.helpers)


def op_rules() -> list[OpRule]:
    return [op_rule(d) for d in op_rows()]


def generated_text() -> str:
    """The generated part of grammar.lark (after MARKER): one alternative of custom_op
    per op, named after the op (`-> op_addf`: the reader's callback for it)."""
    rules = op_rules()
    out = ["", "custom_op: " + "\n         | ".join(
        f"{r.text.split(': ', 1)[1]}  -> {r.name}" for r in rules)]
    helpers = {name: body for r in rules for name, body in r.helpers.items()}
    terminals = {name: body for r in rules for name, body in r.terminals.items()}
    for definitions in (helpers, terminals):
        out += ["", *(f"{name}: {body}" for name, body in sorted(definitions.items()))]
    return "\n".join(out) + "\n"


def expected_grammar(current: str) -> str:
    """grammar.lark as it should be: its hand-written top, up to and including MARKER,
    then the generated rules."""
    at = current.find(MARKER)
    if at < 0:
        raise ValueError(f"{GRAMMAR_PATH} has lost its marker line:\n{MARKER}")
    return current[:at + len(MARKER)] + generated_text()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite grammar.lark's op rules")
    ap.add_argument("--check", action="store_true", help="exit 1 if they are out of date")
    args = ap.parse_args(argv)
    current = GRAMMAR_PATH.read_text()
    expected = expected_grammar(current)
    if args.write:
        if expected != current:
            GRAMMAR_PATH.write_text(expected)
        print(f"{GRAMMAR_PATH}: {len(op_rows())} op rules")
        return 0
    if expected != current:
        print(f"{GRAMMAR_PATH} is out of date: run python -m nanotile.ir.grammar_gen --write",
              file=sys.stderr)
        return 1
    if not args.check:
        sys.stdout.write(generated_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
