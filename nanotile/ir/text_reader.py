"""Tile IR text to Modules: the Transformer Lark applies while it parses grammar.lark.

``read_modules(text, filename)`` is the entry point. Each rule's callback builds its
part of the IR as the parser reduces it, innermost first, so no parse tree is built:

- ``region_open`` (a region's ``{``) opens a scope with the block arguments its op's
  header just named (``for %i in ...``, an entry's signature, ``(%a: t, %b: t)``);
  ``region`` (its ``}``) closes it. An entry's body sees no value from outside.
- each generated ``op_<name>`` rule (grammar_gen.py) fills a ``ParsedOp`` from its
  children, guided by the rule's slots; ``op`` then names the results
  (``%a, %b = ...``), checks the types written for the operands, adds the terminator
  a region may leave out, and records where the op was written.
- ``#alias`` uses are resolved once the file is read (a definition may come last).

What the grammar cannot say is checked here with MLIR's messages: an undefined or
redefined value, a use whose type differs from its definition, an enum keyword that is
not one of its values, the number of results named.
"""

from __future__ import annotations

import re
from enum import Enum
from functools import cache, lru_cache
from types import MappingProxyType
from typing import Any, NamedTuple

from lark import Token

from ..diagnostics import CompileError, Diagnostic
from . import attrs as A
from . import types as T
from .asm_attrs import AsmError, make_dense, parse_string_literal, strip_prefix, type_text
from .core import Block, Module, Operation, Region, Value, make_op
from .dense_literal import DENSE_ELEMENTS, check_element, literal_shape
from .enums import INTEGER_ENUMS, MemoryOrderingSemantics
from .grammar_gen import OpRule, Slot, op_rules
from .limits import MAX_NESTING
from .optable import IMPLIED_OPERAND_TYPES, TESTING_FUNC, AttrDef, OpDef, lookup
from .text_errors import (describe, enum_errors, enum_value, outside_brackets, rounding_mode,
                          view_type_error, wrong_token_offset)
from .text_lalr import LalrRunner, ParseFailure, load_tables
from .text_values import (
    AliasRef,
    ArrayRaw,
    DenseRaw,
    EnumRaw,
    TextError,
    ValueBuilder,
    has_refs,
    int64_literal,
    resolve_refs,
    unquote,
)

# Ops whose single-block regions get an implicit terminator when the text leaves it out.
IMPLICIT_TERMINATOR = {"if": "yield", "for": "continue", "loop": "continue",
                       "entry": "return", "testing$func": "return", "reduce": "yield",
                       "scan": "yield"}
TERMINATORS = {"yield", "continue", "break", "return"}
_VALUE = re.compile(r"%[\w$.\-]+(?:#\d+)?")
_BLANKS = re.compile(r"(?:\s+|//[^\n]*)*")
_WORD_CHAR = re.compile(r"[\w$.]")
# optional enum keywords of ops whose cuda-tile parser is generated from a declarative
# format (load/store_view_tko have parsers of their own, with their own messages)
_DECLARATIVE_OPTIONAL_ENUMS = {"memory_scope": ("load_ptr_tko", "store_ptr_tko")}
# ops whose cuda-tile parser (parseMemoryAttributes) refuses any scope after `weak`
_WEAK_WITHOUT_SCOPE = ("load_view_tko", "store_view_tko")
_CONSTANT_ELEMENTS = " or ".join(DENSE_ELEMENTS)
# what cuda-tile's parser of make_tensor_view says starts so (OpAsmParser::emitError)
_MAKE_TENSOR_VIEW = "custom op 'cuda_tile.make_tensor_view' "
_NO_EXTRA = MappingProxyType({})  # SourceRange.extra of ops with nothing to add
# Ops whose regions see no value from outside (MLIR's IsolatedFromAbove).
ISOLATED = {"entry", "testing$func", "module", "cuda_tile.module", "builtin.module"}
_MODULES = ("cuda_tile.module", "builtin.module")


class ParsedOp:
    """An op as its custom form has been read (filled by the slots of its rule)."""

    __slots__ = ("attrs", "checks", "dense", "opdef", "operands", "picks", "regions",
                 "rtypes", "slot", "start", "tokens", "written")

    def __init__(self, opdef: OpDef, start: int) -> None:
        self.opdef = opdef
        self.start = start
        self.operands: dict[str, list[Value]] = {}
        self.tokens: dict[str, list[Token]] = {}   # where each operand was written
        self.attrs: dict[str, Any] = {}
        self.rtypes: dict[str, Any] = {}   # result name -> types, or ("each", type)
        self.regions: list[Region] = []
        self.checks: list[tuple[Value, T.Type, int]] = []  # (value, written type, where)
        self.dense: Any = None
        self.picks: tuple[int, ...] = ()  # slot -> the rule's child (-1: absent)
        self.slot = 0  # the slot being read
        # operand group -> the (first) type written for it and its slot (slot_start says
        # where); for an empty operand list, (None, the list's slot)
        self.written: dict[str, tuple[T.Type | None, int]] = {}


class _Scope(NamedTuple):
    """One open region: its block and the values defined in it."""

    block: Block | None
    counted: bool  # toward the nesting limit
    names: dict[str, Value]
    saved: list[dict[str, Value]] | None  # the enclosing scopes, when isolated from them


