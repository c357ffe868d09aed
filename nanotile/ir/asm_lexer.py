"""The tokenizer of the Tile IR text format.

One compiled regular expression splits the whole file into tokens (kind, text, offset).
Types and attributes written with angle brackets (``tile<4xf32>``, ``div_by<16>``,
``<i32: 1>``, ``#cuda_tile.di_loc<...>``) are lexed as ONE token each, brackets balanced:
their inside is a small language of its own (nanotile/grammar.lark) that is parsed once
per distinct spelling and cached, which keeps the per-op work small.

Token kinds:
  v  %value (with an optional ``#N`` result-group suffix)   s  @symbol
  b  ^block label      h  #alias or #dialect.attr<...>      a  word<...> (type/attr)
  A  <...> (an attribute body without a head word)          w  bare word (may start with !)
  q  "string"          n  number                            p  punctuation, ->
"""

from __future__ import annotations

import bisect
import re

from ..diagnostics import CompileError, Diagnostic


def _balanced(depth: int) -> str:
    """A regex matching `<...>` with angle brackets nested up to ``depth`` levels."""
    inner = r'(?:->|"(?:[^"\\]|\\.)*"|[^<>"])*'
    for _ in range(depth):
        inner = r'(?:->|"(?:[^"\\]|\\.)*"|[^<>"]|<' + inner + r'>)*'
    return "<" + inner + ">"


_BAL = _balanced(5)
_WORD = r"[A-Za-z_][\w$.]*"

# Whitespace and comments are eaten (atomically) in front of each token, and at the end
# of the text by the empty `eof` match; alternatives are ordered by
# how often they occur, which matters for speed (this is the parser's hottest loop).
TOKEN_RE = re.compile(
    r"(?>(?:\s+|//[^\n]*)*)(?:"
    r"(?P<v>%[\w$.\-]+(?:#\d+)?)"
    rf"|(?P<a>!?{_WORD}{_BAL})"
    rf"|(?P<w>!?{_WORD})"
    r"|(?P<p>->|[()\[\]{},:=?*+|])"
    r"|(?P<n>-?0x[0-9a-fA-F]+|-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)"
    r"|(?P<s>@(?:[\w$.\-]+|\"(?:[^\"\\]|\\.)*\"))"
    r"|(?P<q>\"(?:[^\"\\\n]|\\.)*\")"
    rf"|(?P<h>#{_WORD}(?:{_BAL})?)"
    rf"|(?P<A>{_BAL})"
    r"|(?P<b>\^[\w$.\-]+)"
    r"|(?P<x>[-<>])"
    r"|(?P<err>\S)|(?P<eof>\Z))")


class Token:
    """One token; ``kind`` is a one-letter code (see module docstring)."""

    __slots__ = ("kind", "offset", "text")

    def __init__(self, kind: str, text: str, offset: int) -> None:
        self.kind = kind
        self.text = text
        self.offset = offset

    def __repr__(self) -> str:
        return f"Token({self.kind!r}, {self.text!r}, {self.offset})"


EOF = "$"


class SourceMap:
    """Maps character offsets of a text to 1-based (line, column)."""

    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename
        self._starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_col(self, offset: int) -> tuple[int, int]:
        i = bisect.bisect_right(self._starts, offset) - 1
        return i + 1, offset - self._starts[i] + 1

    def error(self, message: str, offset: int) -> CompileError:
        line, col = self.line_col(offset)
        return CompileError(Diagnostic("error", message, self.filename, line, col))


def tokenize(text: str, smap: SourceMap) -> list[Token]:
    """Split ``text`` into tokens (whitespace and ``//`` comments dropped), then an EOF."""
    tok = Token
    out = [tok(m.lastgroup, m[k], m.start(k))  # type: ignore[arg-type]
           for m in TOKEN_RE.finditer(text) for k in (m.lastindex,)]
    while out and out[-1].kind == "eof":
        out.pop()
    for t in out:
        kind = t.kind
        if kind == "x":
            t.kind = "p"
        elif kind == "err":
            raise smap.error(f"unexpected character {t.text!r}", t.offset)
    out.append(Token(EOF, "", len(text)))
    return out
