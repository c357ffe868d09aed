"""Print a Module as Tile IR text: ``print_module(module, *, generic=False, debuginfo=False)``.

The custom form is the canonical text, the one tileirdisasm and cuda-tile-opt print
(prefixes stripped inside a module, floats as ``1.000000e+00``, defaults left out); each
op is printed by the format engine from its op table row. ``generic=True`` prints MLIR's
generic op form instead; ``debuginfo=True`` adds ``loc(...)`` and the alias definitions.

SSA names come from the names the parser kept (``name_hint``) or are numbered
``%0, %1, ...``; duplicates get a ``_N`` suffix. Numbering restarts in each entry.
"""

from __future__ import annotations

from enum import Enum
from functools import cache
from typing import Any

from . import attrs as A
from . import types as T
from .asm_attrs import (
    dense_values_text,
    format_float,
    hints_text,
    name_text,
    predicate_text,
    string_text,
    symbol_text,
    type_text,
    typed_attr_text,
)
from .asm_format import compile_format, compile_printer, enum_spelling
from .core import Module, Operation, Region, Value
from .enums import INTEGER_ENUMS
from .optable import IMPLIED_OPERAND_TYPES, TESTING_FUNC, OpDef, lookup

_ENUM_MNEMONIC = {"RoundingMode": "rounding", "IntegerOverflow": "overflow",
                  "AtomicRMWMode": "atomic_rmw_mode"}


def _snake(name: str) -> str:
    out = ""
    for i, ch in enumerate(name):
        if ch.isupper() and i:
            out += "_"
        out += ch.lower()
    return out