class IRBuilder(ValueBuilder):
    """The stateful callbacks: SSA values, ops, regions, modules, aliases."""

    def reset(self, text: str, filename: str, allow_unregistered: bool) -> None:
        self.text = text
        self.filename = filename
        self.allow_unregistered = allow_unregistered
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.scopes: list[dict[str, Value]] = [{}]
        self.open: list[_Scope] = []
        self.pending: tuple[list[tuple[Token, T.Type]], bool] | None = None
        self.generic: list[tuple[str, bool]] = []
        self.def_offsets: dict[Value, int] = {}
        self.aliases: dict[str, tuple[Any, int]] = {}
        self.saw_refs = False

    # ------------------------------------------------------------------ positions
    def diagnostic(self, severity: str, message: str, offset: int) -> Diagnostic:
        at = A.TextPosition(self.filename, offset, self.line_starts, None)
        return Diagnostic(severity, message, self.filename, at.line, at.column)

    def error(self, messages: list[str], offset: int, notes: tuple[str, ...] = ()
              ) -> CompileError:
        diags = [self.diagnostic("error", m, offset) for m in messages]
        diags[0].notes += [self.diagnostic("note", n, offset) for n in notes]
        return CompileError(diags)

    def slot_start(self, p: ParsedOp, slot: int | None = None) -> int:
        """Where the child of a slot (the one being read) was written (the op's start
        when the parser does not say: Lark's own loop, a rule with spliced parts)."""
        slot = p.slot if slot is None else slot
        if slot >= len(p.picks):
            return p.start
        if p.picks[slot] >= 0:
            return self.with_prefix(self.child_start(p.picks[slot]))
        # an absent part: where the part after the last one written starts
        before = [k for k in p.picks[:slot] if k >= 0]
        return self.child_start(before[-1] + 1 if before else 1)

    def next_token(self, offset: int) -> int:
        """Where the first token at or after ``offset`` starts (MLIR's current location
        once a part is read)."""
        return _BLANKS.match(self.text, offset).end()  # type: ignore[union-attr]

    def with_prefix(self, offset: int) -> int:
        """``offset``, or where the dialect prefix written just before it starts (the
        lexer skips `!cuda_tile.`; MLIR points at a type's `!`)."""
        for prefix in ("!cuda_tile.", "#cuda_tile.", "cuda_tile."):
            if offset >= len(prefix) and self.text.startswith(prefix, offset - len(prefix)):
                return offset - len(prefix)
        return offset

    def source(self, offset: int, aliases: tuple[str, ...] = ()) -> A.TextPosition:
        """Where the op whose name starts at ``offset`` was written (and, for an op with
        other spellings, which one: the verifier's messages use it, as MLIR's)."""
        extra = _NO_EXTRA
        for alias in aliases:
            if self.text.startswith(alias, offset) and \
                    not _WORD_CHAR.match(self.text, offset + len(alias)):
                extra = {"spelling": alias}
        if offset >= 10 and self.text[offset - 1] == "." and \
                self.text.startswith("cuda_tile.", offset - 10):
            offset -= 10  # an op's position is that of its name, prefix included
        return A.TextPosition(self.filename, offset, self.line_starts, extra)

    # ------------------------------------------------------------------ values and scopes
    def value(self, tok: Token) -> Value:
        """The value ``tok`` names, looked up from the innermost scope out."""
        name = tok[1:]
        for scope in reversed(self.scopes):
            v = scope.get(name)
            if v is not None:
                return v
        if name.endswith("#0"):  # `%x#0`: the only result of a single-result op
            return self.value(tok[:-2])  # type: ignore[arg-type]
        raise TextError(f"use of undeclared SSA value name '{tok}'", tok.start_pos)

    def define(self, name: str, value: Value, offset: int) -> None:
        for scope in self.scopes:
            if name in scope:
                raise TextError(f"redefinition of SSA value '%{name}'", offset)
        self.scopes[-1][name] = value
        self.def_offsets[value] = offset

    def check_type(self, v: Value, t: T.Type, offset: int) -> None:
        if v.type == t:
            return
        # the use's name, as written (a use is checked where its VALUE token starts)
        name = _VALUE.match(self.text, offset)[0]  # type: ignore[index]
        err = self.error([f"use of value '{name}' expects different type than prior uses: "
                          f"'{type_text(t, True)}' vs '{type_text(v.type, True)}'"], offset)
        where = self.def_offsets.get(v)
        if where is not None:
            err.diagnostics[0].notes.append(self.diagnostic("note", "prior use here", where))
        raise err

    def push_scope(self, block: Block | None, isolated: bool, counts: bool = True) -> None:
        """A region's scope (``counts``: toward the nesting limit; a module's body is not
        an op's region, and has no block unless written in the generic form)."""
        # as the bytecode reader and writer
        if counts and sum(s.counted for s in self.open) >= MAX_NESTING:
            raise TextError(f"regions nested too deeply (limit {MAX_NESTING})")
        scope = _Scope(block, counts, {}, self.scopes if isolated else None)
        if isolated:
            self.scopes = []
        self.scopes.append(scope.names)
        self.open.append(scope)

    def pop_scope(self) -> None:
        scope = self.open.pop()
        self.scopes.pop()
        if scope.saved is not None:
            self.scopes = scope.saved

    # ------------------------------------------------------------------ regions
    def block_arg(self, c: list[Any]) -> tuple[Token, T.Type]:
        return (c[0], c[1])

    def block_args(self, c: list[Any]) -> list[tuple[Token, T.Type]]:
        self.pending = (c, False)
        return c

    def region_open(self, c: list[Any]) -> Block:
        args, isolated = self.pending or ((), False)
        self.pending = None
        block = Block()
        self.push_scope(block, isolated)
        self.define_arguments(block, args)
        return block

    def define_arguments(self, block: Block, args: Any) -> None:
        for tok, ty in args:
            name = tok[1:]
            self.define(name, block.add_argument(ty, _hint(name)), tok.start_pos)

    def region(self, c: list[Any]) -> Region:
        self.pop_scope()
        return _region_of(c[0], c[1:])

    def generic_region_open(self, c: list[Any]) -> Block:
        name, isolated = self.generic[-1] if self.generic else ("", False)
        block = Block()
        self.push_scope(block, isolated, counts=name not in _MODULES)
        return block

    def block_label(self, c: list[Any]) -> None:
        self.pending = None
        self.define_arguments(self.open[-1].block, c[1] or ())

    def generic_region(self, c: list[Any]) -> Region:
        block, label, ops = c[0], c[1], c[2:]
        self.pop_scope()
        if label is None and not ops and not block.arguments:
            return Region([])
        return _region_of(block, ops)

    def module_open(self, c: list[Any]) -> None:
        self.push_scope(None, True, counts=False)

    # ------------------------------------------------------------------ op headers
    def checked_values(self, toks: list[Token], types: list[T.Type],
                       checks: list[tuple[Value, T.Type, int]]) -> list[Value]:
        """The values ``toks`` name, each to be checked against its written type."""
        values = [self.value(tok) for tok in toks]
        checks += [(v, ty, tok.start_pos) for v, ty, tok in zip(values, types, toks)]
        return values

    # The headers of for, loop, entry and make_tensor_view are rules of their own: each
    # returns what it read as a ParsedOp, which becomes the op's (see _header).
    def for_header(self, c: list[Any]) -> ParsedOp:
        unsigned, iv, lb, ub, step, ivt, assigns, types = c
        h = ParsedOp(None, self.start)  # type: ignore[arg-type]
        lb, ub, step = self.checked_values([lb, ub, step], [ivt] * 3, h.checks)
        h.operands = {"lowerBound": [lb], "upperBound": [ub], "step": [step]}
        if unsigned is not None:
            h.attrs["unsignedCmp"] = True
        assigns, types = assigns or [], types or []
        if len(assigns) != len(types):
            # at the op's name, as cuda-tile's ForOp::parse reports it (getNameLoc)
            raise TextError("mismatch in number of loop-carried values and defined values",
                            self.child_start(-1))
        h.operands["initValues"] = self.checked_values([tok for _, tok in assigns], types,
                                                       h.checks)
        h.rtypes["resultValues"] = list(types)
        self.pending = ([(iv, ivt), *[(n, t) for (n, _), t in zip(assigns, types)]], False)
        return h

    def loop_header(self, c: list[Any]) -> ParsedOp:
        """`loop iter_values(%a = %x) : types -> types`, each part optional; or
        `loop : types`, the results alone."""
        assigns, types, results = c if len(c) == 3 else (None, None, c[0])
        assigns, types = assigns or [], types or []
        if len(assigns) != len(types):
            raise TextError("found different number of iter_values and types")
        h = ParsedOp(None, self.start)  # type: ignore[arg-type]
        h.operands["initValues"] = self.checked_values([tok for _, tok in assigns], types,
                                                       h.checks)
        h.rtypes["resultValues"] = list(results or [])
        self.pending = ([(n, t) for (n, _), t in zip(assigns, types)], False)
        return h

    def entry_header(self, c: list[Any]) -> ParsedOp:
        sym, args, results, hints, extra = c
        if isinstance(results, T.Type):
            results = [results]
        h = ParsedOp(None, self.start)  # type: ignore[arg-type]
        h.attrs["sym_name"] = _symbol(sym)
        h.attrs["function_type"] = T.FunctionType(tuple(t for _, t in args),
                                                  tuple(results or ()))
        if hints is not None:
            h.attrs["optimization_hints"] = hints
        if extra is not None:
            h.attrs.update(self.convert_attr_dict(None, extra))
        self.pending = (args, True)
        return h

    def make_tensor_view_body(self, c: list[Any]) -> ParsedOp:
        """cuda-tile's MakeTensorViewOp::parse: the view type, the base read as a pointer
        to its elements, the shape and strides written against the type's, then the
        dynamic values read with the index type."""
        base, (shape, shape_at), (strides, strides_at), extra, ty, view_ty = c
        shape_values = [_mixed_value(t) for t in shape]  # as they are read: first
        stride_values = [_mixed_value(t) for t in strides]
        h = ParsedOp(None, self.start)  # type: ignore[arg-type]
        if extra is not None:
            h.attrs.update(self.convert_attr_dict(lookup("make_tensor_view"), extra))
        dynamic = [t for t in shape + strides if t.type == "VALUE"]
        if dynamic and view_ty is None:
            raise TextError("expected '->'",
                            wrong_token_offset(self.text, self.next_token(self.end)))
        if not dynamic and view_ty is not None:  # the first type is the view's
            raise TextError(f"{_MAKE_TENSOR_VIEW}expected 'tensor_view' type, but got "
                            f"'{type_text(ty, True)}'", self.child_start(self.size - 2))
        index_ty, view_ty = (ty, view_ty) if dynamic else (None, ty)
        if not isinstance(view_ty, T.TensorViewType):
            raise TextError(f"{_MAKE_TENSOR_VIEW}expected 'tensor_view' type, but got "
                            f"'{type_text(view_ty, True)}'", self.next_token(self.end))
        v = self.value(base)
        self.check_type(v, T.TileType((), T.PointerType(view_ty.element)), base.start_pos)
        h.operands["base"] = [v]
        _check_mixed(shape, shape_values, shape_at, view_ty.shape, "shape")
        _check_mixed(strides, stride_values, strides_at, view_ty.strides, "stride")
        for name, items in (("dynamicShape", shape), ("dynamicStrides", strides)):
            toks = [t for t in items if t.type == "VALUE"]
            h.operands[name] = self.checked_values(toks, [index_ty] * len(toks), h.checks)
        h.rtypes["result"] = [view_ty]
        return h

    def dense_literal(self, c: list[Any]) -> tuple[T.ElementType, Any, tuple[int, ...]]:
        """`<f32: [1.0, 2.0]>` of a constant or a global, read as cuda-tile reads it: its
        element type, its values, the shape they give (remembered by spelling)."""
        elem, values = c
        # the op's keyword comes just before for a constant; a global's name, say
        op = "constant" if self.text.startswith("constant", self.child_start(-1)) else "global"
        prefix = f"custom op 'cuda_tile.{op}' "
        check_element(elem, prefix, self.child_start(2))
        shape = literal_shape(values, elem, prefix, self.next_token)
        return elem, values, shape

    def mixed_list(self, c: list[Any]) -> tuple[list[Token], int]:
        """`[%n, 64]`: its items and where it starts."""
        return c, self.start

    # ------------------------------------------------------------------ ops
    def named_op(self, c: list[Any]) -> Operation:
        """`%a, %b:2 = op ...`: the names come as (name, `:N` or None) pairs."""
        op, loc = c[-2], c[-1]
        if loc is not None:
            self.located(op, loc)
        self.bind_results(op, [(c[i], 1 if c[i + 1] is None else int(c[i + 1]))
                               for i in range(0, len(c) - 2, 2)])
        return op

    def _named_op_unfiltered(self, picks: tuple[int, ...]) -> Any:
        """named_op reading the rule's children as they are (see text_lalr's hook): for
        `%x = op` (name at 0, op at 2, no `:N`, no location) in one step."""
        if picks != (0, -1, 2, -1):
            return lambda c: self.named_op([c[i] if i >= 0 else None for i in picks])
        define = self.define

        def one_name(c: list[Any]) -> Operation:  # bind_results' work for one name, inline
            op = c[2]
            if len(op.results) != 1:
                return self.named_op([c[0], None, op, None])
            tok, v = c[0], op.results[0]
            name = tok[1:]
            v.name_hint = None if name.isdigit() else name
            define(name, v, tok.start_pos)
            return op
        return one_name

    def op(self, c: list[Any]) -> Operation:
        """An op and its location (see named_op for ops with named results)."""
        self.located(c[0], c[1])
        return c[0]

    def located(self, op: Operation | Module, loc: Any) -> None:
        op.location = loc
        self.saw_refs = self.saw_refs or has_refs(loc)

    def build(self, p: ParsedOp, operand_names: tuple[str, ...],
              results: tuple[tuple[str, bool], ...], variable: bool,
              implied: tuple[tuple[str, T.Type], ...]) -> Operation:
        """The op of a ParsedOp: its result types, the checks of the types written for
        its operands (and of those ``implied``: operand group, type), the terminator its
        regions may leave out."""
        rtypes: list[T.Type] = []
        got = p.rtypes
        for name, may_lack in results:
            ts = got.get(name) if may_lack else got[name]  # every format types its results
            if ts is None:
                continue
            if type(ts) is tuple:  # `type*`: one type for each index dimension
                ts = [ts[1]] * _index_rank(p)
            rtypes += ts
        for v, ty, offset in p.checks:
            if v.type is not ty:  # parsed types are shared objects: usually identical
                self.check_type(v, ty, offset)
        vals = p.operands
        for name, ty in implied:
            for v, tok in zip(vals.get(name, ()), p.tokens.get(name, ())):
                self.check_type(v, ty, tok.start_pos)
        if variable:
            operands: list[Value] = []
            segments: list[int] | None = []
            for name in operand_names:
                group = vals.get(name, ())
                operands += group
                segments.append(len(group))  # type: ignore[union-attr]
        else:
            operands = [vals[name][0] for name in operand_names]
            segments = None
        op = Operation(p.opdef.name, operands, [], _with_defaults(p.opdef, p.attrs),
                       p.regions, segments)
        op.results = [Value(t, op, i) for i, t in enumerate(rtypes)]
        if p.regions:  # (Operation makes itself their parent)
            _add_terminators(op)
        op.source = self.source(p.start, p.opdef.aliases)
        return op

    def bind_results(self, op: Operation, results: list[tuple[Token, int]]) -> None:
        if len(results) == 1 and results[0][1] == 1 and len(op.results) == 1:  # `%x = ...`
            name, at = results[0][0][1:], results[0][0].start_pos
            op.results[0].name_hint = _hint(name)
            self.define(name, op.results[0], at)
            return
        total = sum(n for _, n in results)
        first = results[0][0].start_pos
        if not op.results:
            raise TextError("cannot name an operation with no results", first)
        if total != len(op.results):
            raise TextError(f"operation defines {len(op.results)} results but was provided "
                            f"{total} to bind", first)
        scope = self.scopes[-1]
        values = iter(op.results)
        for tok, count in results:
            name = tok[1:]
            for j in range(count):
                v = next(values)
                v.name_hint = _hint(name) if j == 0 else f"{name}#{j}"
                if j == 0:
                    self.define(name, v, tok.start_pos)
                scope[f"{name}#{j}"] = v
                self.def_offsets[v] = tok.start_pos

    # ------------------------------------------------------------------ the generic form
    def generic_head(self, c: list[Any]) -> tuple[Token, list[Token], Any, str, OpDef | None]:
        """`"cuda_tile.addf"(%a, %b) <{...}>`: the op's name, its operands, its
        properties, the name read and its row (None: an op of no row)."""
        name = parse_string_literal(str(c[0]))
        short = name.removeprefix("cuda_tile.")
        known = lookup(short) if name.startswith("cuda_tile.") or "." not in name else None
        self.generic.append((name, short in ISOLATED or name in ISOLATED or known is None))
        return (c[0], c[1] or [], c[2], name, known)

    def generic_op(self, c: list[Any]) -> Operation:
        (name_tok, operand_toks, props, full, opdef), regions, extra, ft = c
        self.generic.pop()
        operands = [self.value(t) for t in operand_toks]
        if len(ft.inputs) != len(operands):  # at the function type, the rule's last part
            plural = "" if len(operands) == 1 else "s"
            raise TextError(f"expected {len(operands)} operand type{plural} but had "
                            f"{len(ft.inputs)}", self.with_prefix(self.child_start(self.size - 1)))
        for v, ty, tok in zip(operands, ft.inputs, operand_toks):
            self.check_type(v, ty, tok.start_pos)
        raw = list(props or []) + list(extra or [])
        if opdef is None:
            op = self._unknown_generic(full, operands, ft, raw, regions or [], name_tok)
        else:
            op = self._known_generic(opdef, operands, ft, raw, regions or [], name_tok)
        op.source = self.source(name_tok.start_pos)
        return op

    def _unknown_generic(self, full: str, operands: list[Value], ft: T.FunctionType,
                         raw: list[Any], regions: list[Region], name_tok: Token) -> Operation:
        if full in ("builtin.module", "cuda_tile.testing$func"):  # the verifier checks them
            attrs = {key: self.convert(TESTING_FUNC.attr(key), v, at)
                     for key, v, at, _ in raw}
            return make_op(full.removeprefix("cuda_tile."), operands, list(ft.results), attrs,
                           regions)
        if not self.allow_unregistered:
            dialect = full.split(".", 1)[0]
            raise TextError(f"unregistered operation '{full}' found in dialect ('{dialect}') "
                            f"that does not allow unknown operations", name_tok.start_pos)
        attrs = {key: A.OpaqueAttr(text) for key, _, _, text in raw}
        return make_op(full, operands, list(ft.results), attrs, regions)

    def _known_generic(self, opdef: OpDef, operands: list[Value], ft: T.FunctionType,
                       raw: list[Any], regions: list[Region], name_tok: Token) -> Operation:
        at = name_tok.start_pos
        attrs: dict[str, Any] = {}
        segments = None
        for key, v, offset, _ in raw:
            if key == "operandSegmentSizes":
                if not isinstance(v, ArrayRaw):
                    raise TextError("expected array<...>", offset)
                segments = [int(x) for x in v.values]
                continue
            attrs[key] = self.convert(opdef.attr(key), v, offset)
        for a in opdef.attrs:
            if (a.name not in attrs and not a.optional and a.kind != "unit"
                    and a.default is None and a.since <= "13.1"):
                raise TextError(f"'cuda_tile.{opdef.name}' op requires attribute '{a.name}'", at)
        if opdef.has_variable_operands and segments is None:
            segments = _default_segments(opdef, len(operands), at)
        if segments is not None and sum(segments) != len(operands):
            raise TextError("operandSegmentSizes does not match the number of operands", at)
        if opdef.name == "if" and len(regions) == 1:
            regions.append(Region([]))  # no else branch
        if len(regions) != opdef.regions:
            raise TextError(f"'cuda_tile.{opdef.name}' op requires {opdef.regions} region(s), "
                            f"got {len(regions)}", at)
        for i, r in enumerate(regions):
            if not r.blocks and not (opdef.name == "if" and i == 1):
                raise TextError(f"'cuda_tile.{opdef.name}' op region #{i} must not be empty", at)
        op = make_op(opdef.name, operands, list(ft.results), _with_defaults(opdef, attrs),
                     regions, segments if opdef.has_variable_operands else None)
        _add_terminators(op)
        return op

    # ------------------------------------------------------------------ attribute dictionaries
    def attr_entry(self, c: list[Any]) -> tuple[str, Any, int, str]:
        key_tok, value = c
        key = unquote(key_tok)
        if value is None:
            return (key, True, key_tok.start_pos, "unit")
        text = self.text[self.start:self.end].split("=", 1)[1].strip()  # the value's text
        return (key, value, key_tok.start_pos, text)

    def convert_attr_dict(self, opdef: OpDef | None, entries: list[Any]) -> dict[str, Any]:
        """An attribute dictionary's entries, each as ``opdef``'s row wants it."""
        return {key: self.convert(opdef.attr(key) if opdef is not None else None, value, at)
                for key, value, at, _ in entries}

    def convert(self, a: AttrDef | None, v: Any, offset: int) -> Any:
        """A generic attribute value as the op table's kind for it wants it."""
        try:
            return _convert(a, v)
        except AsmError as e:
            raise TextError(e.message, offset) from None

    # ------------------------------------------------------------------ modules
    def alias_def(self, c: list[Any]) -> None:
        tok, value = c
        name = str(tok)
        if name in self.aliases:
            raise TextError(f"redefinition of attribute alias id '{name[1:]}'", tok.start_pos)
        self.aliases[name] = (value, tok.start_pos)

    def cuda_module(self, c: list[Any]) -> Module:
        sym, extra, items, loc = c[0], c[1], c[3:-1], c[-1]
        self.pop_scope()
        m = Module(_symbol(sym))
        m.source = self.source(self.start)
        if extra is not None:
            attrs = self.convert_attr_dict(lookup("module"), extra)
            producer = attrs.pop("producer", None)
            if producer is not None:
                m.producer = getattr(producer, "value", producer)
            m.attributes.update(attrs)
        m.items = [op for op in items if op is not None]  # an alias definition is None
        if loc is not None:
            self.located(m, loc)
        return m

    def builtin_module(self, c: list[Any]) -> list[Module]:
        self.pop_scope()
        return _group_modules(c[3:-1])

    def file(self, c: list[Any]) -> list[Module]:
        return _group_modules(c)


