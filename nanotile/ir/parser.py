"""Parse Tile IR text into a Module: ``parse_text(text, filename) -> Module``.

Accepts the forms found in the real world:
  * cuda-tile's: ``cuda_tile.module @m { ... }`` (``cuda_tile.`` / ``!cuda_tile.`` prefixes
    optional), optionally inside MLIR's ``module { ... }``, with ``testing$func`` items;
  * tileirdisasm's: bare ``entry @k(...) {...}`` / ``global`` items at top level;
  * MLIR's generic op form ``"cuda_tile.addf"(%a, %b) {...} : (...) -> ...``, also for
    unregistered ops (kept as is), ``loc(...)`` locations, ``#alias = ...`` definitions.

The tokenizer (asm_lexer) splits the text; each op is then read by the format engine
(asm_format) driven by the op's row of the op table, so a new op is a table row, not new
parser code. Types and attributes inside angle brackets go through nanotile/grammar.lark.
Structural checks happen here (undefined / redefined values, types of uses against their
definitions, terminators, unknown ops); the dialect's rules are nanotile.verify's.
"""

from __future__ import annotations

from typing import Any

from ..diagnostics import CompileError
from . import attrs as A
from . import types as T
from .asm_attrs import AsmError, is_type_head, parse_string_literal, parse_sub, word_type
from .print_directives import FIXUPS
from .asm_format import compile_parser
from .asm_generic import parse_generic_op
from .asm_lexer import EOF, SourceMap, Token, tokenize
from .core import Block, Module, Operation, Region, Value, make_op
from .optable import OpDef, lookup

# Ops whose single-block regions get an implicit terminator when the text leaves it out.
IMPLICIT_TERMINATOR = {"if": "yield", "for": "continue", "loop": "continue",
                       "entry": "return", "testing$func": "return", "reduce": "yield",
                       "scan": "yield"}
TERMINATORS = {"yield", "continue", "break", "return"}


_FIXED: dict[str, int] = {}
_TYPE_CACHE: dict[str, T.Type] = {}  # type spelling -> Type (types are immutable)


def _fixed_results(opdef: OpDef) -> int:
    n = _FIXED.get(opdef.name)
    if n is None:
        n = _FIXED[opdef.name] = sum(1 for r in opdef.results if not r.variadic)
    return n


class OpState:
    """What the format engine has read so far for one op."""

    __slots__ = (
        "attrs",
        "checks",
        "extra",
        "opdef",
        "operands",
        "regions",
        "rtypes",
        "token",
        "total",
    )

    def __init__(self, opdef: OpDef, total: int | None, token: Token) -> None:
        self.opdef = opdef
        self.operands: dict[str, list[Value]] = {}
        self.attrs: dict[str, Any] = {}
        self.rtypes: dict[str, list[T.Type]] = {}
        self.regions: list[Region] = []
        self.total = total  # number of results named on the left, None if none
        self.token = token
        self.extra: dict[str, Any] = {}
        # (value, written type, where): checked once the op is read, as MLIR resolves
        # operands after parsing the whole op (a syntax error wins over a type mismatch)
        self.checks: list[tuple[Value, T.Type, Token]] = []

    def result_count(self, name: str) -> int | None:
        fixed = _fixed_results(self.opdef)
        for r in self.opdef.results:
            if r.name == name:
                if not r.variadic:
                    return 1
                return None if self.total is None else self.total - fixed
        raise AssertionError(f"{self.opdef.name} has no result {name}")

    def infer_count(self, name: str) -> int:
        """Result count of `type*` results when no names were written: the index rank."""
        for vals in self.operands.values():
            for v in vals:
                t = v.type
                if isinstance(t, T.TensorViewType):
                    return t.rank
                if isinstance(t, T.VIEW_TYPES):
                    return len(t.tile_shape)  # type: ignore[union-attr]
        return 1