class OpPrinter:
    """Prints ops; holds the SSA names of the item being printed."""

    def __init__(self, *, generic: bool = False, debuginfo: bool = False,
                 alias_names: bool = False, use_hints: bool = True) -> None:
        self.generic = generic
        self.use_hints = use_hints  # False: number every value, ignore written names
        self.alias_names = alias_names  # print `pow` (cuda-tile's name) for `fpowf`
        self.debuginfo = debuginfo
        self.indent = 0
        self.names: dict[Value, str] = {}
        self.used: set[str] = set()
        self.counter = 0
        self.arg_counter = 0
        self.conflict = 0
        self.scope: Any = None
        self.op_names: dict[Operation, str] = {}
        self.loc_names: dict[Any, str] = {}

    # ------------------------------------------------------------------ naming
    def reset_names(self) -> None:
        self.names = {}
        self.used = set()
        self.counter = 0
        self.arg_counter = 0
        self.conflict = 0
        self.scope = (set(), None)

    def _unique(self, base: str) -> str:
        if base not in self.used:
            self.used.add(base)
            return base
        k = 0
        while f"{base}_{k}" in self.used:
            k += 1
        name = f"{base}_{k}"
        self.used.add(name)
        return name

    def _number(self) -> str:
        while str(self.counter) in self.used:
            self.counter += 1
        name = str(self.counter)
        self.used.add(name)
        self.counter += 1
        return name

    def _arg_name(self, v: Value) -> str:
        if v.name_hint:
            return self._unique(v.name_hint)
        while f"arg{self.arg_counter}" in self.used:
            self.arg_counter += 1
        name = f"arg{self.arg_counter}"
        self.used.add(name)
        return name

    def number(self, item: Operation) -> None:
        """Name every value of an item the way MLIR does: a region's own values first,
        then its nested regions, each starting from the same counters (so sibling
        regions reuse numbers), with names scoped to their region."""
        self.reset_names()
        self.op_names: dict[Operation, str] = {}
        stack: list[tuple[Region, int, int, int, Any]] = [
            (r, 0, 0, 0, None) for r in item.regions]
        while stack:
            region, self.counter, self.arg_counter, self.conflict, parent = stack.pop()
            scope = (set(), parent)
            self.scope = scope
            for block in region.blocks:
                for a in block.arguments:
                    if a.name_hint and self.use_hints:
                        self.names[a] = "%" + self._scoped_unique(a.name_hint)
                    else:
                        self.names[a] = "%" + self._next_arg_name()
                for op in block.ops:
                    self._number_results(op)
            for block in region.blocks:
                for op in block.ops:
                    for r in op.regions:
                        stack.append((r, self.counter, self.arg_counter, self.conflict, scope))

    def _next_arg_name(self) -> str:
        """``argN`` for an argument without a name: the next N that no name in scope has
        taken (an argument the input named ``%arg0`` keeps it), held in the scope so that
        a later named value that wants it is renamed instead."""
        while self._used(f"arg{self.arg_counter}"):
            self.arg_counter += 1
        name = f"arg{self.arg_counter}"
        self.arg_counter += 1
        self.scope[0].add(name)
        return name

    def _used(self, name: str) -> bool:
        s = self.scope
        while s is not None:
            if name in s[0]:
                return True
            s = s[1]
        return False

    def _scoped_unique(self, name: str) -> str:
        if self._used(name):
            while True:
                probe = f"{name}_{self.conflict}"
                self.conflict += 1
                if not self._used(probe):
                    name = probe
                    break
        self.scope[0].add(name)
        return name

    def _number_results(self, op: Operation) -> None:
        res = op.results
        if not res:
            return
        if self._grouped(op):
            hint = res[0].name_hint if self.use_hints else None
            if hint:
                base = self._scoped_unique(hint)
            else:
                base = str(self.counter)
                self.counter += 1
            self.op_names[op] = base
            for i, v in enumerate(res):
                self.names[v] = f"%{base}#{i}" if len(res) > 1 else f"%{base}"
            return
        for v in res:
            hint = v.name_hint if v.name_hint and "#" not in v.name_hint else None
            hint = hint if self.use_hints else None
            if hint:
                self.names[v] = "%" + self._scoped_unique(hint)
            else:
                self.names[v] = f"%{self.counter}"
                self.counter += 1

    def name_results(self, op: Operation) -> str:
        """The ``%a, %b = `` prefix of an op (names come from number())."""
        res = op.results
        if not res:
            return ""
        base = self.op_names.get(op)
        if base is not None:
            return f"%{base}:{len(res)} = " if len(res) > 1 else f"%{base} = "
        return ", ".join(self.value(v) for v in res) + " = "

    def _grouped(self, op: Operation) -> bool:
        res = op.results
        if len(res) < 2:
            return True
        h1 = res[1].name_hint
        if self.use_hints and h1 is not None and "#" in h1:
            return True
        if self.use_hints and any(v.name_hint for v in res):
            return False
        od = lookup(op.name)
        return od is None or (len(od.results) == 1 and od.results[0].variadic)

    def value(self, v: Value) -> str:
        name = self.names.get(v)
        if name is None:  # a block argument seen first, or a use before its definition
            name = "%" + (self._arg_name(v) if v.is_block_argument else self._number())
            self.names[v] = name
        return name

    # ------------------------------------------------------------------ helpers for formats
    def type(self, t: T.Type) -> str:
        return type_text(t, self.generic)

    def opdef(self, op: Operation) -> OpDef:
        d = lookup(op.name)
        return d if d is not None else TESTING_FUNC

    def group(self, op: Operation, opdef: OpDef, name: str) -> list[Value]:
        for od, vals in zip(opdef.operands, op.operand_groups()):
            if od.name == name:
                return vals
        if any(r.name == name for r in opdef.results):
            return self._result_group(op, opdef, name)
        return []

    @staticmethod
    def _result_group(op: Operation, opdef: OpDef, name: str) -> list[Value]:
        fixed = sum(1 for r in opdef.results if not r.variadic)
        nvar = len(op.results) - fixed
        i = 0
        for r in opdef.results:
            n = nvar if r.variadic else 1
            if r.name == name:
                return op.results[i:i + n]
            i += n
        return []

    def indent_text(self) -> str:
        return " " * self.indent

    def extra_attrs(self, op: Operation, opdef: OpDef) -> str:
        extra = {k: v for k, v in op.attributes.items() if opdef.attr(k) is None}
        if not extra:
            return ""
        return "{" + ", ".join(_generic_entry(k, v, None, self) for k, v in extra.items()) + "}"

    def extra_attrs_text(self, op: Operation, excluded: set[str]) -> str:
        text = self.extra_attrs(op, self.opdef(op))
        return " " + text if text else ""

    # ------------------------------------------------------------------ regions and ops
    def region(self, region: Region, elide: set[str] = frozenset()) -> str:  # type: ignore[assignment]
        if not region.blocks:
            return "{\n" + self.indent_text() + "}"
        block = region.blocks[0]
        ops = block.ops
        if ops and ops[-1].name in elide and not ops[-1].operands and not self.generic:
            ops = ops[:-1]
        for a in block.arguments:
            self.value(a)
        self.indent += 2
        lines = [self.op(o) for o in ops]
        self.indent -= 2
        body = "".join(line + "\n" for line in lines)
        return "{\n" + body + self.indent_text() + "}"

    def op(self, op: Operation) -> str:
        if self.generic:
            return self.indent_text() + self.generic_op(op)
        lhs = self.name_results(op)
        opdef = self.opdef(op)
        if (lookup(op.name) is None and op.name != "testing$func") \
                or not fits_custom_form(op, opdef):
            return self.indent_text() + lhs + self._generic_body(op)
        name = opdef.aliases[0] if self.alias_names and opdef.aliases else op.name
        indent = self.indent
        try:
            text = name + compile_printer(opdef)(self, op)
        except (TypeError, AttributeError, IndexError, KeyError, ValueError, RuntimeError):
            # a malformed op that fits_custom_form does not foresee still prints
            self.indent = indent
            return self.indent_text() + lhs + self._generic_body(op)
        return self.indent_text() + lhs + text + self.loc_suffix(op.location)

    # ------------------------------------------------------------------ generic form
    def generic_op(self, op: Operation) -> str:
        lhs = self.name_results(op)
        return lhs + self._generic_body(op)

    def _generic_body(self, op: Operation) -> str:
        opdef = lookup(op.name)
        full = op.name if "." in op.name else "cuda_tile." + op.name
        operands = ", ".join(self.value(v) for v in op.operands)
        out = f'"{full}"({operands})'
        inherent, extra = [], []
        for k, v in op.attributes.items():
            a = opdef.attr(k) if opdef is not None else None
            if op.name == "testing$func" and k in ("sym_name", "function_type"):
                inherent.append((k, _generic_entry(k, v, None, self)))
            elif a is not None:
                inherent.append((k, _generic_entry(k, v, a, self)))
            else:
                extra.append((k, _generic_entry(k, v, None, self)))
        if opdef is not None and opdef.has_operand_segments and op.operand_segments:
            segs = ", ".join(map(str, op.operand_segments))
            inherent.append(("operandSegmentSizes", f"operandSegmentSizes = array<i32: {segs}>"))
        if inherent:
            out += " <{" + ", ".join(t for _, t in sorted(inherent)) + "}>"
        if op.regions:
            out += " (" + ", ".join(self._generic_region(r) for r in op.regions) + ")"
        if extra:
            out += " {" + ", ".join(t for _, t in sorted(extra)) + "}"
        ins = ", ".join(self.type(v.type) for v in op.operands)
        outs = [self.type(v.type) for v in op.results]
        res = outs[0] if len(outs) == 1 else "(" + ", ".join(outs) + ")"
        return out + f" : ({ins}) -> {res}" + self.loc_suffix(op.location)

    def _generic_region(self, region: Region) -> str:
        if not region.blocks:
            return "{\n" + self.indent_text() + "}"
        block = region.blocks[0]
        head = ""
        if block.arguments:
            args = ", ".join(f"{self.value(a)}: {self.type(a.type)}" for a in block.arguments)
            head = self.indent_text() + f"^bb0({args}):\n"
        self.indent += 2
        lines = [self.op(o) for o in block.ops]
        self.indent -= 2
        return "{\n" + head + "".join(line + "\n" for line in lines) + self.indent_text() + "}"

    # ------------------------------------------------------------------ locations
    def loc_suffix(self, loc: Any) -> str:
        if not self.debuginfo:
            return ""
        # MLIR gives every op a location; one the input did not give is `loc(unknown)`.
        return f" loc({self.loc_ref(A.UnknownLoc() if loc is None else loc)})"

    def loc_ref(self, loc: Any) -> str:
        name = self.loc_names.get(loc)
        if name is not None:
            return name
        return location_text(loc, self)

    def ref(self, x: Any) -> str:
        name = self.loc_names.get(x)
        if name is not None:
            return name
        if isinstance(x, A.Location) and not isinstance(x, A.DILocAttr):
            return f"loc({location_text(x, self)})"
        return di_text(x, self)