def _group_modules(items: list[Any]) -> list[Module]:
    """Modules as written, the loose items of this level in one bare module (the first
    loose item's place), generic module ops turned into Modules."""
    out: list[Module] = []
    bare: Module | None = None
    for item in items:
        if item is None:
            continue
        if isinstance(item, Module):
            out.append(item)
        elif isinstance(item, list):
            out.extend(item)
        elif item.name in ("module", "builtin.module"):
            out.extend(_from_generic(item))
        else:
            if bare is None:
                bare = Module(None)
                out.append(bare)
            bare.items.append(item)
    return out


def _from_generic(op: Operation) -> list[Module]:
    """A generic ``builtin.module`` / ``cuda_tile.module`` op as Modules."""
    ops = [inner for r in op.regions for b in r.blocks for inner in b.ops]
    for item in ops:
        item.parent = None  # out of the op's block
    if op.name == "builtin.module":
        return _group_modules(ops)
    return [Module(op.attributes.get("sym_name"), ops, op.attributes.get("producer"),
                   location=op.location)]


# ---------------------------------------------------------------------------------------
# Custom-form ops: one callback per generated rule, driven by its slots


def _op_callback(rule: OpRule) -> Any:
    fast = _simple_op_callback(rule)
    if fast is not None:
        return fast
    opdef, slots = rule.opdef, rule.slots
    steps = tuple((_SLOT_STEPS[s.kind], s) for s in slots)
    count = len(steps)
    fixup = _FIXUPS.get(opdef.name)
    operand_names = tuple(o.name for o in opdef.operands)
    results = tuple((r.name, r.variadic or r.since > "13.1") for r in opdef.results)
    variable = opdef.has_variable_operands
    implied = IMPLIED_OPERAND_TYPES.get(opdef.name, ())  # operand types the text leaves out
    if opdef.operand("token") is not None:  # token operands have no written type
        implied = (("token", T.TOKEN), *implied)

    def plan(children: tuple[int, ...]) -> tuple[tuple[int, Any, Slot, int], ...]:
        """(slot, its step, the slot, its child's index or -1) for the slots an
        alternative reads: those written, and operand lists (empty when absent)."""
        return tuple((i, step, slot, children[i]) for i, (step, slot) in enumerate(steps)
                     if children[i] >= 0 or slot.kind == "operands")

    def run(self: IRBuilder, c: list[Any], steps_of: tuple, picks: tuple[int, ...]
            ) -> Operation:
        p = ParsedOp(opdef, self.start)
        p.picks = picks
        for i, step, slot, k in steps_of:
            child = c[k] if k >= 0 else None
            p.slot = i
            if child is not None:
                step(self, p, slot, child)
            elif slot.kind == "operands":  # none written: where the list would start
                p.operands[slot.name] = []
                p.tokens[slot.name] = []
                p.written[slot.name] = (None, i)
        if fixup is not None:
            fixup(self, p)
        return self.build(p, operand_names, results, variable, implied)

    every = plan(tuple(range(count)))  # children given one per slot, None where absent

    def callback(self: IRBuilder, c: list[Any]) -> Operation:
        """The rule's children one per slot (Lark's own loop; rules with spliced parts)."""
        if len(c) != count:
            raise AssertionError(f"{rule.name}: {len(c)} children for {count} slots")
        return run(self, c, every, ())

    def unfiltered(self: IRBuilder, picks: tuple[int, ...]) -> Any:
        """The callback of one alternative of the rule, given the rule's children as
        they are: it knows where each slot's child was written."""
        steps_of = plan(picks)
        return lambda c: run(self, c, steps_of, picks)
    callback.unfiltered = unfiltered  # type: ignore[attr-defined]
    return callback


