"""MLIR's words for what went wrong while reading text.

A syntax error is a parser state with no action for the next token (``ParseFailure``).
MLIR's parser names the one thing it required there (``expected ':'``, ``expected SSA
operand``, ``custom op 'cuda_tile.divi' expected signedness to be one of: ...``), while
an LALR state knows the set of tokens it could take. ``describe`` recovers the grammar
items of the failing state (the rules and the positions in them) and picks what was
required: in the rule being read, what comes next when no optional part is written;
after a construct that is complete, what its surroundings need (a closing bracket). It
also says where MLIR shows it (``wrong_token_offset``: a missing `,` or `}` belongs to
the end of the line before).

The messages of enum keywords and rounding modes, which the reader also gives for a
keyword that is there but wrong, are here too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from enum import Enum
from functools import cache
from typing import Any

from lark import Token

from . import types as T
from .asm_attrs import type_text
from .asm_format import enum_spelling
from .enums import RoundingMode
from .grammar_gen import Slot, op_rules
from .optable import AttrDef, OpDef
from .text_lalr import ParseFailure, Tables
from .text_values import TextError

# ---------------------------------------------------------------------------------------
# Enum keywords and rounding modes

_ENUM_WHAT = {"signedness": "signedness", "signedness_lhs": "signedness",
              "signedness_rhs": "signedness", "comparison_predicate": "'comparison_predicate'",
              "comparison_ordering": "'comparison_ordering'"}
_MEMORY_ENUMS = ("memory_ordering_semantics", "memory_scope")
_LIST_FIRST = {"signed": 0, "ordered": 0}  # MLIR lists these before their opposites
# ops whose memory keywords cuda-tile reads with a parser of its own (own messages)
_CUSTOM_MEMORY_OPS = ("load_ptr_tko", "store_ptr_tko", "load_view_tko", "store_view_tko")


# atomic_red_view_tko's own parser: each keyword read, then looked up, with these words
_RED_VIEW_KEYWORDS = {
    "memory_ordering_semantics": ("invalid memory_ordering_semantics: '{}'; expected one "
                                  "of: weak, relaxed, acquire, release, acq_rel"),
    "memory_scope": "invalid memory_scope: '{}'; expected one of: tl_blk, device, sys",
    "mode": ("unknown atomic RMW mode: '{}'; expected one of: and, or, xor, add, addf, "
             "max, min, umax, umin"),
}


def enum_errors(opname: str, a: AttrDef, text: str, is_keyword: bool) -> list[str]:
    """MLIR's messages for a bad enum keyword (both, when it is not a keyword at all)."""
    if opname == "atomic_red_view_tko" and is_keyword and a.name in _RED_VIEW_KEYWORDS:
        return [f"custom op 'cuda_tile.{opname}' " + _RED_VIEW_KEYWORDS[a.name].format(text)]
    names = [enum_spelling(m) for m in a.enum]  # type: ignore[union-attr]
    names.sort(key=lambda n: _LIST_FIRST.get(n, 1))
    what = _ENUM_WHAT.get(a.name)
    if what is None:  # enums read by MLIR's generated attribute parser
        if a.name in _MEMORY_ENUMS and is_keyword and opname in _CUSTOM_MEMORY_OPS:
            return [(f'invalid {a.name} attribute specification. Got "{text}" but expect '
                     f'one of: {", ".join(names)}')]
        return [(f"expected string or keyword containing one of the following enum values "
                 f"for attribute '{a.name}' [{', '.join(names)}]")]
    one_of = (f"custom op 'cuda_tile.{opname}' expected {what} to be one of: "
              "{" + ", ".join(f"'{n}'" for n in names) + "}")
    if is_keyword:
        return [one_of]
    return [f"custom op 'cuda_tile.{opname}' expected valid keyword", one_of]


def enum_value(cls: type[Enum], text: str) -> Enum | None:
    return _enum_table(cls).get(text)


@cache
def _enum_table(cls: type[Enum]) -> dict[str, Enum]:
    """Spelling -> member; the first member with a spelling wins, as a linear search."""
    table: dict[str, Enum] = {}
    for m in cls:
        table.setdefault(enum_spelling(m), m)
        table.setdefault(m.name, m)
    return table