class OpParser:
    """Recursive-descent reader over the token list; one instance per file."""

    def __init__(self, text: str, filename: str, *, allow_unregistered: bool = False) -> None:
        self.smap = SourceMap(text, filename)
        self.filename = filename
        self.toks = tokenize(text, self.smap)
        self.pos = 0
        self.scopes: list[dict[str, Value]] = [{}]
        self.allow_unregistered = allow_unregistered
        self.alias_tokens: dict[str, tuple[int, int]] = {}
        self.aliases: dict[str, Any] = {}
        self.alias_order: list[str] = []
        self._resolving: set[str] = set()
        self.current_op = ""  # mnemonic of the op being read (for messages)
        self.def_tokens: dict[Value, Token] = {}  # where each value was defined

    # -------------------------------------------------------------------- tokens
    def peek(self, k: int = 0) -> Token:
        if k == 0:
            return self.toks[self.pos]
        return self.toks[min(self.pos + k, len(self.toks) - 1)]

    def next(self) -> Token:
        t = self.toks[self.pos]
        if t.kind != EOF:
            self.pos += 1
        return t

    def at(self, text: str) -> bool:
        t = self.toks[self.pos]
        if t.text == text:
            return t.kind in "pwn"
        # `rounding<zero>` is one token; the keyword `rounding` starts it.
        return t.kind == "a" and t.text.startswith(text + "<")

    def accept(self, text: str) -> bool:
        if not self.at(text):
            return False
        t = self.toks[self.pos]
        if t.kind == "a" and t.text != text:
            rest = t.text[len(text):]
            self.toks[self.pos] = Token("A", rest, t.offset + len(text))
        else:
            self.pos += 1
        return True

    def expect(self, text: str, what: str | None = None) -> Token:
        t = self.toks[self.pos]
        if t.text == text and t.kind in "pwn":  # the common case, kept fast
            self.pos += 1
            return t
        if not self.accept(text):
            raise self.error(f"expected '{text}'" + (f" {what}" if what else "")
                             + f", found {self.describe(t)}", t)
        return t

    @staticmethod
    def describe(t: Token) -> str:
        return "end of file" if t.kind == EOF else f"'{t.text}'"

    def error(self, message: str, tok: Token | None = None) -> CompileError:
        t = tok or self.peek()
        if t.kind == EOF and len(self.toks) > 1:  # point just after the last token
            last = self.toks[-2]
            return self.smap.error(message, last.offset + len(last.text))
        return self.smap.error(message, t.offset)

    def errors(self, messages: list[str], tok: Token) -> CompileError:
        """Several diagnostics at one place (MLIR reports some failures twice)."""
        diags = [d for m in messages for d in self.error(m, tok).diagnostics]
        return CompileError(diags)

    def sub(self, t: Token, start: str) -> Any:
        """Parse a bracketed token's text with a grammar.lark rule."""
        try:
            return parse_sub(_strip_hash(t.text), start)
        except AsmError as e:
            raise self.smap.error(e.message, t.offset + min(e.offset, len(t.text) - 1)) from None

    def string_value(self, t: Token) -> str:
        try:
            return parse_string_literal(t.text)
        except AsmError as e:
            raise self.smap.error(e.message, t.offset + e.offset) from None

    def symbol_value(self, t: Token) -> str:
        body = t.text[1:]
        return parse_string_literal(body) if body.startswith('"') else body

    def token_parser(self, toks: list[Token], at: Token) -> OpParser:
        """A parser over some of this file's tokens, sharing names and aliases."""
        child = object.__new__(OpParser)
        child.__dict__.update(self.__dict__)
        child.toks = list(toks) + [Token(EOF, "", at.offset)]
        child.pos = 0
        return child

    def sub_parser(self, t: Token, strip: int) -> OpParser:
        """A parser over the inside of a bracketed token such as ``<{...}>``."""
        inner = t.text[strip:len(t.text) - strip]
        base = t.offset + strip
        toks = tokenize(inner, self.smap)
        for tk in toks:
            tk.offset += base
        return self.token_parser(toks[:-1], t)

    # -------------------------------------------------------------------- values
    def define(self, name: str, value: Value, tok: Token) -> None:
        for scope in self.scopes:
            if name in scope:
                raise self.error(f"redefinition of SSA value '%{name}'", tok)
        self.scopes[-1][name] = value
        self.def_tokens[value] = tok

    def lookup_value(self, tok: Token) -> Value:
        name = tok.text[1:]
        for scope in reversed(self.scopes):
            v = scope.get(name)
            if v is not None:
                return v
        raise self.error(f"use of undeclared SSA value name '{tok.text}'", tok)

    def parse_operand(self) -> Value:
        t = self.next()
        if t.kind != "v":
            raise self.error(f"expected SSA operand, found {self.describe(t)}", t)
        return self.lookup_value(t)

    def parse_operand_list(self) -> list[Value]:
        out: list[Value] = []
        if self.peek().kind != "v":
            return out
        out.append(self.parse_operand())
        while self.at(",") and self.peek(1).kind == "v":
            self.next()
            out.append(self.parse_operand())
        return out

    def check_type(self, v: Value, t: T.Type, tok: Token) -> None:
        if v.type != t:
            from .asm_attrs import type_text

            err = self.error(f"use of value '%{v.name_hint}' expects different type than "
                             f"prior uses: '{type_text(t, True)}' vs "
                             f"'{type_text(v.type, True)}'", tok)
            where = self.def_tokens.get(v)
            if where is not None:
                note = self.error("prior use here", where).diagnostics[0]
                note.severity = "note"
                err.diagnostics[0].notes.append(note)
            raise err

    # -------------------------------------------------------------------- types
    def at_type(self) -> bool:
        t = self.peek()
        if t.kind == "a":
            return is_type_head(t.text)
        if t.kind == "w":
            return word_type(t.text) is not None
        return t.kind == "p" and t.text == "("

    def parse_type(self) -> T.Type:
        t = self.next()
        cached = _TYPE_CACHE.get(t.text)
        if cached is not None:
            return cached
        ty = self._parse_type_token(t)
        if t.kind in "wa" and not isinstance(ty, T.OpaqueType):
            _TYPE_CACHE[t.text] = ty
        return ty

    def _parse_type_token(self, t: Token) -> T.Type:
        if t.kind == "w":
            wt = word_type(t.text)
            if wt is not None:
                return wt
            if t.text.startswith("!"):
                return T.OpaqueType(t.text)
        elif t.kind == "a":
            if is_type_head(t.text):
                return self.sub(t, "type")
            if t.text.startswith("!") or t.text.split("<", 1)[0] in _BUILTIN_TYPE_HEADS:
                return T.OpaqueType(t.text)
        elif t.kind == "p" and t.text == "(":
            self.pos -= 1
            return self.parse_function_type()
        where = f"custom op 'cuda_tile.{self.current_op}' " if self.current_op else ""
        raise self.error(f"{where}expected valid keyword (a type), found {self.describe(t)}",
                         t)

    def parse_type_list(self, count: int | None) -> list[T.Type]:
        """``count`` comma-separated types (any number >= 1 when count is None)."""
        if count == 0:
            return []
        out = [self.parse_type()]
        while (count is None or len(out) < count) and self.at(","):
            if count is None and not self._type_after_comma():
                break
            self.next()
            out.append(self.parse_type())
        return out

    def _type_after_comma(self) -> bool:
        save = self.pos
        self.pos += 1
        ok = self.at_type()
        self.pos = save
        return ok

    def parse_function_type(self) -> T.FunctionType:
        self.expect("(")
        ins: list[T.Type] = []
        if not self.accept(")"):
            ins = self.parse_type_list(None)
            self.expect(")")
        self.expect("->")
        if self.accept("("):
            outs: list[T.Type] = []
            if not self.accept(")"):
                outs = self.parse_type_list(None)
                self.expect(")")
        else:
            outs = [self.parse_type()]
        return T.FunctionType(tuple(ins), tuple(outs))

    # -------------------------------------------------------------------- attributes
    def parse_int_list(self) -> list[int]:
        self.expect("[")
        out: list[int] = []
        if self.accept("]"):
            return out
        while True:
            t = self.next()
            if t.text in ("true", "false"):
                out.append(int(t.text == "true"))
            elif t.kind == "n" and t.text.lstrip("-").isdigit():
                out.append(int(t.text))
            else:
                raise self.error(f"expected integer, found {self.describe(t)}", t)
            if self.accept("]"):
                return out
            self.expect(",")

    def parse_typed_attr_array(self) -> tuple[Any, ...]:
        self.expect("[")
        out: list[Any] = []
        if self.accept("]"):
            return ()
        while True:
            out.append(self.parse_typed_scalar())
            if self.accept("]"):
                return tuple(out)
            self.expect(",")

    def parse_typed_scalar(self) -> Any:
        """``1.0 : f32`` / ``0 : i32`` / ``true`` -> FloatAttr / IntegerAttr."""
        from .asm_attrs import parse_float_literal, parse_int_literal, signed

        t = self.next()
        if t.text in ("true", "false"):
            ty: T.Type = T.I1
            if self.accept(":"):
                ty = self.parse_type()
            return A.IntegerAttr(int(t.text == "true"), ty)
        if t.kind != "n":
            raise self.error(f"expected a number, found {self.describe(t)}", t)
        ty = T.I64
        if self.accept(":"):
            ty_tok = self.peek()
            ty = self.parse_type()
            if not isinstance(ty, T.ElementType):
                raise self.error(f"expected an element type, got '{ty}'", ty_tok)
        elif "." in t.text or "e" in t.text.lower() and not t.text.startswith("0x"):
            ty = T.F64
        try:
            if isinstance(ty, T.ElementType) and ty.is_float:
                return A.FloatAttr(parse_float_literal(t.text, ty), ty)
            if "." in t.text:
                raise AsmError(f"expected integer value for type {ty}")
            assert isinstance(ty, T.ElementType)
            return A.IntegerAttr(signed(parse_int_literal(t.text, ty), ty.bitwidth), ty)
        except AsmError as e:
            raise self.error(e.message, t) from None

    def parse_extra_attr_dict(self, opdef: OpDef | None) -> dict[str, Any]:
        from .asm_generic import parse_attr_dict

        return parse_attr_dict(self, opdef)

    # -------------------------------------------------------------------- locations
    def parse_location(self) -> A.Location:
        """After ``loc``: ``(#alias)``, ``("file":1:2)``, ``(unknown)``, ``("name"(loc))``."""
        self.expect("(")
        loc = self._loc_body()
        self.expect(")")
        return loc

    def _loc_body(self) -> A.Location:
        t = self.next()
        if t.kind == "h" and "<" not in t.text:
            return self.resolve_alias(t)
        if t.kind == "h":
            return self._di_from_token(t)
        if t.text == "unknown":
            return A.UnknownLoc()
        if t.kind == "q":
            s = self.string_value(t)
            if self.accept(":"):
                line = self.next()
                self.expect(":")
                col = self.next()
                if line.kind != "n" or col.kind != "n":
                    raise self.error("expected line and column numbers in location", line)
                return A.FileLineColLoc(s, int(line.text), int(col.text))
            if self.accept("("):
                child = self._loc_body()
                self.expect(")")
                return A.NameLoc(s, child)
            return A.NameLoc(s)
        if t.text == "callsite":
            self.expect("(")
            callee = self._loc_body()
            self.expect("at")
            caller = self._loc_body()
            self.expect(")")
            return A.CallSiteLoc(callee, caller)
        if t.text == "fused":
            self.expect("[")
            locs = [self._loc_body()]
            while self.accept(","):
                locs.append(self._loc_body())
            self.expect("]")
            return A.FusedLoc(tuple(locs))
        raise self.error(f"expected location, found {self.describe(t)}", t)

    def maybe_location(self) -> A.Location | None:
        if self.toks[self.pos].text == "loc" and self.peek(1).text == "(":
            self.next()
            return self.parse_location()
        return None

    def resolve_alias(self, t: Token) -> Any:
        name = t.text
        if name in self.aliases:
            return self.aliases[name]
        span = self.alias_tokens.get(name)
        if span is None:
            raise self.error(f"undefined symbol alias id '{name[1:]}'", t)
        if name in self._resolving:
            raise self.error(f"alias '{name}' refers to itself", t)
        self._resolving.add(name)
        save = self.pos
        self.pos = span[0]
        v = self.parse_alias_value()
        self.pos = save
        self._resolving.discard(name)
        self.aliases[name] = v
        return v

    def parse_alias_value(self) -> Any:
        t = self.peek()
        if t.text == "loc" and self.peek(1).text == "(":
            self.next()
            return self.parse_location()
        self.next()
        if t.kind == "h":
            if "<" in t.text:
                return self._di_from_token(t)
            return self.resolve_alias(t)
        from .asm_generic import parse_generic_attr

        self.pos -= 1
        return parse_generic_attr(self)

    def _di_from_token(self, t: Token) -> Any:
        raw = self.sub(t, "di_attr")
        return self._build_di(raw, t)

    def _ref(self, ref: Any, t: Token) -> Any:
        if isinstance(ref, str) and ref.startswith("#"):
            return self.resolve_alias(Token("h", ref, t.offset))
        return ref

    def _build_di(self, raw: Any, t: Token) -> Any:
        kind = raw[0]
        if kind == "di_file":
            return A.DIFileAttr(raw[1], raw[2])
        if kind == "di_compile_unit":
            return A.DICompileUnitAttr(self._ref(raw[1], t))
        if kind == "di_loc":
            loc = self._ref(raw[1], t)
            scope = self._ref(raw[2], t)
            if not isinstance(loc, A.FileLineColLoc):
                raise self.error("di_loc needs a file:line:col location", t)
            return A.DILocAttr(scope, loc.filename, loc.line, loc.column)
        f = {k: self._ref(v, t) for k, v in raw[1].items()}
        try:
            if kind == "di_subprogram":
                return A.DISubprogramAttr(f["file"], f["line"], f["name"],
                                          f.get("linkageName", f["name"]), f["compileUnit"],
                                          f.get("scopeLine", f["line"]))
            return A.DILexicalBlockAttr(f["scope"], f["file"], f["line"], f.get("column", 0))
        except KeyError as e:
            raise self.error(f"{kind} is missing the field {e.args[0]}", t) from None

    # -------------------------------------------------------------------- regions
    def parse_region(self, args: list[tuple[Token, T.Type]], owner: str) -> Region:
        """``{ ops }`` with the given block arguments in scope."""
        self.expect("{")
        block = Block()
        self.scopes.append({})
        for tok, ty in args:
            v = block.add_argument(ty, _hint(tok.text[1:]))
            self.define(tok.text[1:], v, tok)
        self.parse_block_body(block)
        close = self.expect("}")
        self.scopes.pop()
        self.finish_block(block, owner, close)
        return Region([block])

    def parse_block_body(self, block: Block) -> None:
        toks = self.toks
        while True:
            t = toks[self.pos]
            if t.kind == EOF or (t.text == "}" and t.kind == "p"):
                return
            block.append(self.parse_op())

    def finish_block(self, block: Block, owner: str, close: Token) -> None:
        """Terminator checks; add the implicit terminator the text may leave out."""
        for op in block.ops[:-1]:
            if op.name in TERMINATORS:
                msg = f"'{op.name}' op must be the last operation in the parent block"
                if op.source is not None:
                    from ..diagnostics import Diagnostic

                    raise CompileError(Diagnostic("error", msg, op.source.filename,
                                                  op.source.line, op.source.column))
                raise self.smap.error(msg, close.offset)
        implicit = IMPLICIT_TERMINATOR.get(owner)
        if implicit is None:
            return
        last = block.ops[-1] if block.ops else None
        if last is None or last.name not in TERMINATORS:
            block.append(make_op(implicit, [], [], operand_segments=[0]))

    def parse_ssa_def_list(self) -> list[tuple[Token, int]]:
        toks, pos = self.toks, self.pos
        t, eq = toks[pos], toks[pos + 1]
        if eq.text == "=" and eq.kind == "p":  # the common case: `%x =`
            self.pos = pos + 2
            return [(t, 1)]
        out: list[tuple[Token, int]] = []
        while True:
            t = self.next()
            count = 1
            if self.at(":") and self.peek(1).kind == "n":
                self.next()
                c = self.next()
                count = int(c.text)
            out.append((t, count))
            if not self.accept(","):
                break
            if self.peek().kind != "v":
                raise self.error("expected SSA value name", self.peek())
        self.expect("=")
        return out

    # -------------------------------------------------------------------- ops
    def parse_op(self) -> Operation:
        start = self.toks[self.pos]
        results: list[tuple[Token, int]] = []
        total = None
        if start.kind == "v":
            results = self.parse_ssa_def_list()
            total = sum(c for _, c in results) if len(results) > 1 else results[0][1]
        name_tok = self.toks[self.pos]
        if name_tok.kind == "q":
            op = parse_generic_op(self, total)
        elif name_tok.kind == "w":
            op = self.parse_custom_op(total)
        else:
            raise self.error(f"expected operation name, found {self.describe(name_tok)}",
                             name_tok)
        op.source = A.SourceRange(self.filename, *self.smap.line_col(name_tok.offset))
        loc = self.maybe_location()
        if loc is not None:
            op.location = loc
        if results:
            self.bind_results(op, results, name_tok)
        return op

    def bind_results(self, op: Operation, results: list[tuple[Token, int]],
                     name_tok: Token) -> None:
        if len(results) == 1 and results[0][1] == 1 and len(op.results) == 1:
            tok = results[0][0]  # the common case: `%x = op ...`
            name = tok.text[1:]
            v = op.results[0]
            v.name_hint = None if name.isdigit() else name
            self.define(name, v, tok)
            self.scopes[-1][name + "#0"] = v
            return
        total = sum(c for _, c in results)
        if not op.results:
            raise self.error("cannot name an operation with no results", results[0][0])
        if total != len(op.results):
            raise self.error(f"operation defines {len(op.results)} results but was provided "
                             f"{total} to bind", results[0][0])
        i = 0
        for tok, count in results:
            name = tok.text[1:]
            for j in range(count):
                v = op.results[i]
                v.name_hint = _hint(name) if j == 0 else f"{name}#{j}"
                if j == 0:
                    self.define(name, v, tok)
                self.scopes[-1][f"{name}#{j}"] = v
                self.def_tokens[v] = tok
                i += 1

    def parse_custom_op(self, total: int | None) -> Operation:
        name_tok = self.next()
        opdef = _OPDEFS.get(name_tok.text)
        if opdef is None:
            opdef = lookup(name_tok.text.removeprefix("cuda_tile."))
            if opdef is not None:
                _OPDEFS[name_tok.text] = opdef
        if opdef is None:
            raise self.error(f"custom op '{name_tok.text}' is unknown", name_tok)
        st = OpState(opdef, total, name_tok)
        self.current_op = opdef.name
        compile_parser(opdef)(self, st)
        self.current_op = ""
        for v, ty, tok in st.checks:
            if v.type is not ty:  # parsed types are shared objects: usually identical
                self.check_type(v, ty, tok)
        fixup = FIXUPS.get(opdef.name)
        if fixup is not None:
            fixup(st)
        return self.build_op(st)

    def build_op(self, st: OpState) -> Operation:
        opdef = st.opdef
        for v in st.operands.get("token", ()):  # token operands have no written type
            self.check_type(v, T.TOKEN, st.token)
        operand_names, result_names, variable = _build_plan(opdef)
        operands: list[Value] = []
        segments: list[int] = []
        got = st.operands
        for name in operand_names:
            vals = got.get(name, ())
            operands.extend(vals)
            segments.append(len(vals))
        rtypes: list[T.Type] = []
        got_types = st.rtypes
        for name, may_lack in result_names:
            ts = got_types.get(name)
            if ts is None:
                if may_lack:
                    continue
                raise self.error(f"internal: the format of '{opdef.name}' gives no type for "
                                 f"result '{name}'", st.token)
            rtypes.extend(ts)
        op = Operation(opdef.name, operands, [], with_defaults(opdef, st.attrs), st.regions,
                       segments if variable else None)
        op.results = [Value(t, op, i) for i, t in enumerate(rtypes)]
        for region in st.regions:
            region.parent = op
        return op