# The slots the one-step callback reads: any attribute (a keyword, a token, or what its
# own rule built, as _attr_value takes it); units (maxf's and minf's unit keywords) are
# read by this path only.
_SIMPLE_SLOTS = {"operand", "type", "attr", "unit", "rounding", "units", "attrdict"}


def _simple_op_callback(rule: OpRule) -> Any:
    """The common shape (single operands, one type for several values, keyword
    attributes), built in one step: most ops of a kernel are such ops."""
    opdef, slots = rule.opdef, rule.slots
    if (opdef.has_variable_operands or opdef.regions or opdef.name in _FIXUPS
            or any(r.variadic for r in opdef.results)
            or any(s.kind not in _SIMPLE_SLOTS for s in slots)):
        return None
    operand_slots = {s.name: i for i, s in enumerate(slots) if s.kind == "operand"}
    operand_children = tuple(operand_slots[o.name] for o in opdef.operands)
    type_slots = {name: i for i, s in enumerate(slots) if s.kind == "type" for name in s.names}
    # (child holding the type, operand index), in the order the types are written
    checks = sorted((type_slots[o.name], k) for k, o in enumerate(opdef.operands)
                    if o.name in type_slots)
    result_types = [type_slots.get(r.name) for r in opdef.results]
    if any(t is None and r.since <= "13.1" for t, r in zip(result_types, opdef.results)):
        return None
    attr_children = {s.name: (i, s.kind) for i, s in enumerate(slots)
                     if s.kind in ("attr", "unit", "rounding")}
    units_slot = next((i for i, s in enumerate(slots) if s.kind == "units"), None)
    extra_slot = next((i for i, s in enumerate(slots) if s.kind == "attrdict"), None)
    name = opdef.name
    types_slots = tuple(t for t in result_types if t is not None)

    def unfiltered(self: IRBuilder, picks: tuple[int, ...]) -> Any:
        """The callback of one alternative of the rule, reading the rule's children
        where the alternative has them (``picks[slot]``; -1: that part is absent)."""
        def at(slot: int | None) -> int | None:
            return None if slot is None or picks[slot] < 0 else picks[slot]
        operand_at = tuple(picks[i] for i in operand_children)
        check_at = tuple((picks[i], k) for i, k in checks)
        type_at = tuple(picks[t] for t in types_slots)
        units, extra = at(units_slot), at(extra_slot)
        plan = []
        for a in opdef.attrs:
            i, kind = attr_children.get(a.name, (None, ""))
            plan.append((a, at(i), kind, a.default))
        value, source, define_attr = self.value, self.source, _attr_value
        aliases = opdef.aliases

        def callback(c: list[Any]) -> Operation:
            operands = [value(c[i]) for i in operand_at]
            for i, k in check_at:
                if operands[k].type is not c[i]:
                    self.check_type(operands[k], c[i], c[operand_at[k]].start_pos)
            attrs: dict[str, Any] = {}
            for a, i, kind, default in plan:
                child = c[i] if i is not None else None
                if child is not None:
                    attrs[a.name] = define_attr(name, a, kind, child)
                elif units is not None and a.name in c[units]:
                    attrs[a.name] = True
                elif default is not None:
                    attrs[a.name] = default
            if extra is not None:
                attrs.update(self.convert_attr_dict(opdef, c[extra]))
            op = Operation(name, operands, [], attrs)
            op.results = [Value(c[t], op, r) for r, t in enumerate(type_at)]
            op.source = source(self.start, aliases)
            return op
        return callback

    def callback(self: IRBuilder, c: list[Any]) -> Operation:  # Lark's own loop calls this
        return unfiltered(self, tuple(-1 if x is None else i for i, x in enumerate(c)))(c)
    callback.unfiltered = unfiltered  # type: ignore[attr-defined]
    return callback


