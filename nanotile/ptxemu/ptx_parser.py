"""Parser for the PTX subset the emulator runs: text -> ``PtxModule`` (plain data classes).

A small regex tokenizer and a recursive-descent parser. PTX statements are regular
(``[@{!}pred] opcode operand, ...;``), so the grammar is opcode-generic: an unknown opcode
parses fine and only fails, with its line, when the executor compiles it.
"""

from __future__ import annotations

import bisect
import re
import struct
from dataclasses import dataclass, field

from nanotile.ptxemu.errors import PtxError

# ---------------------------------------------------------------- syntax tree

@dataclass(slots=True)
class Reg:
    """A name in operand position: register, special register, label, variable or param."""
    name: str


@dataclass(slots=True)
class Imm:
    """An integer literal."""
    value: int


@dataclass(slots=True)
class FImm:
    """A float literal: ``0fXXXXXXXX`` / ``0dXXXXXXXXXXXXXXXX`` (exact bits) or a decimal."""
    value: float
    bits32: int | None = None
    bits64: int | None = None


@dataclass(slots=True)
class NotPred:
    """``!%p`` as a source operand."""
    name: str


@dataclass(slots=True)
class Addr:
    """``[base+offset]``; base is a name, or None for an absolute address. ``coords`` is the
    vector of a tensor address ``[tmap, {c0, c1}]``."""
    base: str | None
    offset: int
    coords: list | None = None


@dataclass(slots=True)
class Vec:
    """``{a, b, ...}``."""
    items: list


@dataclass(slots=True)
class Pair:
    """``d|p`` (setp, elect, shfl destinations)."""
    first: object
    second: object


@dataclass(slots=True)
class Paren:
    """``(a, b)`` in ``call``."""
    items: list


@dataclass(slots=True)
class Instruction:
    opcode: str
    operands: list
    line: int
    col: int
    text: str
    guard: str | None = None      # predicate register guarding the instruction
    guard_neg: bool = False


@dataclass(slots=True)
class Label:
    name: str
    line: int


@dataclass(slots=True)
class VarDecl:
    """A ``.reg``/``.shared``/``.global``/``.const``/``.local``/``.param`` declaration."""
    space: str
    type: str
    names: list[tuple[str, int | None]]   # (name, array length or None; 0 = unsized [])
    align: int | None
    line: int
    extern: bool = False
    init: list | None = None
    reg_range: list[tuple[str, int]] = field(default_factory=list)  # %r<10> -> ("%r", 10)
    ptr: bool = False


@dataclass(slots=True)
class Function:
    name: str
    kind: str                      # "entry" | "func"
    params: list[VarDecl]
    rets: list[VarDecl]
    body: list | None              # Instruction | Label | VarDecl; None for a declaration
    directives: dict[str, list[int]]
    line: int


@dataclass(slots=True)
class PtxModule:
    version: str | None
    target: list[str]
    address_size: int
    globals: list[VarDecl]
    functions: dict[str, Function]
    filename: str


# ---------------------------------------------------------------- tokenizer

_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\n]+|//[^\n]*|/\*.*?\*/)
  | (?P<str>"(?:[^"\\\n]|\\.)*")
  | (?P<fbits>0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16})
  | (?P<num>(?:0[xX][0-9a-fA-F]+|0[bB][01]+|\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+)[uU]?)
  | (?P<word>[.%$A-Za-z_](?:[A-Za-z0-9_$.]|::)*)
  | (?P<punct>[\[\]{}(),;:+\-@!|<>=*])
