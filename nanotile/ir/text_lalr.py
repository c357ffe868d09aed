"""Runs nanotile/grammar.lark: Lark builds the LALR(1) parser, this module's loop runs it.

Lark (``parser="lalr", lexer="contextual"``) turns the grammar into a parse table, the
set of terminals the lexer may produce in each parser state (its contextual lexer) and
one callback per rule that applies the Transformer (nanotile/ir/text_reader.py), so no
parse tree is built. Lark's own loop is general (interactive parsing, error handlers,
position tracking) and several times slower than the format engine it replaced, so
``LalrRunner`` runs the same tables and callbacks in a compact loop:

- the contextual lexer becomes one regex per parser state: what Lark ignores
  (whitespace, comments, the dialect prefix), then the state's terminals in Lark's
  order, a keyword that a regex terminal also matches being retyped as Lark does; a
  keyword is not taken from the start of a longer word (``addfoo`` is not ``addf``);
- a type, an assume predicate, a constant's ``<f32: 1.0>`` or optimization hints
  spelled as before are taken whole, their value shifted as the rule they stand for: a
  kernel writes the same few of them thousands of times. The first time, the spelling
  is read token by token, as the grammar says (so its errors are those of the grammar),
  and the value the rule reduced to is remembered;
- a repetition's next item (every op of a region) joins its list in the loop, and
  punctuation spaced as usual (`` = ``, `` : ``) is shifted without the lexer.

``parse_with_lark`` runs Lark's own ``Lark.parse`` with the same Transformer; the tests
check that both read the corpus the same way.

Building the tables takes seconds, so they are kept in a cache file (named by a hash
of the grammar and of Lark's version) and loaded in milliseconds afterwards.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property, partial
from pathlib import Path
from typing import Any

import lark
from lark import Lark, Token, Tree
from lark.grammar import Terminal
from lark.lexer import PatternStr
from lark.parse_tree_builder import ParseTreeBuilder
from lark.parsers.lalr_analysis import Shift

from .grammar_gen import GRAMMAR_PATH

LARK_OPTIONS = {"parser": "lalr", "lexer": "contextual", "start": ["file", "type"],
                "maybe_placeholders": True}
_CACHE_FORMAT = 4

# Spellings taken whole where the parser may read the rule they stand for, and their
# values remembered: rule -> its spellings (angle brackets nested up to four levels for
# a type; deeper ones, and anything these do not match, are read token by token).
_BALANCED = r"<(?:[^<>]|<(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*>)*>"
WHOLE = {
    "type": (r"(?:tile|ptr|tensor_view|partition_view|strided_view|gather_scatter_view)"
             r"\s*" + _BALANCED),
    "predicate": r"(?:div_by|bounded|same_elements)\s*<[^<>]*>",
    "dense_literal": r"<[^<>]*>",
    "hints": r"<[^<>]*>",  # optimization_hints=<sm_100 = {num_cta_in_cga = 2}>
}
# punctuation spaced as usual, by the three characters around it: its terminal, its offset
_SPACED = {" = ": ("EQUAL", 1), " : ": ("COLON", 1), ", %": ("COMMA", 0),
           ": t": ("COLON", 0)}  # `%arg0: tile<...>`
_KEYWORD_END = re.compile(r"[\w$.]\Z")
_IDENTIFIER = r"[A-Za-z_][\w$.]*"  # the grammar's NAME
_WORD_RE = re.compile(_IDENTIFIER)


@dataclass(eq=False)
class Tables:
    """What the loop needs from Lark's analysis (picklable, so it can be cached; hashed by
    identity, so that what is derived from it can be cached per table)."""

    actions: list[dict[str, int]]   # per state: terminal or rule -> state (>= 0), ~rule
    rules: list[Any]                # Lark's Rule objects, in table order
    origins: list[str]              # each rule's name
    names: list[str]                # each rule's callback (its alias, or its name)
    start_states: dict[str, int]
    end_states: dict[str, int]
    terminals: dict[str, tuple[str, bool, int, int]]  # name -> regexp, is_keyword, prio, width
    ignore: list[str]               # regexps Lark skips between tokens
    kept: frozenset[str]            # terminals some rule keeps as a child


@dataclass(eq=False)
class ParseFailure(Exception):
    """No action for the next token: the error mapper (text_errors.py) words it."""

    token_type: str
    value: str
    offset: int
    states: list[int]  # the parser's stacks when it stopped
    values: list[Any]
    starts: list[int]

    @property
    def state(self) -> int:
        return self.states[-1]


# ---------------------------------------------------------------------------------------
# Building (or loading) the tables


def grammar_text() -> str:
    return GRAMMAR_PATH.read_text()


@cache
def build_lark(transformer: Any = None) -> Lark:
    """Lark's own parser for the grammar with ``transformer``'s callbacks (slow to build the
    first time; Lark caches it on disk, and this function in memory for each transformer)."""
    return Lark(grammar_text(), transformer=transformer, cache=True, **LARK_OPTIONS)


def _tables_from_lark(parser: Lark) -> Tables:
    table = parser.parser.parser.parser.parse_table
    rules = list(parser.rules)
    index = {id(r): i for i, r in enumerate(rules)}
    # plain strings: Lark's names are Tokens, whose `==` is Python code
    actions = [{str(sym): arg if action is Shift else ~index[id(arg)]
                for sym, (action, arg) in table.states[state].items()}
               for state in range(len(table.states))]
    terminals = {str(t.name): (t.pattern.to_regexp(), isinstance(t.pattern, PatternStr),
                               t.priority, t.pattern.max_width) for t in parser.terminals}
    kept = frozenset(str(s.name) for r in rules for s in r.expansion
                     if isinstance(s, Terminal) and not s.filter_out)
    ignore = [parser.get_terminal(n).pattern.to_regexp() for n in parser.ignore_tokens]
    return Tables(actions, rules, [str(r.origin.name) for r in rules],
                  [str(r.alias or r.origin.name) for r in rules],
                  {str(k): v for k, v in table.start_states.items()},
                  {str(k): v for k, v in table.end_states.items()}, terminals, ignore, kept)


def _cache_path(text: str) -> Path:
    key = hashlib.sha256(f"{_CACHE_FORMAT} {lark.__version__}\n{text}".encode()).hexdigest()
    return Path(tempfile.gettempdir()) / f"nanotile-grammar-{key[:24]}.pickle"


def load_tables() -> Tables:
    text = grammar_text()
    path = _cache_path(text)
    try:
        tables = pickle.loads(path.read_bytes())
        if isinstance(tables, Tables):
            return tables
    except (OSError, pickle.PickleError, EOFError, AttributeError, TypeError, ImportError):
        pass  # none yet, or one another program wrote (its classes elsewhere): build it
    tables = _tables_from_lark(Lark(text, **LARK_OPTIONS))
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        tmp.write_bytes(pickle.dumps(tables, protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(tmp, path)
    except OSError:  # a read-only temporary directory: build again next time
        tmp.unlink(missing_ok=True)
    return tables


# ---------------------------------------------------------------------------------------
# The contextual lexer, one regex per parser state


def _order(tables: Tables, names: list[str]) -> list[str]:
    """Lark's order of trying terminals: priority, then width, then pattern length."""
    def key(n: str) -> tuple:
        regexp, _, priority, width = tables.terminals[n]
        return (-priority, -width, -len(regexp), n)
    return sorted(names, key=key)