def _attr_value(opname: str, a: AttrDef, slot_kind: str, child: Any) -> Any:
    """An attribute's value from its child in an op rule: a keyword, a token, or the
    value its own rule built (i32_array, predicate, identities, hints, type)."""
    if slot_kind == "rounding":
        return rounding_mode(opname, child)
    if a.kind == "enum":
        member = enum_value(a.enum, str(child))  # type: ignore[arg-type]
        if member is None:
            raise TextError(enum_errors(opname, a, str(child), True), child.start_pos)
        return member
    if a.kind == "unit":  # its keyword
        return True
    if a.kind == "int":  # a literal, read as the attribute's integer type
        return _integer(a, int(str(child)), child.start_pos)
    return _convert(a, child)


def _operands(self: IRBuilder, p: ParsedOp, s: Slot, toks: list[Token]) -> None:
    p.operands[s.name] = [self.value(t) for t in toks]
    p.tokens[s.name] = toks


def _types(self: IRBuilder, p: ParsedOp, s: Slot, types: list[T.Type]) -> None:
    """The types written for the values of ``s.names``: an operand group's are checked
    (and the first kept in ``p.written``), or they are the results' types."""
    for name in s.names:
        vals = p.operands.get(name)
        if vals is not None:
            if len(vals) != len(types):  # MLIR's resolveOperands, at the operand list
                at = p.tokens[name][0].start_pos if p.tokens[name] else \
                    self.slot_start(p, p.written[name][1])
                raise TextError(f"custom op 'cuda_tile.{p.opdef.name}' number of operands "
                                f"and types do not match: got {len(vals)} operands and "
                                f"{len(types)} types", at)
            for v, ty, tok in zip(vals, types, p.tokens[name]):
                p.checks.append((v, ty, tok.start_pos))
            p.written[name] = (types[0], p.slot)
        elif p.opdef.operand(name) is None:
            p.rtypes[name] = list(types)