def location_text(loc: Any, pr: OpPrinter) -> str:
    """The inside of ``loc(...)``."""
    if isinstance(loc, A.UnknownLoc):
        return "unknown"
    if isinstance(loc, A.FileLineColLoc):
        return f"{string_text(loc.filename)}:{loc.line}:{loc.column}"
    if isinstance(loc, A.NameLoc):
        if loc.child is None:
            return string_text(loc.name)
        return f"{string_text(loc.name)}({pr.loc_ref(loc.child)})"
    if isinstance(loc, A.CallSiteLoc):
        return f"callsite({pr.loc_ref(loc.callee)} at {pr.loc_ref(loc.caller)})"
    if isinstance(loc, A.FusedLoc):
        return "fused[" + ", ".join(pr.loc_ref(x) for x in loc.locations) + "]"
    return di_text(loc, pr)


def scope_line_text(x: A.DISubprogramAttr) -> str:
    """``, scopeLine = N``, or nothing for 0 (an OptionalParameter in cuda-tile)."""
    return f", scopeLine = {x.scope_line}" if x.scope_line else ""


def di_text(x: Any, pr: OpPrinter) -> str:
    if isinstance(x, A.DIFileAttr):
        return f"#cuda_tile.di_file<{string_text(x.name)} in {string_text(x.directory)}>"
    if isinstance(x, A.DICompileUnitAttr):
        return f"#cuda_tile.di_compile_unit<file = {pr.ref(x.file)}>"
    if isinstance(x, A.DISubprogramAttr):
        return (f"#cuda_tile.di_subprogram<file = {pr.ref(x.file)}, line = {x.line}, "
                f"name = {string_text(x.name)}, linkageName = {string_text(x.linkage_name)}, "
                f"compileUnit = {pr.ref(x.compile_unit)}{scope_line_text(x)}>")
    if isinstance(x, A.DILexicalBlockAttr):
        return (f"#cuda_tile.di_lexical_block<scope = {pr.ref(x.scope)}, file = "
                f"{pr.ref(x.file)}, line = {x.line}, column = {x.column}>")
    if isinstance(x, A.DILocAttr):
        fl = A.FileLineColLoc(x.filename, x.line, x.column)
        return f"#cuda_tile.di_loc<{pr.ref(fl)} in {pr.ref(x.scope)}>"
    if isinstance(x, A.Location):
        return f"loc({location_text(x, pr)})"
    return _attr_generic_text(x, pr)