_OPDEFS: dict[str, OpDef] = {}  # spelling -> op table row (lookup's answers, cached)
_PLANS: dict[str, tuple[Any, ...]] = {}


def _build_plan(opdef: OpDef) -> tuple[Any, ...]:
    """(operand names, (result name, may be absent) pairs, has variable operands)."""
    plan = _PLANS.get(opdef.name)
    if plan is None or plan[0] is not opdef:
        plan = _PLANS[opdef.name] = (opdef, (
            tuple(od.name for od in opdef.operands),
            tuple((rd.name, rd.variadic or rd.since > "13.1") for rd in opdef.results),
            opdef.has_variable_operands))
    return plan[1]


def with_defaults(opdef: OpDef, attrs: dict[str, Any]) -> dict[str, Any]:
    """Attributes with every defaulted one that the text left out filled in (as
    bytecode has them), in the op table's order, extra attributes last."""
    if not opdef.attrs:
        return dict(attrs)
    out: dict[str, Any] = {}
    for a in opdef.attrs:
        if a.name in attrs:
            out[a.name] = attrs[a.name]
        elif a.default is not None:
            out[a.name] = a.default
        elif a.name == "rounding_mode" and opdef.name == "ftoi":
            from .enums import RoundingMode

            out[a.name] = RoundingMode.nearest_int_to_zero  # the one integer rounding
    out.update((k, v) for k, v in attrs.items() if k not in out)
    return out