# what cuda-tile's parsers of get_tensor_shape and get_index_space_shape want the type
# written for their source to be, and say when it is not
_SHAPE_SOURCES = {"get_tensor_shape": (T.TensorViewType, "tensor_view"),
                  "get_index_space_shape": (T.VIEW_TYPES, "tile view")}


def _type_each(self: IRBuilder, p: ParsedOp, s: Slot, ty: T.Type) -> None:
    source = _SHAPE_SOURCES.get(p.opdef.name)
    if source is not None and not isinstance(p.written["src"][0], source[0]):
        src, slot = p.written["src"]
        raise TextError(f"custom op 'cuda_tile.{p.opdef.name}' expected {source[1]}, "
                        f"got '{type_text(src, True)}'", self.slot_start(p, slot))
    for name in s.names:
        vals = p.operands.get(name)
        if vals is not None:
            for v, tok in zip(vals, p.tokens[name]):
                p.checks.append((v, ty, tok.start_pos))
        else:
            p.rtypes[name] = ("each", ty)


def _attr(self: IRBuilder, p: ParsedOp, s: Slot, child: Any) -> None:
    """An attribute, a unit keyword or a rounding mode."""
    a = p.opdef.attr(s.name)
    assert a is not None
    if a.kind == "enum" and s.kind == "attr":
        if s.name == "memory_scope" and p.opdef.name in _WEAK_WITHOUT_SCOPE and \
                p.attrs.get("memory_ordering_semantics") is MemoryOrderingSemantics.weak:
            raise TextError(f'operation specifies weak memory ordering semantics, but then '
                            f'provides "{child}" scope, expected no memory scope.',
                            child.start_pos)
        if enum_value(a.enum, str(child)) is None and \
                p.opdef.name in _DECLARATIVE_OPTIONAL_ENUMS.get(s.name, ()):
            # cuda-tile's generated parser takes `(memory_scope)?` only for a scope
            # keyword: another word is where the source operand should be
            raise TextError("expected SSA operand", child.start_pos)
    p.attrs[s.name] = _attr_value(p.opdef.name, a, s.kind, child)


def _attrdict(self: IRBuilder, p: ParsedOp, s: Slot, entries: list[Any]) -> None:
    p.attrs.update(self.convert_attr_dict(p.opdef, entries))


def _dense(self: IRBuilder, p: ParsedOp, s: Slot, literal: Any) -> None:
    p.dense = (*literal, p.slot)


def _dense_type(self: IRBuilder, p: ParsedOp, s: Slot, ty: T.Type) -> None:
    """The tile type after a constant's values: its element type and shape are theirs
    (any shape for a single value)."""
    elem, values, shape, dense_slot = p.dense
    elem_name = str(elem)
    prefix = f"custom op 'cuda_tile.{p.opdef.name}' "
    if not isinstance(ty, T.TileType):  # what cuda-tile's constant parser says
        raise TextError(f"{prefix}result #0 must be tile of {_CONSTANT_ELEMENTS} values, "
                        f"but got '{type_text(ty, True)}'", self.slot_start(p))
    if ty.element != elem:
        raise TextError(f"{prefix}mismatch between the element type: '{elem}' and the tile "
                        f"element type '{ty.element}'", self.slot_start(p))
    if shape and shape != ty.shape:
        raise TextError(f"{prefix}inferred shape of elements literal ({list(shape)}) does "
                        f"not match type ({list(ty.shape)})", self.slot_start(p))
    # tile-layout: the value's layout, not the constant's
    bare = ty if ty.layout is None else T.TileType(ty.shape, ty.element)
    # a splat: kernels write the same few thousands of times
    dense = _splat if isinstance(values, str) else make_dense
    try:
        p.attrs["value"] = dense(values, elem_name, bare)
    except AsmError as e:
        at = self.end if "tile" in e.message else self.slot_start(p, dense_slot)
        raise TextError(e.message, at) from None
    if s.name:
        p.rtypes[s.name] = [ty]


@lru_cache(maxsize=1024)
def _splat(value: str, elem_name: str, tile: T.Type) -> A.DenseElementsAttr:
    return make_dense(value, elem_name, tile)


def _index_types(self: IRBuilder, p: ParsedOp, s: Slot, types: list[T.Type]) -> None:
    vals = p.operands.get(s.name, [])
    p.written["!index_types"] = (None, p.slot)  # written: _view_index_types asks
    if len(types) == 1:
        types = types * len(vals)
    if len(types) != len(vals):
        raise TextError(f"custom op 'cuda_tile.{p.opdef.name}' expected {len(vals)} index "
                        f"types, got {len(types)}",
                        _first_of_last_types(self.text, p.start, self.end, len(types)))
    for v, ty, tok in zip(vals, types, p.tokens.get(s.name, [])):
        p.checks.append((v, ty, tok.start_pos))