# ---------------------------------------------------------------------------------------
# Which ops the custom form can show
#
# The custom form is driven by the op table: it assumes the operand groups, results,
# attributes and regions the row describes. An op that is not so (read from bytecode
# without verification, or built by hand) prints in MLIR's generic form instead, as
# MLIR's printer does for an op that fails to verify; the text still reads back.

_KIND_TYPES: dict[str, Any] = {
    "enum": Enum, "unit": bool, "bool": bool, "int": int, "string": str, "symbol": str,
    "type": T.Type, "dense": A.DenseElementsAttr, "i32_array": tuple, "bool_array": tuple,
    "attr": (A.DivByAttr, A.BoundedAttr, A.SameElementsAttr, A.OpaqueAttr),
    "attr_array": tuple, "hints": A.OptimizationHintsAttr}


def _fits_kind(v: Any, kind: str) -> bool:
    want = _KIND_TYPES.get(kind)
    if want is None:
        return True
    return isinstance(v, want) and not (kind == "int" and isinstance(v, bool))


def fits_custom_form(op: Operation, opdef: OpDef) -> bool:
    """Whether op has the operands, results, attributes and regions its row says."""
    if not _operands_fit(op, opdef):
        return False
    fixed = [r for r in opdef.results if not r.variadic]
    if len(fixed) == len(opdef.results) and not (
            sum(r.since <= "13.1" for r in fixed) <= len(op.results) <= len(fixed)):
        return False
    for a in opdef.attrs:
        v = op.attributes.get(a.name)
        if v is None:
            if not a.optional and a.default is None and a.kind != "unit":
                return False
        elif not _fits_kind(v, a.kind):
            return False
    if len(op.regions) != opdef.regions:
        return False
    for i, region in enumerate(op.regions):
        if len(region.blocks) != 1 and not (op.name == "if" and i == 1 and not region.blocks):
            return False
    implied = dict(IMPLIED_OPERAND_TYPES.get(op.name, ()))
    for od, vals in zip(opdef.operands, op.operand_groups()):
        if od.name in ("token", "optional_token"):
            implied[od.name] = T.TOKEN  # `token = %t` writes no type: a token is implied
        if od.name in implied and any(v.type != implied[od.name] for v in vals):
            return False
    for names in _shared_types(opdef):  # `type($result,$lhs)`: one type written for all
        types = {v.type for name in names for v in _values(op, opdef, name)}
        if len(types) > 1:
            return False
    check = _OP_CHECKS.get(op.name)
    return check is None or check(op)