def _strip_hash(text: str) -> str:
    return text.removeprefix("#cuda_tile.")


def _hint(name: str) -> str | None:
    """Numeric names (``%0``) carry no meaning: the printer renumbers them."""
    return None if name.isdigit() else name


# ---------------------------------------------------------------------------------------
# Top level


# MLIR's builtin shaped/compound types (``tensor<2xi16>``): not Tile IR types, but MLIR
# parses them anywhere a type goes; they are kept as opaque text, and the bytecode writer
# refuses them ("unsupported type in bytecode writer"), as cuda-tile-translate does.
_BUILTIN_TYPE_HEADS = frozenset({"tensor", "memref", "vector", "complex", "tuple"})


def parse_text(text: str, filename: str, *, allow_unregistered: bool = False) -> Module:
    """Parse a file holding one module (see parse_modules for several)."""
    mods = parse_modules(text, filename, allow_unregistered=allow_unregistered)
    if len(mods) != 1:
        raise CompileError(AsmErrorDiag(filename, f"expected one module, found {len(mods)}"))
    return mods[0]


def AsmErrorDiag(filename: str, message: str):
    from ..diagnostics import Diagnostic

    return Diagnostic("error", message, filename, 1, 1)


def parse_modules(text: str, filename: str, *, allow_unregistered: bool = False
                  ) -> list[Module]:
    """Parse every module of a file: ``cuda_tile.module`` blocks, or bare items."""
    import gc

    from .text_reader import read_modules

    # Parsing allocates many small objects and frees none, so the cyclic collector's
    # passes find nothing; pausing it makes parsing ~1.4x faster.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return read_modules(text, filename, allow_unregistered=allow_unregistered)
    finally:
        if was_enabled:
            gc.enable()


def parse_type(text: str, filename: str = "<type>") -> T.Type:
    """A type spelled alone, such as ``tile<4x8xf32, #blocked<threads=128, slots=1>>``."""
    from .text_reader import read_type

    return read_type(text, filename)


def parse_modules_old(text: str, filename: str, *, allow_unregistered: bool = False
                      ) -> list[Module]:
    """The format-engine parser this grammar replaces (kept for bench/parse_speed.py)."""
    import gc

    from .asm_toplevel import parse_top

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        p = OpParser(text, filename, allow_unregistered=allow_unregistered)
        return parse_top(p)
    finally:
        if was_enabled:
            gc.enable()