def _header(self: IRBuilder, p: ParsedOp, s: Slot, header: ParsedOp) -> None:
    """What the header's own rule read (the op rule's first child)."""
    p.operands, p.attrs, p.checks, p.rtypes = (header.operands, header.attrs, header.checks,
                                               header.rtypes)
    p.tokens = {name: [] for name in header.operands}


_SLOT_STEPS = {
    "operands": _operands, "types": _types,
    # an operand, and one type for single values: lists of one
    "operand": lambda self, p, s, tok: _operands(self, p, s, [tok]),
    "type": lambda self, p, s, ty: _types(self, p, s, [ty]),
    "type_each": _type_each, "attr": _attr, "unit": _attr, "rounding": _attr,
    "attrdict": _attrdict, "dense": _dense, "dense_type": _dense_type,
    "index_types": _index_types,
    "region": lambda self, p, s, region: p.regions.append(region),
    "block_args": lambda self, p, s, args: None,  # block_args' own callback reads them
    "header": _header,
}


def _load_ptr_operands(self: IRBuilder, p: ParsedOp) -> None:
    """`load_ptr_tko %p, %x : ..., T`: a lone optional operand is the mask when it is a
    tile of i1, otherwise the padding value (the text does not say which)."""
    mask = p.operands.get("mask")
    if mask and not p.operands.get("paddingValue"):
        t = mask[0].type
        if not (isinstance(t, T.TileType) and t.element == T.I1):
            p.operands["paddingValue"] = mask
            p.tokens["paddingValue"] = p.tokens["mask"]
            p.operands["mask"] = []


def _if_regions(self: IRBuilder, p: ParsedOp) -> None:
    if len(p.regions) == 1:
        p.regions.append(Region([]))  # no else branch


def _view_result(self: IRBuilder, p: ParsedOp) -> None:
    """make_*_view: the type written is the view's; the operand is read as its
    tensor_view."""
    view = p.rtypes["result"][0]
    message = view_type_error(p.opdef.name, view)
    if message:  # at the type, the rule's last part
        raise TextError(message, self.with_prefix(self.child_start(self.size - 1)))
    tok = p.tokens["tensor_view"][0]
    p.checks.append((p.operands["tensor_view"][0], view.tensor_view, tok.start_pos))


def _argument_region(self: IRBuilder, p: ParsedOp) -> None:
    """cuda-tile reads reduce's and scan's region with the block arguments written before
    it and adds no terminator: `() {}` is a region without a block."""
    block = p.regions[0].blocks[0]
    if not block.arguments and not block.ops:
        p.regions[0] = Region([])


def _first_of_last_types(text: str, start: int, end: int, count: int) -> int:
    """Where the first of the ``count`` types written just before the op's last top-level
    `->` starts (cuda-tile's parseIndexTypes reports there: the first index type)."""
    outside = list(outside_brackets(text, start, end))
    arrow = max((i for i in outside if text.startswith("->", i)), default=end)
    commas = [i for i in outside if text[i] == "," and start < i < arrow]
    at = commas[-count] if len(commas) >= count else start
    return _BLANKS.match(text, at + 1).end()  # type: ignore[union-attr]


def _view_index_types(self: IRBuilder, p: ParsedOp) -> None:
    """cuda-tile's view load/store/reduction parsers, once the whole op is read: indices
    written without their types (`, tile<i32>` after the view's type)."""
    if p.operands.get("index") and "!index_types" not in p.written:
        raise TextError(f"custom op 'cuda_tile.{p.opdef.name}' index types must be specified "
                        "when indices are present", self.next_token(self.end))


_FIXUPS = {"load_ptr_tko": _load_ptr_operands, "if": _if_regions,
           "load_view_tko": _view_index_types, "store_view_tko": _view_index_types,
           "atomic_red_view_tko": _view_index_types,
           "reduce": _argument_region, "scan": _argument_region,
           "make_partition_view": _view_result, "make_strided_view": _view_result,
           "make_gather_scatter_view": _view_result}

IRBuilder.named_op.unfiltered = IRBuilder._named_op_unfiltered  # type: ignore[attr-defined]


for _rule in op_rules():
    setattr(IRBuilder, _rule.name, _op_callback(_rule))


# ---------------------------------------------------------------------------------------
# Helpers


def _hint(name: str) -> str | None:
    """Numeric names (``%0``) carry no meaning: the printer renumbers them."""
    return None if name.isdigit() else name


def _symbol(tok: Token) -> str:
    return unquote(str(tok)[1:])


def _index_rank(p: ParsedOp) -> int:
    """Result count of `type*` results when no names were written: the index rank."""
    for vals in p.operands.values():
        for v in vals:
            t = v.type
            if isinstance(t, T.TensorViewType):
                return t.rank
            if isinstance(t, T.VIEW_TYPES):
                return len(t.tile_shape)  # type: ignore[union-attr]
    return 1


def _mixed_value(tok: Token) -> int | None:
    """An item of make_tensor_view's shape or strides: an int64, or None for a value."""
    return None if tok.type == "VALUE" else int64_literal(tok, _MAKE_TENSOR_VIEW)


def _check_mixed(items: list[Token], values: list[int | None], at: int,
                 dims: tuple[Any, ...], what: str) -> None:
    """The shape or strides written in make_tensor_view against its type's."""
    if len(items) != len(dims):
        raise TextError(f"{_MAKE_TENSOR_VIEW}expected {what} declaration to contain "
                        f"{len(dims)} elements due to tensor_view type, but {len(items)} were "
                        "provided", at)
    for i, (tok, written, d) in enumerate(zip(items, values, dims)):
        if written != d:
            raise TextError(f"{_MAKE_TENSOR_VIEW}input {what} dimension {i} does not match "
                            "tensor_view type "
                            f"(expected {'dynamic' if d is None else d}, got "
                            f"{'dynamic' if written is None else written})", tok.start_pos)


def _region_of(block: Block, ops: list[Operation]) -> Region:
    """A region of one block holding ``ops``, of which only the last may end it."""
    for op in ops:
        block.append(op)
    for op in block.ops[:-1]:
        if op.name in TERMINATORS:
            raise TextError(f"'{op.name}' op must be the last operation in the parent block",
                            op.source.offset)
    return Region([block])


def _add_terminators(op: Operation) -> None:
    implicit = IMPLICIT_TERMINATOR.get(op.name)
    if implicit is None:
        return
    for region in op.regions:
        for block in region.blocks:
            if not block.ops or block.ops[-1].name not in TERMINATORS:
                block.append(make_op(implicit, [], [], operand_segments=[0]))


def _with_defaults(opdef: OpDef, attrs: dict[str, Any]) -> dict[str, Any]:
    """Attributes with every defaulted one that the text left out filled in (as
    bytecode has them), in the op table's order, extra attributes last."""
    out: dict[str, Any] = {}
    for a in opdef.attrs:
        if a.name in attrs:
            out[a.name] = attrs[a.name]
        elif a.default is not None:
            out[a.name] = a.default
    out.update((k, v) for k, v in attrs.items() if k not in out)
    return out