_IEEE = ("nearest_even", "zero", "negative_inf", "positive_inf")
# Modes each op's text accepts; "strict" ops reject the others while parsing (the
# others take any mode: the verifier knows which are valid).
_ROUNDING_MODES: dict[str, tuple[tuple[str, ...], bool]] = {
    "divf": ((*_IEEE, "approx", "full"), False), "sqrt": ((*_IEEE, "approx"), False),
    "tanh": (("approx", "full"), False), "exp": (("approx", "full"), False),
    "ftoi": (("nearest_int_to_zero",), True),
    **{n: (_IEEE, True) for n in ("addf", "subf", "mulf", "fma", "itof")},
}


def rounding_mode(opname: str, tok: Token) -> RoundingMode:
    """The mode ``rounding<tok>`` gives op ``opname``; a TextError when it refuses it."""
    allowed, strict = _ROUNDING_MODES.get(opname, (_IEEE, False))
    text = str(tok)
    mode = enum_value(RoundingMode, text)
    if isinstance(mode, RoundingMode) and (not strict or text in allowed):
        return mode
    listed = ", ".join(f"'{a}'" for a in allowed)
    got = f", got: '{text}'" if strict else ""
    raise TextError(f"custom op 'cuda_tile.{opname}' expected rounding mode to be one of: "
                    f"{listed}{got}", tok.start_pos)


# ---------------------------------------------------------------------------------------
# Syntax errors


class Grammar:
    """The LR(0) items of every parser state, rebuilt from the tables (only when a
    syntax error is to be worded)."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        self.by_origin: dict[str, list[int]] = {}
        for i, origin in enumerate(tables.origins):
            self.by_origin.setdefault(origin, []).append(i)
        self.expansions = [[s.name for s in r.expansion] for r in tables.rules]
        self.items: dict[int, frozenset[tuple[int, int]]] = {}
        # from each start state, to the states its items' next symbols lead to
        todo = [(state, {(r, 0) for r in self.by_origin.get(start, ())})
                for start, state in tables.start_states.items()]
        while todo:
            state, kernel = todo.pop()
            if state in self.items:
                continue
            self.items[state] = items = self.closure(kernel)
            after: dict[str, set[tuple[int, int]]] = {}  # symbol -> the next state's kernel
            for rule, dot in items:
                if dot < len(self.expansions[rule]):
                    after.setdefault(self.expansions[rule][dot], set()).add((rule, dot + 1))
            for symbol, next_kernel in after.items():
                if tables.actions[state].get(symbol, -1) >= 0:
                    todo.append((tables.actions[state][symbol], next_kernel))

    def closure(self, kernel: set[tuple[int, int]]) -> frozenset[tuple[int, int]]:
        out = set(kernel)
        todo = list(kernel)
        while todo:
            rule, dot = todo.pop()
            exp = self.expansions[rule]
            if dot < len(exp):
                for r in self.by_origin.get(exp[dot], ()):
                    if (r, 0) not in out:
                        out.add((r, 0))
                        todo.append((r, 0))
        return frozenset(out)

    def kernel(self, state: int) -> list[tuple[int, int]]:
        return sorted((r, d) for r, d in self.items.get(state, ()) if d > 0)

    def expected(self, state: int) -> list[str]:
        """The terminals the state takes."""
        return [k for k in self.tables.actions[state] if k.isupper()]


_grammar = cache(Grammar)  # tables -> their Grammar, built at the first syntax error


@cache
def _op_rules() -> dict[str, tuple[OpDef, tuple[Slot, ...]]]:
    return {r.name: (r.opdef, r.slots) for r in op_rules()}


_NONTERMINAL_WORDS = {
    "custom_op": "operation name", "predicate": "assume predicate attribute",
    "values": "SSA operand", "entry_header": "valid '@'-identifier for symbol name",
    "hint_key": "valid keyword or string", "hint_target": "valid keyword or string",
    "element": "valid keyword", "_stride": "either 64-bit integer or question mark",
    "mixed_item": "either integer or SSA value",
}
# what an op's own parser asks for (its messages start with `custom op '...' `)
_OP_PARSER_WORDS = {"mixed_item"}
_TERMINAL_WORDS = {
    "VALUE": "SSA operand", "SYMBOL": "valid '@'-identifier for symbol name",
    "NAME": "valid keyword", "INT": "integer value", "SIGNED_INT": "integer value",
    "STRING": "attribute value", "BOOL": "'true' or 'false'", "$END": "end of file",
    "SHAPE": "valid keyword", "TILE_DIMS": "integer value", "LAYOUT": "layout",
}
# After a complete construct, the closing bracket its surroundings need comes first.
_CLOSERS = ["RBRACE", "RPAR", "RSQB", "MORETHAN", "COLON", "EQUAL", "COMMA"]
_CLOSING = {"RBRACE", "RPAR", "RSQB", "MORETHAN"}


def describe(failure: ParseFailure, tables: Tables, text: str) -> tuple[list[str], int]:
    """MLIR's message(s) for a syntax error in ``text``, and where to show them."""
    g = _grammar(tables)
    op = _enclosing_op(g, failure.states)
    naming = _argument_naming_error(g, op, failure, text)
    if naming is not None:
        return naming
    # MLIR checks each keyword of an op as it reads it
    bad = _bad_keyword(g, op, failure) if op is not None else None
    messages, offset = bad or (_describe(g, failure, op), failure.offset)
    if failure.token_type == "$END" or _PUNCTUATION_EXPECTED.match(messages[0]):
        offset = wrong_token_offset(text, offset)
    return messages, offset