def _state_lexer(tables: Tables, names: list[str],
                 whole: tuple[str, ...] = ()) -> tuple[re.Pattern[str], dict]:
    """A regex for these terminals (after the ``whole`` spellings of these rules, in
    groups named by the rule), and how to type what its `_WORD` group matched.

    Keywords that are words (``addf``, ``tile``, ``iter_values``) are not alternatives
    of their own: one `_WORD` group matches any word, and the table says which keyword
    it is, or NAME when the state takes a NAME (Lark's `unless': a NAME that spells a
    keyword is that keyword), or nothing (no token of this state is there). A keyword
    is thus never read from the start of a longer word (``addfoo`` is not ``addf``)."""
    regexps = {n: tables.terminals[n][0] for n in names if n in tables.terminals}
    words = {_unescape(regexps[n]): n for n in regexps
             if tables.terminals[n][1] and _WORD_RE.fullmatch(_unescape(regexps[n]))}
    name = next((n for n in regexps if regexps[n] == _IDENTIFIER), None)
    table: dict[str, str | None] = {**words, "": name}  # "": any other word
    alternatives = [f"(?P<{rule}>{WHOLE[rule]})" for rule in whole]
    others = _order(tables, [n for n in regexps if n not in words.values()])
    for n in others:
        if n != name:
            regexp = regexps[n]
            if tables.terminals[n][1] and _KEYWORD_END.search(_unescape(regexp)):
                regexp += r"(?![\w$.])"
            alternatives.append(f"(?P<{n}>{regexp})")
    if words or name:
        # where words are tried: in NAME's place, or else after the terminals Lark tries
        # first for their priority (BOOL's `true`), which no other terminal can match
        at = others.index(name) if name else next(
            (i for i, n in enumerate(others) if tables.terminals[n][2] <= 1), len(others))
        alternatives.insert(len(whole) + at, f"(?P<_WORD>{_IDENTIFIER})")
    # skipped possessively (a comment is never re-read as tokens when nothing follows
    # it); blanks first, as they are most of it: the regex is then cheaper to run
    skipped = "|".join(r for r in tables.ignore if r != r"\s+")
    skip = rf"\s*+(?:(?:{skipped})\s*+)*+" if r"\s+" in tables.ignore else rf"(?:{skipped})*+"
    pattern = skip + "(?:" + "|".join(alternatives) + r"|(?P<_END>\Z))"
    return re.compile(pattern), table