def _default_segments(opdef: OpDef, n: int, at: int) -> list[int]:
    """The group sizes when the generic form gives none: what is not a single operand
    goes to the one variable group, or there is nothing to share out."""
    fixed = sum(1 for o in opdef.operands if o.kind == "single")
    if len(opdef.operands) - fixed != 1 and n != fixed:
        raise TextError(f"'{opdef.name}' needs operandSegmentSizes in the generic form", at)
    return [1 if o.kind == "single" else n - fixed for o in opdef.operands]


def _convert(a: AttrDef | None, v: Any) -> Any:
    """A generic attribute value (as the grammar's callbacks built it) in the form the
    op table's attribute kind stores."""
    kind = a.kind if a is not None else None
    if v is True:  # a unit attribute: `{flush_to_zero}`
        return True
    if kind in ("type", "attr", "hints"):  # built by the grammar's callbacks
        return v
    if kind == "enum":
        if isinstance(v, A.IntegerAttr) and a.enum in INTEGER_ENUMS:  # type: ignore[union-attr]
            return _integer_enum(a, v)  # type: ignore[arg-type]
        text = v.value if isinstance(v, EnumRaw) else str(v)
        member = enum_value(a.enum, str(text))  # type: ignore[union-attr,arg-type]
        if member is None:
            raise AsmError(f"invalid {a.name} '{text}'")  # type: ignore[union-attr]
        return member
    if kind == "int":
        return v.value if isinstance(v, A.IntegerAttr) else int(str(v))
    if kind == "bool":
        return bool(v.value) if isinstance(v, A.IntegerAttr) else str(v) == "true"
    if kind in ("string", "symbol"):
        return _symbol(v) if str(v).startswith("@") else parse_string_literal(str(v))
    if kind == "dense":
        if not isinstance(v, DenseRaw) or not isinstance(v.type, T.TileType):
            raise AsmError("expected a tile type for the dense value")
        return make_dense(v.values, str(v.type.element), v.type)
    if kind in ("i32_array", "bool_array"):
        if type(v) is tuple:  # the custom form's `[1, 0]` (int_list)
            return v if kind == "i32_array" else tuple(map(bool, v))
        if not isinstance(v, ArrayRaw):
            raise AsmError("expected array<...>")
        if kind == "bool_array":
            return tuple(x == "true" for x in v.values)
        return tuple(int(x) for x in v.values)
    if kind == "attr_array":
        return tuple(v)
    return _generic(v)


def _integer(a: AttrDef, value: int, offset: int) -> int:
    """``value`` (the literal at ``offset``) held in the attribute's ``bits``-bit
    integer: as MLIR reads a signless integer, a literal up to 2^bits - 1 (wrapped to
    its signed value) or down to -2^(bits-1), else an error."""
    if not -(1 << (a.bits - 1)) <= value < 1 << a.bits:
        raise TextError("integer constant out of range for attribute", offset)
    return value - (1 << a.bits) if value >= 1 << (a.bits - 1) else value


def _integer_enum(a: AttrDef, v: A.IntegerAttr) -> Enum:
    """`0 : i32` for an enum cuda-tile keeps as an i32 attribute."""
    values = {m.value: m for m in a.enum}  # type: ignore[union-attr]
    if v.type != T.I32 or v.value not in values:
        raise AsmError(f"Invalid attribute `{a.name}` in property conversion: "
                       f"{v.value} : {v.type}")
    return values[v.value]


def _generic(v: Any) -> Any:
    """An attribute of unknown kind: numbers, strings and types as such, else opaque."""
    if isinstance(v, A.IntegerAttr | A.FloatAttr | A.DictAttr | A.OptimizationHintsAttr
                  | A.DivByAttr | A.BoundedAttr | A.SameElementsAttr):
        return v
    if isinstance(v, T.Type):
        return A.TypeAttr(v)
    if isinstance(v, Token):
        text = str(v)
        if text.startswith('"'):
            return A.StringAttr(parse_string_literal(text))
        if text.startswith("@"):
            return A.OpaqueAttr(text)
        if text == "unit":
            return True
        return A.OpaqueAttr(strip_prefix(text))
    if isinstance(v, AliasRef):
        return A.OpaqueAttr(v.name)
    if isinstance(v, EnumRaw):
        return A.OpaqueAttr(f"#cuda_tile.{v.name}<{v.value}>")
    if isinstance(v, list | tuple):  # an array of attributes: each read the same way
        return [_generic(x) for x in v]
    return A.OpaqueAttr(str(v))


# ---------------------------------------------------------------------------------------
# Reading a file

@cache
def runner() -> LalrRunner:
    """The one runner and its builder, made at the first parse."""
    return LalrRunner(load_tables(), IRBuilder())


def read_modules(text: str, filename: str, *, allow_unregistered: bool = False) -> list[Module]:
    """Every module of a file (``cuda_tile.module`` blocks, or bare items)."""
    def parse(r: LalrRunner) -> list[Module]:
        modules = r.parse(text)
        _resolve_aliases(r.transformer, modules)
        return modules
    return _read(text, filename, allow_unregistered, parse)


def read_type(text: str, filename: str = "<type>") -> T.Type:
    """A type written alone (``tile<4xf32>``), read with the grammar's ``type`` rule."""
    return _read(text, filename, False, lambda r: r.parse(text, "type"))


def _read(text: str, filename: str, allow_unregistered: bool, parse: Any) -> Any:
    """Run ``parse`` with the builder set up for ``text``; errors become CompileErrors."""
    r = runner()
    builder: IRBuilder = r.transformer
    builder.reset(text, filename, allow_unregistered)
    try:
        return parse(r)
    except TextError as e:
        offset = builder.start if e.offset is None else e.offset
        raise builder.error(e.messages, offset, e.notes) from None
    except ParseFailure as f:
        raise builder.error(*describe(f, r.tables, text)) from None
    finally:
        builder.text = ""


_RESOLVING = object()  # the value of an alias while it is being resolved


def _resolve_aliases(b: IRBuilder, modules: list[Module]) -> None:
    """Resolve every alias, used or not (so a bad definition is reported), then the
    uses in locations. The printer makes its own alias names, as MLIR does."""
    if not b.aliases and not b.saw_refs:
        return
    values: dict[str, Any] = {}  # alias -> its value, or _RESOLVING while it is resolved

    def lookup_ref(ref: AliasRef) -> Any:
        value = values.get(ref.name)
        if value is _RESOLVING:
            raise TextError(f"alias '{ref.name}' refers to itself", ref.offset)
        if value is not None:
            return value
        entry = b.aliases.get(ref.name)
        if entry is None:
            raise TextError(f"undefined symbol alias id '{ref.name[1:]}'", ref.offset)
        values[ref.name] = _RESOLVING
        value = values[ref.name] = resolve_refs(entry[0], lookup_ref)
        return value

    for name, (_, offset) in b.aliases.items():
        lookup_ref(AliasRef(name, offset))
    for m in modules:
        m.location = resolve_refs(m.location, lookup_ref)
        for op in m.walk():
            op.location = resolve_refs(op.location, lookup_ref)