def _bad_keyword(g: Grammar, op: Any, failure: ParseFailure) -> tuple[list[str], int] | None:
    """An error in what the op rule has read so far, which MLIR reports first."""
    opdef, slots, rule, dot, depth = op
    values, starts = failure.values, failure.starts
    first = depth - dot  # the rule's first part: the parts before the dot are on the stack
    for j in range(dot):
        value = values[first + j]
        slot = _slot_at(g, rule, j, slots)
        if slot is None:
            continue
        if slot.kind == "type" and isinstance(value, T.Type):
            message = view_type_error(opdef.name, value)
            if message:
                return [message], starts[first + j]
        if slot.kind != "attr" or not hasattr(value, "start_pos"):
            continue
        a = opdef.attr(slot.name)
        if a is not None and a.kind == "enum" and enum_value(a.enum, str(value)) is None:
            return enum_errors(opdef.name, a, str(value), True), value.start_pos
    return None


_VIEW_RESULTS = {"make_partition_view": (T.PartitionViewType, "partition_view"),
                 "make_strided_view": (T.StridedViewType, "strided_view"),
                 "make_gather_scatter_view": (T.GatherScatterViewType, "gather_scatter_view")}


def view_type_error(opname: str, ty: T.Type) -> str | None:
    """cuda-tile reads a make_*_view's type as that view: anything else is refused."""
    want = _VIEW_RESULTS.get(opname)
    if want is None or isinstance(ty, want[0]):
        return None
    return (f"custom op 'cuda_tile.{opname}' expected '{want[1]}' type, but got "
            f"'{type_text(ty, True)}'")


def _describe(g: Grammar, failure: ParseFailure, op: Any) -> list[str]:
    tables = g.tables
    found = "end of file" if failure.token_type == "$END" else f"'{failure.value}'"
    if failure.token_type == "":
        return [f"unexpected character {failure.value!r}"]
    if failure.token_type == "NAME" and _may_start_op(g, failure):
        # a word where an op may begin: MLIR reads it as a custom op's name
        return [f"custom op '{failure.value}' is unknown"]
    kernel = g.kernel(failure.state)
    incomplete = [(r, d) for r, d in kernel if d < len(g.expansions[r])]
    complete = [(r, d) for r, d in kernel if d == len(g.expansions[r])]
    if incomplete and not complete:
        # the next thing when no optional part is written; but before a closing bracket
        # a list's element is what MLIR asks for (`<` then `>` or an entry)
        ranked = sorted(incomplete, key=lambda i: (len(g.expansions[i[0]]) - i[1], i))
        rule, dot = next((i for i in ranked if g.expansions[i[0]][i[1]] not in _CLOSING),
                         ranked[0])
        return _required(g, rule, dot, op, failure, found)
    optional = {tables.origins[r] for r, _ in complete}
    skip = set()
    for r, d in incomplete:  # what would continue a construct that may end here
        if tables.origins[r] in optional:
            skip |= _first(g, g.expansions[r][d])
    expected = g.expected(failure.state)
    left = [t for t in expected if t not in skip] or expected
    # (every state but the end states, where no token is read, takes some terminal)
    name = next((n for n in _CLOSERS if n in left), left[0])
    return [f"expected {_terminal_text(tables, name)}, found {found}"]