""", re.VERBOSE | re.DOTALL)


@dataclass(slots=True)
class Tok:
    kind: str
    text: str
    line: int
    col: int
    pos: int


def tokenize(text: str, filename: str) -> list[Tok]:
    line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
    toks: list[Tok] = []
    pos, n = 0, len(text)
    match = _TOKEN.match
    while pos < n:
        m = match(text, pos)
        if m is None:
            line = bisect.bisect_right(line_starts, pos)
            raise PtxError(f"unexpected character {text[pos]!r}", filename, line,
                           pos - line_starts[line - 1] + 1)
        kind = m.lastgroup
        if kind != "ws":
            line = bisect.bisect_right(line_starts, pos)
            toks.append(Tok(kind, m.group(), line, pos - line_starts[line - 1] + 1, pos))
        pos = m.end()
    line = len(line_starts)
    eof = Tok("eof", "", line, n - line_starts[-1] + 1, n)
    toks.extend([eof] * 4)          # lookahead past the end reads end-of-file
    return toks


# ---------------------------------------------------------------- parser

_TYPES = {"pred", "b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16", "s32",
          "s64", "f16", "f16x2", "bf16", "bf16x2", "f32", "f64", "tf32", "e4m3", "e5m2",
          "e4m3x2", "e5m2x2", "f32x2"}
_SPACES = {".reg", ".shared", ".global", ".const", ".local", ".param", ".tex"}
_LINKAGE = {".visible", ".extern", ".weak", ".common", ".hidden"}


def parse_int(s: str) -> int:
    s = s.rstrip("uU")
    if s[:2] in ("0x", "0X"):
        return int(s, 16)
    if s[:2] in ("0b", "0B"):
        return int(s, 2)
    if len(s) > 1 and s[0] == "0" and s.isdigit():
        return int(s, 8)
    return int(s)


class _Parser:
    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename
        self.toks = tokenize(text, filename)
        self.i = 0
        self.lines = text.splitlines()

    # -- helpers
    def peek(self, k: int = 0) -> Tok:
        return self.toks[self.i + k]

    def next(self) -> Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def error(self, msg: str, tok: Tok | None = None) -> PtxError:
        tok = tok or self.peek()
        return PtxError(msg, self.filename, tok.line, tok.col)

    def expect(self, text: str) -> Tok:
        t = self.peek()
        if t.text != text:
            raise self.error(f"expected '{text}', found '{t.text or 'end of file'}'")
        return self.next()

    def accept(self, text: str) -> bool:
        if self.peek().text == text:
            self.i += 1
            return True
        return False

    def word(self) -> str:
        t = self.peek()
        if t.kind != "word":
            raise self.error(f"expected a name, found '{t.text or 'end of file'}'")
        self.i += 1
        return t.text

    def integer(self) -> int:
        neg = self.accept("-")
        t = self.peek()
        if t.kind != "num":
            raise self.error(f"expected an integer, found '{t.text or 'end of file'}'")
        self.i += 1
        try:
            v = parse_int(t.text)
        except ValueError:
            raise self.error(f"expected an integer, found '{t.text}'", t) from None
        return -v if neg else v

    def skip_statement(self) -> None:
        while self.peek().text not in (";", "") and self.peek().kind != "eof":
            self.i += 1
        self.accept(";")

    def skip_line_directive(self) -> None:
        """``.loc``/``.file`` (debug positions, no effect on execution) end at their line's
        end, not at a ';': skip the tokens of that line."""
        line = self.next().line
        while self.peek().kind != "eof" and self.peek().line == line:
            self.i += 1

    # -- module
    def module(self) -> PtxModule:
        mod = PtxModule(None, [], 64, [], {}, self.filename)
        while self.peek().kind != "eof":
            t = self.peek()
            if t.text == ".version":
                self.next()
                mod.version = self.next().text
            elif t.text == ".target":
                self.next()
                mod.target.append(self.word())
                while self.accept(","):
                    mod.target.append(self.word())
            elif t.text == ".address_size":
                self.next()
                mod.address_size = self.integer()
            elif t.text in (".file", ".loc"):
                self.skip_line_directive()
            elif t.text == ".pragma":
                self.skip_statement()
            elif t.text == ".section":
                self.skip_section()
            else:
                self.toplevel_item(mod)
        return mod

    def skip_section(self) -> None:
        self.next()
        self.word()
        self.expect("{")
        depth = 1
        while depth:
            t = self.next()
            if t.kind == "eof":
                raise self.error("unterminated .section", t)
            depth += {"{": 1, "}": -1}.get(t.text, 0)

    def toplevel_item(self, mod: PtxModule) -> None:
        start = self.peek()
        extern = False
        while self.peek().text in _LINKAGE:
            extern |= self.next().text == ".extern"
        t = self.peek()
        if t.text in (".entry", ".func"):
            fn = self.function(extern)
            old = mod.functions.get(fn.name)
            if old is None or old.body is None:
                mod.functions[fn.name] = fn
        elif t.text in _SPACES:
            decl = self.var_decl(extern)
            self.expect(";")
            mod.globals.append(decl)
        else:
            raise self.error(f"unexpected '{t.text}' at module level", start)

    def function(self, extern: bool) -> Function:
        kind_tok = self.next()
        kind = kind_tok.text[1:]
        rets: list[VarDecl] = []
        if kind == "func" and self.peek().text == "(":
            rets = self.param_list()
        name = self.word()
        params = self.param_list() if self.peek().text == "(" else []
        directives: dict[str, list[int]] = {}
        while self.peek().text not in ("{", ";") and self.peek().kind != "eof":
            d = self.word()
            vals: list[int] = []
            if d == ".pragma":
                self.next()
                self.accept(";")
                continue
            while self.peek().kind == "num":
                vals.append(self.integer())
                if not self.accept(","):
                    break
            directives[d] = vals
        if self.accept(";"):
            return Function(name, kind, params, rets, None, directives, kind_tok.line)
        body = self.body()
        return Function(name, kind, params, rets, body, directives, kind_tok.line)

    def param_list(self) -> list[VarDecl]:
        self.expect("(")
        out: list[VarDecl] = []
        while not self.accept(")"):
            while self.peek().text in _LINKAGE:
                self.next()
            out.append(self.var_decl(False))
            if not self.accept(","):
                self.expect(")")
                break
        return out

    def var_decl(self, extern: bool) -> VarDecl:
        t = self.next()
        space = t.text
        align = None
        typ = None
        ptr = False
        while self.peek().kind == "word" and self.peek().text.startswith("."):
            m = self.next().text
            if m == ".align":
                align = self.integer()
            elif m == ".ptr":
                ptr = True
            elif m in (".global", ".shared", ".const", ".local") and space == ".param":
                pass  # .ptr .global: address-space hint of a pointer param
            elif m in (".v2", ".v4", ".v8"):
                pass
            elif m in _LINKAGE:
                extern |= m == ".extern"
            else:
                typ = m[1:]
        if typ is None:
            raise self.error("expected a type in declaration", t)
        if typ not in _TYPES:
            raise self.error(f"unknown type '.{typ}' in declaration", t)
        decl = VarDecl(space, typ, [], align, t.line, extern, ptr=ptr)
        while True:
            name = self.word()
            if self.accept("<"):
                decl.reg_range.append((name, self.integer()))
                self.expect(">")
            else:
                length = None
                dims = []
                while self.accept("["):
                    if self.accept("]"):
                        dims.append(0)
                        continue
                    dims.append(self.integer())
                    self.expect("]")
                if dims:
                    length = 1
                    for d in dims:
                        length *= d
                decl.names.append((name, length))
            if self.accept("="):
                decl.init = self.initializer()
            if space == ".param" or not self.accept(","):
                break
        return decl

    def initializer(self) -> list:
        if self.accept("{"):
            items: list = []
            while not self.accept("}"):
                items.extend(self.initializer())
                self.accept(",")
            return items
        op = self.operand()
        return [op]

    # -- function bodies
    def body(self) -> list:
        self.expect("{")
        items: list = []
        depth = 1
        while True:
            t = self.peek()
            if t.kind == "eof":
                raise self.error("unterminated function body", t)
            if t.text == "}":
                self.next()
                depth -= 1
                if depth == 0:
                    return items
                continue
            if t.text == "{":
                self.next()
                depth += 1
                continue
            if t.text in _SPACES or t.text in _LINKAGE:
                extern = False
                while self.peek().text in _LINKAGE:
                    extern |= self.next().text == ".extern"
                items.append(self.var_decl(extern))
                self.expect(";")
                continue
            if t.text in (".loc", ".file"):
                self.skip_line_directive()
                continue
            if t.text == ".pragma":
                self.skip_statement()
                continue
            if t.kind == "word" and self.peek(1).text == ":" and not t.text.startswith("%"):
                self.next()
                self.next()
                items.append(Label(t.text, t.line))
                continue
            items.append(self.instruction())

    def instruction(self) -> Instruction:
        start = self.peek()
        guard, neg = None, False
        if self.accept("@"):
            neg = self.accept("!")
            guard = self.word()
        op_tok = self.peek()
        if op_tok.kind != "word" or op_tok.text.startswith((".", "%")):
            raise self.error(f"expected an instruction, found '{op_tok.text}'")
        self.next()
        operands: list = []
        if not self.accept(";"):
            while True:
                operands.append(self.operand())
                if self.accept(";"):
                    break
                if not self.accept(","):
                    found = self.peek().text or "end of file"
                    raise self.error(f"expected ',' or ';' after operand, found '{found}'")
        end = self.toks[self.i - 1].pos
        text = self.text[start.pos:end + 1]
        return Instruction(op_tok.text, operands, start.line, start.col, " ".join(text.split()),
                           guard, neg)

    def operand(self):
        first = self.single_operand()
        if self.accept("|"):
            return Pair(first, self.single_operand())
        return first

    def single_operand(self):
        t = self.peek()
        if t.text == "[":
            return self.address()
        if t.text == "{":
            self.next()
            items = []
            while not self.accept("}"):
                items.append(self.operand())
                self.accept(",")
            return Vec(items)
        if t.text == "(":
            self.next()
            items = []
            while not self.accept(")"):
                items.append(self.operand())
                self.accept(",")
            return Paren(items)
        if t.text == "!":
            self.next()
            return NotPred(self.word())
        if t.text == "-":
            self.next()
            v = self.single_operand()
            if isinstance(v, Imm):
                return Imm(-v.value)
            if isinstance(v, FImm):
                return FImm(-v.value)
            raise self.error("expected a number after '-'", t)
        if t.kind == "num":
            self.next()
            try:
                if "." in t.text or ("e" in t.text.lower() and not t.text.lower().startswith("0x")):
                    return FImm(float(t.text))
                return Imm(parse_int(t.text))
            except ValueError:
                raise self.error(f"malformed number '{t.text}'", t) from None
        if t.kind == "fbits":
            self.next()
            h = int("0x" + t.text[2:], 0)
            if t.text[1] in "fF":
                return FImm(struct.unpack("<f", struct.pack("<I", h))[0], bits32=h)
            return FImm(struct.unpack("<d", struct.pack("<Q", h))[0], bits64=h)
        if t.kind == "word":
            self.next()
            return Reg(t.text)
        if t.kind == "str":
            self.next()
            return Reg(t.text)
        raise self.error(f"expected an operand, found '{t.text or 'end of file'}'")

    def address(self) -> Addr:
        self.expect("[")
        base = None
        offset = 0
        if self.peek().kind == "word":
            base = self.word()
        elif self.peek().kind == "num" or self.peek().text == "-":
            offset = self.integer()
        while self.peek().text in ("+", "-"):
            sign = -1 if self.next().text == "-" else 1
            offset += sign * self.integer()
        coords = None
        if self.accept(","):
            v = self.single_operand()
            coords = v.items if isinstance(v, Vec) else [v]
        self.expect("]")
        return Addr(base, offset, coords)


def parse_ptx(text: str, filename: str = "<ptx>") -> PtxModule:
    """Parse PTX text; raises ``PtxError`` (file:line:col) on malformed input."""
    return _Parser(text, filename).module()