def _unescape(regexp: str) -> str:
    return re.sub(r"\\(.)", r"\1", regexp)


# ---------------------------------------------------------------------------------------
# The loop


class LalrRunner:
    """Parses text with the tables and a Transformer's callbacks.

    The transformer gets attributes set before each of its rule callbacks runs:
    ``start`` and ``end``, the offsets of the text the rule covers, and ``size``: the
    last ``size`` entries of ``stack_starts`` (the parser's stack of offsets, set once a
    parse) are where each part of the rule starts, so that it can place its diagnostics
    and record where ops were written."""

    def __init__(self, tables: Tables, transformer: Any) -> None:
        self.tables = tables
        self.transformer = transformer
        # what a reduction needs of its rule, in one lookup: callback (None: no call),
        # size, name
        self.reducers = [(_callback(r, transformer), len(r.expansion), origin)
                         for r, origin in zip(tables.rules, tables.origins)]
        count = len(tables.actions)
        self._lexers: list[tuple[Any, dict, dict, dict] | None] = [None] * count
        self._plain: list[tuple[Any, dict, dict, dict] | None] = [None] * count
        self.memo: dict[str, Any] = {}  # a WHOLE spelling -> the value of its rule

    def lexer(self, state: int, whole: bool = True) -> tuple[Any, dict, dict, dict]:
        """What the loop needs in a state: its regex's match, the types of words, the
        action row, and where the value of each WHOLE rule it may read goes (the
        rule's goto; none with ``whole`` off)."""
        table = self._lexers if whole else self._plain
        lex = table[state]
        if lex is None:
            row = self.tables.actions[state]
            names = [k for k in row if k.isupper() and k != "$END"]
            gotos = {rule: row[rule] for rule in WHOLE if whole and row.get(rule, -1) >= 0}
            regex, words = _state_lexer(self.tables, names, tuple(gotos))
            lex = table[state] = (regex.match, words, row, gotos)
        return lex

    def parse(self, text: str, start: str = "file") -> Any:
        """Parse ``text`` from rule ``start``; raise ParseFailure on a syntax error;
        exceptions of the callbacks pass through."""
        pos = 0
        # where a WHOLE spelling is read token by token: the first token of a parse that
        # starts at such a rule, a spelling not remembered yet
        plain_at = pos if start != "file" else -1
        recording: tuple[str, int, int] | None = None  # (rule, start, end) to remember
        t = self.tables
        actions, reducers = t.actions, self.reducers
        kept, lexers, memo = t.kept, self._lexers, self.memo
        if len(memo) > 4096:  # a bound for machine-made inputs
            memo.clear()
        builder = self.transformer
        new_str, token = str.__new__, Token
        end_state = t.end_states[start]
        state = t.start_states[start]
        states = [state]
        values: list[Any] = []
        starts: list[int] = []
        push_state, push_value, push_start = states.append, values.append, starts.append
        builder.stack_starts = starts
        while True:
            lex = lexers[state] or self.lexer(state)
            if pos == plain_at:
                lex = self.lexer(state, whole=False)
            m = lex[0](text, pos)
            if m is None:
                raise self._lex_failure(text, pos, states, values, starts)
            typ = m.lastgroup
            at, next_pos = m.span(typ)  # the end: (end, end)
            word = text[at:next_pos]
            if typ == "_WORD":
                typ = lex[1].get(word) or lex[1][""]
                if typ is None:  # a word, but no keyword of this state, and no NAME
                    raise self._lex_failure(text, pos, states, values, starts)
            if typ in kept:
                value = new_str(token, word)  # a Lark Token, without its slow __new__
                # .value too: Lark's repr of a Token reads it (an error message may)
                value.type, value.start_pos, value.value = typ, at, word
            elif typ in lex[3]:  # a WHOLE spelling: shifted as the rule's value
                value = memo.get(word)
                if value is None:  # read it token by token, remember its value
                    plain_at, recording = pos, (typ, at, next_pos)
                    continue
                state = lex[3][typ]
                push_state(state)
                push_value(value)
                push_start(at)
                pos = next_pos
                continue
            else:
                value = None
                if typ == "_END":
                    typ = "$END"
            prev_end = pos
            row = lex[2]
            while True:
                try:
                    action = row[typ]
                except KeyError:
                    raise ParseFailure(typ, word, at, states, values, starts) from None
                if action >= 0:
                    state = action
                    push_state(state)
                    push_value(value)
                    push_start(at)
                    pos = next_pos
                    # punctuation spaced as usual after a token (` = `, ` : `, `, %`, `: t`) is
                    # shifted without the lexer where the new state shifts it: no other
                    # terminal matches there
                    spaced = _SPACED.get(text[pos:pos + 3])
                    if spaced is not None:
                        action = actions[state].get(spaced[0], -1)
                        if action >= 0:
                            state = action
                            push_state(state)
                            push_value(None)
                            push_start(pos + spaced[1])
                            pos += spaced[1] + 1
                    break
                callback, size, origin = reducers[~action]
                if callback is APPEND:  # `list [","] item`: the item joins the list below it
                    values[-size].append(values.pop())
                    if size == 3:  # the separator's place
                        del values[-1], states[-1], starts[-1]
                    del states[-1], starts[-1]
                    state = actions[states[-2]][origin]
                    states[-1] = state
                    row = actions[state]
                    continue
                if callback is None:  # `?rule: x`: x stands for the rule, in a new state
                    if recording is not None and recording == (origin, starts[-1], prev_end):
                        memo[text[recording[1]:prev_end]] = values[-1]
                        recording = None
                    state = actions[states[-2]][origin]
                    if state == end_state and typ == "$END":
                        return values[-1]
                    states[-1] = state
                    row = actions[state]
                    continue
                # the callback may ask where each child starts: starts[-size:]
                builder.size = size
                builder.end = prev_end
                if size:
                    children = values[-size:]
                    builder.start = rule_start = starts[-size]
                    del values[-size:], states[-size:]
                    result = callback(children)
                    del starts[-size:]
                else:
                    builder.start = rule_start = at
                    result = callback([])
                if recording is not None and recording == (origin, rule_start, prev_end):
                    memo[text[recording[1]:prev_end]] = result
                    recording = None
                state = actions[states[-1]][origin]
                if state == end_state and typ == "$END":
                    return result
                push_state(state)
                push_value(result)
                push_start(rule_start)
                row = actions[state]

    @cached_property
    def any_terminal(self) -> tuple[re.Pattern[str], dict]:
        """A lexer of every terminal."""
        return _state_lexer(self.tables, list(self.tables.terminals))

    def _lex_failure(self, text: str, pos: int, *stacks: list) -> ParseFailure:
        """No terminal of this state matches: find what is there with every terminal
        (as Lark's contextual lexer does), to say what was found instead."""
        regex, words = self.any_terminal
        m = regex.match(text, pos)
        if m is None:
            at = len(text) - len(text[pos:].lstrip())  # the first character not blank
            return ParseFailure("", text[at:at + 1], at, *stacks)
        typ, word, at = m.lastgroup, m.group(m.lastgroup), m.start(m.lastgroup)
        if typ == "_WORD":
            typ = words.get(word) or words[""] or "NAME"
        return ParseFailure("$END" if typ == "_END" else typ, word, at, *stacks)