def _may_start_op(g: Grammar, failure: ParseFailure) -> bool:
    """Whether the failing state takes a word that begins an op: it reads an op next, or
    reduces (a block's opening brace, say) on such words."""
    return bool(_first(g, "custom_op") & set(g.expected(failure.state)))


def _first(g: Grammar, symbol: str, seen: set[str] | None = None) -> set[str]:
    """The terminals that may begin ``symbol``: those beginning the first symbol of each
    of its rules (``seen``: the rules already followed)."""
    if symbol.isupper():
        return {symbol}
    seen = seen if seen is not None else set()
    if symbol in seen:
        return set()
    seen.add(symbol)
    return set().union(*(_first(g, g.expansions[r][0], seen)
                         for r in g.by_origin.get(symbol, ()) if g.expansions[r]))


def _enclosing_op(g: Grammar, states: list[int]) -> tuple[OpDef, tuple[Slot, ...], int,
                                                          int, int] | None:
    """The op rule being read (innermost): its row, slots, the item in it and how deep
    in the stack the item's state is."""
    rules = _op_rules()
    for depth in range(len(states) - 1, -1, -1):
        for rule, dot in g.kernel(states[depth]):
            name = g.tables.names[rule]
            if name in rules:
                return (*rules[name], rule, dot, depth)
    return None


def _required(g: Grammar, rule: int, dot: int, op: Any, failure: ParseFailure,
              found: str) -> list[str]:
    symbol = g.expansions[rule][dot]
    origin = g.tables.origins[rule]
    opname = op[0].name if op is not None else ""
    if symbol == "NAME" and op is not None and g.tables.names[rule] == g.tables.names[op[2]]:
        slot = _slot_at(g, rule, dot, op[1])
        a = op[0].attr(slot.name) if slot is not None else None
        if a is not None and a.kind == "enum":
            return enum_errors(opname, a, failure.value, failure.token_type == "NAME")
    if symbol in ("type", "types") or (symbol == "NAME" and origin in ("word_type", "type")):
        prefix = f"custom op 'cuda_tile.{opname}' " if opname else ""
        messages = [f"{prefix}expected valid keyword (a type), found {found}"]
        if op is not None and _index_types_at(g, rule, dot, op):  # parseIndexTypes' own too
            messages.append(f"{prefix}expected index type after comma")
        return messages
    if symbol == "predicate" and opname == "assume":
        bad = _assume_predicate_errors(failure)
        if bad is not None:
            return bad
    if origin == "div_by" and symbol == "INT" and dot == 2 and not str(
            failure.value).startswith("-"):  # DivByAttr::parse's divisor
        return [f"expected {_terminal_text(g.tables, symbol)}, found {found}",
                "failed to parse parameter 'divisor' which is expected to be an integer"]
    if symbol in _NONTERMINAL_WORDS:
        prefix = f"custom op 'cuda_tile.{opname}' " if symbol in _OP_PARSER_WORDS else ""
        return [f"{prefix}expected {_NONTERMINAL_WORDS[symbol]}, found {found}"]
    first = [symbol] if symbol.isupper() else sorted(_first(g, symbol))
    if len(first) == 1:
        return [f"expected {_terminal_text(g.tables, first[0])}, found {found}"]
    return [f"expected {symbol.strip('_').replace('_', ' ')}, found {found}"]


# a word MLIR reads as an attribute of its own (a type, true, unit), not a predicate name
_ATTRIBUTE_WORD = re.compile(r"(?:[su]?i\d+|f16|bf16|tf32|f32|f64|f80|f128|index|none|true|"
                             r"false|unit)$")
_ASSUME = "custom op 'cuda_tile.assume' "


def _assume_predicate_errors(failure: ParseFailure) -> list[str] | None:
    """cuda-tile's parseAssumePredicate: an attribute first (one that is not a predicate
    is refused), else a keyword naming the predicate."""
    kind, value = failure.token_type, str(failure.value)
    if kind == "NAME":
        if _ATTRIBUTE_WORD.match(value):
            return [_ASSUME + "expected assume predicate attribute"]
        if value.isidentifier():
            return [_ASSUME + f"unknown assume predicate attribute: {value} (expected "
                    "'div_by', 'same_elements', or 'bounded')"]
        return None
    if kind in ("INT", "SIGNED_INT", "TILE_DIMS", "STRING", "FLOAT", "BOOL"):
        return [_ASSUME + "expected assume predicate attribute"]
    if kind == "VALUE":
        return [_ASSUME + "expected valid keyword", _ASSUME + "expected attribute name"]
    return None