@cache
def _shared_types(opdef: OpDef) -> tuple[tuple[str, ...], ...]:
    """The groups of values whose type the custom form writes once."""
    out = []

    def walk(elems: Any) -> None:
        for e in elems:
            if e.kind == "type" and (len(e.names) > 1 or e.style == "*"):
                out.append(e.names)
            walk(e.children)
    walk(compile_format(opdef.asm or ""))
    return tuple(out)


def _values(op: Operation, opdef: OpDef, name: str) -> list[Value]:
    for od, vals in zip(opdef.operands, op.operand_groups()):
        if od.name == name:
            return vals
    return OpPrinter._result_group(op, opdef, name)


def _operands_fit(op: Operation, opdef: OpDef) -> bool:
    segments = op.operand_segments
    if segments is None:
        return len(op.operands) == len(opdef.operands) and not opdef.has_variable_operands
    if len(segments) != len(opdef.operands) or sum(segments) != len(op.operands):
        return False
    return all(n == 1 if od.kind == "single" else od.kind == "variadic" or n <= 1
               for od, n in zip(opdef.operands, segments))


def _tensor_view_fits(op: Operation) -> bool:
    """make_tensor_view prints its dynamic sizes and strides in the places of the `?`s
    of its tensor_view type."""
    ty = op.results[0].type if op.results else None
    if not isinstance(ty, T.TensorViewType):
        return False
    if op.operands[0].type != T.TileType((), T.PointerType(ty.element)):
        return False  # the reader takes the base for a pointer to the view's elements
    shape, strides = op.operand_segments[1:] if op.operand_segments else (0, 0)
    return (shape == sum(d is None for d in ty.shape)
            and strides == sum(s is None for s in ty.strides))


_VIEW_RESULTS = {"make_partition_view": T.PartitionViewType,
                 "make_strided_view": T.StridedViewType,
                 "make_gather_scatter_view": T.GatherScatterViewType}


def _view_fits(op: Operation) -> bool:
    """make_*_view writes only its view type: the operand is read as its tensor_view."""
    ty = op.results[0].type if op.results else None
    return isinstance(ty, _VIEW_RESULTS[op.name]) and op.operands[0].type == ty.tensor_view


def _tensor_shape_fits(op: Operation) -> bool:
    """get_tensor_shape writes its source's type: a tensor_view, one result per dimension."""
    ty = op.operands[0].type
    return isinstance(ty, T.TensorViewType) and len(op.results) == ty.rank


def _loop_fits(op: Operation) -> bool:
    """for / loop write each loop-carried value's type once (init and argument; for:
    result too); for also writes one type for its bounds, step and induction variable."""
    args = op.regions[0].blocks[0].arguments
    inits = op.operands[3:] if op.name == "for" else op.operands
    carried = args[1:] if op.name == "for" else args
    if op.name == "for" and (not args or any(v.type != args[0].type for v in op.operands[:3])):
        return False
    types = [v.type for v in inits]
    if types != [a.type for a in carried]:
        return False
    return op.name == "loop" or types == [r.type for r in op.results]  # loop: `-> types`


def _entry_fits(op: Operation) -> bool:
    ft = op.attributes["function_type"]
    return isinstance(ft, T.FunctionType) and \
        list(ft.inputs) == [a.type for a in op.regions[0].blocks[0].arguments]