# ---------------------------------------------------------------------------------------
# Rule callbacks: Lark's tree shaping, with the common cases made cheap
#
# Lark calls each rule's Transformer method with the rule's children: anonymous tokens
# (punctuation, keywords) left out, None put where an optional `[...]` part is absent,
# the children of `_rule`s (and of the repetitions Lark makes of `x*`) spliced in, and
# a `?rule` with one child replaced by that child. lark.parse_tree_builder does this
# with a chain of wrapper objects and a Tree for each spliced rule; the same plan run
# by one closure per rule, with lists to splice, costs a fraction of that.


def _callback(rule: Any, transformer: Any) -> Callable[[list], Any] | None:
    """The rule's callback; None where its one child stands for it (`?rule: x`)."""
    name = rule.alias or rule.options.template_source or rule.origin.name
    # a `_rule` or a repetition Lark made has none: its children, to splice
    fn = getattr(transformer, name, _children)
    expand1 = rule.options.expand1 and not rule.alias
    plan = _child_plan(rule)
    if plan is None:  # as many children as symbols: a `?rule` of one symbol is that one
        return None if expand1 and len(rule.expansion) == 1 else fn
    include, nones_after = plan
    if any(splice for _, splice, _ in include):
        if fn is _children and len(include) == 2 and include[0][1] and not include[1][1] \
                and not nones_after and not include[0][2] and not include[1][2] \
                and (include[0][0], include[1][0], len(rule.expansion)) in ((0, 1, 2), (0, 2, 3)):
            return APPEND  # the loop appends the item without a call: every op is one
        select = partial(_filter, include, nones_after)
        if expand1:
            def filtered_single(c: list) -> Any:
                c = select(c)
                return c[0] if len(c) == 1 else fn(c)
            return filtered_single
        return lambda c: fn(select(c))
    # each child's index in the rule, or -1 where an absent optional part puts None
    picks = tuple(j for i, _, nones in include for j in (*[-1] * nones, i))
    picks += (-1,) * nones_after
    unfiltered = getattr(fn, "unfiltered", None)
    if unfiltered is not None and not expand1:  # the callback takes them as they are
        return unfiltered(transformer, picks)
    if expand1 and len(picks) == 1:  # one child (or None), which stands for the rule
        only = picks[0]
        return (lambda c: c[only]) if only >= 0 else (lambda c: None)
    # the children picked in one step with the call (most rules of a kernel reduce here)
    if -1 not in picks:
        return lambda c: fn([c[i] for i in picks])
    return lambda c: fn([c[i] if i >= 0 else None for i in picks])