_INDEXED_VIEW_OPS = ("load_view_tko", "store_view_tko", "atomic_red_view_tko")


def _index_types_at(g: Grammar, rule: int, dot: int, op: Any) -> bool:
    """Whether the op rule is at its index types (the views' `, tile<i32>` list: their
    only `types`)."""
    exp = g.expansions[rule]
    return (op[0].name in _INDEXED_VIEW_OPS and g.tables.names[rule] == g.tables.names[op[2]]
            and exp[dot] == "types" and dot > 0 and exp[dot - 1] == "COMMA")


def _slot_at(g: Grammar, rule: int, dot: int, slots: tuple[Slot, ...]) -> Slot | None:
    """The slot of the child that position ``dot`` of an op rule's expansion fills."""
    r = g.tables.rules[rule]
    empty = r.options.empty_indices or [False] * len(r.expansion)
    child = 0
    position = 0
    for marker in empty:
        if marker:  # an absent optional child: None in its place
            child += 1
            continue
        if position == dot:
            break
        sym = r.expansion[position]
        if not (sym.is_term and sym.filter_out):
            child += 1
        position += 1
    return slots[child] if child < len(slots) else None


def _terminal_text(tables: Tables, name: str) -> str:
    word = _TERMINAL_WORDS.get(name)
    if word is not None:
        return word
    regexp, keyword, _, _ = tables.terminals[name]
    if keyword:
        return "'" + re.sub(r"\\(.)", r"\1", regexp) + "'"
    return name.lower().replace("_", " ")


_SPACES = re.compile(r"\s*")


def _argument_naming_error(g: Grammar, op: Any, failure: ParseFailure,
                           text: str) -> tuple[list[str], int] | None:
    """cuda-tile's function signature parser takes arguments all named (`%a: type`) or all
    unnamed (`type`), and says so at the first one that breaks the pattern: ([message],
    offset), or None when the failure is not in a function's argument list."""
    if op is None or op[0].name not in ("entry", "testing$func"):
        return None
    after_comma = first = False
    for depth in range(len(failure.states) - 1, -1, -1):
        origins = {(g.tables.origins[r], d) for r, d in g.kernel(failure.states[depth])}
        names = {o for o, _ in origins}
        if "block_args" in names or "block_arg" in names or "type" in names:
            return None
        if depth == len(failure.states) - 1:
            after_comma = any(o.startswith("__block_args_star") and d == 1
                              for o, d in origins)
            first = ("entry_args", 1) in origins
        if "entry_args" in names:
            break
    else:
        return None
    prefix = f"custom op 'cuda_tile.{op[0].name}' "
    start = failure.offset
    for p in ("!cuda_tile.", "#cuda_tile."):
        if text.startswith(p, start - len(p)):
            start -= len(p)
    if after_comma and failure.token_type != "VALUE":
        return [prefix + "expected SSA identifier"], start
    if first and failure.token_type != "VALUE":
        # unnamed arguments are read on: the first named one is the error
        for i in outside_brackets(text, start, len(text)):
            if text[i] == ",":
                j = _SPACES.match(text, i + 1).end()
                if text.startswith("%", j):
                    return [prefix + "expected type instead of SSA identifier"], j
    return None


_PUNCTUATION_EXPECTED = re.compile(r"expected '[^\w']")


def wrong_token_offset(text: str, offset: int) -> int:
    """Where MLIR shows a token that is not the one expected: after the last text before
    it (comments and blank lines skipped) when it starts a line, as a missing `,` or `}`
    belongs to the end of the line before."""
    end = text.rfind("\n", 0, offset) + 1
    if text[end:offset].strip():
        return offset
    while end > 0:
        line_start = text.rfind("\n", 0, end - 1) + 1
        code = text[line_start:end].split("//", 1)[0].rstrip(" \t\r\n")
        if code:
            return line_start + len(code)
        end = line_start
    return offset


def outside_brackets(text: str, start: int, end: int) -> Iterator[int]:
    """The offsets from ``start`` of the characters outside brackets (`<>`, `()`, `[]`,
    `{}`; an arrow's `>` is none), up to ``end`` or the bracket that closes one opened
    before ``start``."""
    depth = 0
    for i in range(start, end):
        ch = text[i]
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}" and not (ch == ">" and text[i - 1] == "-"):
            if depth == 0:
                return
            depth -= 1
        elif depth == 0:
            yield i