_OP_CHECKS = {"make_tensor_view": _tensor_view_fits, "for": _loop_fits, "loop": _loop_fits,
              "entry": _entry_fits, "get_tensor_shape": _tensor_shape_fits,
              **dict.fromkeys(_VIEW_RESULTS, _view_fits)}


# ---------------------------------------------------------------------------------------
# Generic attribute values


def _enum_generic(v: Enum) -> str:
    if type(v) in INTEGER_ENUMS:  # an i32 attribute in cuda-tile, not one of the dialect
        return f"{v.value} : i32"
    cls = type(v).__name__
    return f"#cuda_tile.{_ENUM_MNEMONIC.get(cls, _snake(cls))}<{enum_spelling(v)}>"


def _generic_entry(key: str, v: Any, a: Any, pr: OpPrinter) -> str:
    kind = a.kind if a is not None else None
    if kind == "unit" or v is True and kind is None:
        return name_text(key)
    if kind is not None and not _fits_kind(v, kind):
        kind = None  # not what the op table says (an unverified op): print what it is
    return f"{name_text(key)} = {_generic_value(key, v, kind, pr)}"


def _generic_value(key: str, v: Any, kind: str | None, pr: OpPrinter) -> str:
    if kind == "enum":
        return _enum_generic(v)
    if kind == "int":
        return f"{v} : i64"
    if kind == "bool":
        return "true" if v else "false"
    if kind == "string" or (kind is None and isinstance(v, str)):
        return string_text(v)
    if kind == "symbol" and isinstance(v, str):
        return string_text(v) if key == "sym_name" else symbol_text(v)
    if kind == "type" or isinstance(v, T.Type):
        return pr.type(v)
    if kind == "dense":
        return f"dense<{dense_values_text(v)}> : {pr.type(v.type)}"
    if kind in ("i32_array", "bool_array"):
        elem = "i32" if kind == "i32_array" else "i1"
        if not v:
            return f"array<{elem}>"
        vals = ", ".join(("true" if x else "false") if kind == "bool_array" else str(x)
                         for x in v)
        return f"array<{elem}: {vals}>"
    if kind == "attr":
        return "#cuda_tile." + predicate_text(v)
    if kind == "attr_array":
        return "[" + ", ".join(typed_attr_text(x) for x in v) + "]"
    if kind == "hints":
        return "#cuda_tile.optimization_hints" + hints_text(v)
    return _attr_generic_text(v, pr)


def _attr_generic_text(v: Any, pr: OpPrinter) -> str:
    if isinstance(v, A.OpaqueAttr):
        return v.text
    if isinstance(v, A.StringAttr):
        return string_text(v.value)
    if isinstance(v, A.TypeAttr):
        return pr.type(v.value)
    if isinstance(v, (A.IntegerAttr, A.FloatAttr, A.BoolAttr)):
        return typed_attr_text(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, Enum):
        return _enum_generic(v)
    if isinstance(v, A.DenseElementsAttr):
        return f"dense<{dense_values_text(v)}> : {pr.type(v.type)}"
    if isinstance(v, A.FloatAttr):
        return format_float(v.bits, v.type)
    if isinstance(v, (A.DivByAttr, A.BoundedAttr, A.SameElementsAttr)):
        return "#cuda_tile." + predicate_text(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_attr_generic_text(x, pr) for x in v) + "]"
    return str(v)


# ---------------------------------------------------------------------------------------
# Modules


def _alias_children(x: Any) -> list[Any]:
    """The aliasable parts of a location / debug attribute, in MLIR's visiting order."""
    if isinstance(x, A.DILocAttr):
        return [x.scope, A.FileLineColLoc(x.filename, x.line, x.column)]
    if isinstance(x, A.DISubprogramAttr):
        return [x.file, x.compile_unit]
    if isinstance(x, A.DICompileUnitAttr):
        return [x.file]
    if isinstance(x, A.DILexicalBlockAttr):
        return [x.scope, x.file]
    if isinstance(x, A.NameLoc):
        return [x.child] if x.child is not None else []
    if isinstance(x, A.CallSiteLoc):
        return [x.callee, x.caller]
    if isinstance(x, A.FusedLoc):
        return list(x.locations)
    return []