def _children(c: list) -> list:
    return c


# `list item`, `list "," item`: the item joins its list, in place, by LalrRunner.parse
# itself (no call)
APPEND = object()


def _child_plan(rule: Any) -> tuple[list[tuple[int, bool, int]], int] | None:
    """Lark's plan for a rule's children (parse_tree_builder.maybe_create_child_filter):
    (index, splice it, Nones before it) per kept child, and Nones at the end; None when
    the children pass as they are."""
    chain = ParseTreeBuilder([rule], Tree, False, False, True).rule_builders[0][1]
    lark_filter = next((w for w in chain if isinstance(w, partial)), None)
    if lark_filter is None:
        return None
    if len(lark_filter.args) == 2:  # ChildFilterLALR
        return lark_filter.args[0], lark_filter.args[1]
    return [(i, splice, 0) for i, splice in lark_filter.args[0]], 0  # no placeholders


def _filter(plan: list[tuple[int, bool, int]], nones_after: int, c: list) -> list:
    """The children the plan picks from ``c``; a spliced one (a `_rule` or a repetition)
    is the list its callback returned (_children, APPEND)."""
    out: list = []
    for i, splice, nones in plan:
        if nones:
            out += [None] * nones
        if splice:
            out += c[i]
        else:
            out.append(c[i])
    if nones_after:
        out += [None] * nones_after
    return out


def parse_with_lark(text: str, transformer: Any, start: str = "file") -> Any:
    """The same parse by Lark's own LALR loop and contextual lexer (for checks)."""
    return build_lark(transformer).parse(text, start=start)