def _alias_prefix(x: Any) -> str:
    if isinstance(x, A.DIFileAttr):
        return "di_file"
    if isinstance(x, A.DICompileUnitAttr):
        return "di_compile_unit"
    if isinstance(x, A.DISubprogramAttr):
        return "di_subprogram"
    if isinstance(x, A.DILexicalBlockAttr):
        return "di_lexical_block"
    return "loc"


def generate_aliases(modules: list[Module]) -> list[tuple[str, Any]]:
    """Alias names for the locations in use, the way MLIR's printer makes them: every
    location and debug attribute gets one (``#loc``, ``#loc1``, ``#di_file``, ...),
    defined after what it refers to, in the order the walk first meets them."""
    order: dict[Any, int] = {}
    depth: dict[Any, int] = {}

    def visit(x: Any) -> int:
        if x in depth:
            return depth[x]
        kids = [visit(c) for c in _alias_children(x)]
        depth[x] = 1 + max(kids) if kids else 0
        order[x] = len(order)
        return depth[x]

    for m in modules:
        if m.name is not None or m.location is not None:  # a header prints its loc
            visit(A.UnknownLoc() if m.location is None else m.location)
        for op in m.walk():
            visit(A.UnknownLoc() if op.location is None else op.location)
    ranked = sorted(order, key=lambda x: (depth[x], order[x]))
    counters: dict[str, int] = {}
    out: list[tuple[str, Any]] = []
    for x in ranked:
        prefix = _alias_prefix(x)
        n = counters.get(prefix, 0)
        counters[prefix] = n + 1
        out.append((f"#{prefix}{n if n else ''}", x))
    return out


def _all_ops(module: Module) -> list[Operation]:
    return [op for op in module.walk()]


def print_module(module: Module, *, generic: bool = False, debuginfo: bool = False) -> str:
    """The module as text (ends with a newline)."""
    return print_modules([module], generic=generic, debuginfo=debuginfo)


def print_modules(modules: list[Module], *, generic: bool = False,
                  debuginfo: bool = False, alias_names: bool = False,
                  use_hints: bool = True) -> str:
    """Several modules; ``alias_names`` prints ops under the op table's first alias
    (cuda-tile's spelling, e.g. ``pow`` for tileirdisasm's ``fpowf``)."""
    pr = OpPrinter(generic=generic, debuginfo=debuginfo, alias_names=alias_names,
                   use_hints=use_hints)
    aliases: list[tuple[str, Any]] = []
    if debuginfo:
        aliases = generate_aliases(modules)
        for name, value in aliases:
            pr.loc_names[value] = name
    out: list[str] = []
    for m in modules:
        out.append(_print_one(pr, m))
    if aliases:
        for name, value in aliases:
            pr.loc_names.pop(value, None)
            text = pr.ref(value)
            pr.loc_names[value] = name
            out.append(f"{name} = {text}\n")
    return "".join(out)


def _print_one(pr: OpPrinter, m: Module) -> str:
    lines: list[str] = []
    if m.name is None:
        for item in m.items:
            pr.number(item)
            lines.append(pr.op(item))
        return "".join(line + "\n" for line in lines)
    if pr.generic:
        pr.indent = 2
        items = []
        for item in m.items:
            pr.number(item)
            items.append(pr.op(item))
        pr.indent = 0
        body = "".join(line + "\n" for line in items)
        attrs = f'sym_name = {string_text(m.name)}'
        if m.producer is not None:
            attrs = f"producer = {string_text(m.producer)}, " + attrs
        return (f'"cuda_tile.module"() <{{{attrs}}}> ({{\n{body}}}) : () -> ()'
                + pr.loc_suffix(m.location) + "\n")
    head = f"cuda_tile.module {symbol_text(m.name)}"
    if m.producer is not None:
        head += f" attributes {{producer = {string_text(m.producer)}}}"
    pr.indent = 2
    for item in m.items:
        pr.number(item)
        lines.append(pr.op(item))
    pr.indent = 0
    body = "".join(line + "\n" for line in lines)
    return head + " {\n" + body + "}" + pr.loc_suffix(m.location) + "\n"
