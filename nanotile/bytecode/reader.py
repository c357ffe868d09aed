"""Decode Tile IR bytecode (versions 13.1-13.4) into a nanotile Module.

The file's declared version decides which version-gated fields are read. Every length,
count and id is checked against the bytes that are left (or the table it indexes) before
anything is allocated and nesting is bounded, so a malformed file can never crash the
reader.

Errors are those of NVIDIA's reader, cuda-tile 13.3's lib/Bytecode/Reader/BytecodeReader.cpp
and the type and op readers its TableGen back end generates: the same checks in the same
order, the same messages. cuda-tile reports a failure as a chain of separate errors, the
innermost first, then one per enclosing step; NVIDIA's tileirdisasm prints it as::

    error: error at offset 26: array contains unsupported value -2147483648
    error: error at offset 26: failed to parse attribute 'permutation'
    error: error at offset 26: failed to parse operation 2 in block.
    ...
    error: error at offset 1100: failed to parse function body for function 'k'
    error: error at offset 1100: failed to create function from bytecode

(cuda-tile-translate prints the same lines, each after ``<unknown>:0:``; cuda-tile's own
tests check one line of a chain.) nanotile raises one CompileError holding one
Diagnostic: the first message of the chain is the error, the others are its notes, in
cuda-tile's order. Every offset is a file offset: cuda-tile counts from the start of the
slice its reader is reading (the file, a section, a function body, a table entry) and
stands after the field that failed; nanotile names that byte, counted from the start of
the file (where cuda-tile names no offset, as for "string index 9 out of bounds", the
byte its reader stands at). Where cuda-tile gives up without a message (a field cut off
by the end of its slice, a type id out of range: its chain starts with the enclosing
step), nanotile's first note says what was wrong. A check that only nanotile makes (a
string is UTF-8, a region holds one block, ...) is reported only if cuda-tile's reader
finds nothing wrong in the rest of the file; reading goes on as cuda-tile's would. Only
nesting too deep (bounded here, not in cuda-tile) and the test-only ops' unmodelled
parts stop reading at once.

Where cuda-tile accepts input, so does nanotile (unchecked padding bytes, string offsets
clamped, trailing bytes in a section or table entry ignored, unknown flag bits ignored,
an unknown debug-info tag read as an unknown location), with one exception: a function
without the entry flag reads back as ``testing$func`` (cuda-tile refuses it,
"un-expected non-entry function"; nanotile's writer emits one for that test-only op).
NVIDIA's tileirdisasm 13.4 departs from cuda-tile 13.3 in places (it reads DivBy and
Bounded flags as varints, checks the debug section's counts first, creates globals
before it reads the function section); nanotile follows 13.3, its specification, and
reads 13.4's additions (pointer attributes, ``inbounds``) as tileirdisasm does.

What the Module keeps so that writer.write_bytecode re-encodes the file byte for byte:
each op's debug location (``Operation.location``), each entry's own one, the producer,
and the exact attribute/type payloads (pointer attributes, non-identity dim maps,
``inbounds`` lists other than the all-false default). The string, constant and debug
tables are re-derived by the writer in cuTile's order; the type table's order is kept
as a side record, ``Module.bytecode_types``, because cuTile sometimes registers a type
before its first use (8 of the 1,539 corpus files: list arguments, a lazily
defined global).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from ..diagnostics import CompileError, Diagnostic
from ..ir import attrs as A
from ..ir import types as T
from ..ir.core import Block, Module, Operation, Region, Value
from ..ir.enums import SymbolVisibility
from ..ir.optable import OPS_BY_OPCODE, AttrDef, OpDef
from . import wire as W
from .read_tables import PREDICATES, TableReader, quoted
from .wire import DETAIL, Cursor, ReadFailure

_ITEM_OPS = ("entry", "global", "module")
_I32_EDGES = (2**31 - 1, -2**31)  # values a DenseI32ArrayAttr may not hold
_NUM_SECTIONS = 8
# Sections that cuda-tile requires to be aligned, and to what.
_SECTION_ALIGNMENT = {W.SEC_STRING: 4, W.SEC_TYPE: 4, W.SEC_CONSTANT: 8, W.SEC_DEBUG: 8,
                      W.SEC_FUNC: 8}
_SECTION_FAILED = {
    W.SEC_STRING: "failed to parse string section",
    W.SEC_PRODUCER: "failed to parse producer section",
    W.SEC_TYPE: "failed to parse type section",
    W.SEC_CONSTANT: "failed to parse constant section",
    W.SEC_GLOBAL: "failed to parse global section",
    W.SEC_FUNC: "failed to parse function section",
    W.SEC_DEBUG: "failed to parse debug section",
}


@dataclass(slots=True)
class _Global:
    """A record of the global section (resolved after all sections are read)."""
    name: int
    type: int
    constant: int
    alignment: int
    visibility: int
    is_constant: int


@dataclass(slots=True)
class _Function:
    """A record of the function section (its body is decoded after all sections)."""
    name: int
    signature: int
    flags: int
    debug_slot: int
    hints: Any
    body: Cursor


@dataclass(frozen=True, slots=True)
class _Layout:
    """How one op is laid out in a file of one version."""
    too_new: bool  # the op arrived after this version
    has_flags: bool  # a flags varint announces optional parts
    reserved: int  # flag bits nanotile does not model (test-only ops)
    attrs: tuple[tuple[AttrDef, int], ...]  # with its flag bit, -1 if always present
    operands: tuple[Any, ...]
    attr_sized: bool  # operands in segments, each variadic one with its own count
    segments: tuple[tuple[Any, int, bool], ...]  # each operand, its flag bit, too new
    versioned_results: bool
    results: int  # how many results this version serializes
    unserialized_results: int  # results that arrived later (print_tko's token, 13.2)


def _layout(d: OpDef, v: W.Version) -> _Layout:
    bits = {name: i for i, (name, s) in enumerate(d.flags) if v >= W.since(s)}
    all_bits = {name: i for i, (name, _) in enumerate(d.flags)}
    known = {a.name for a in d.attrs} | {o.name for o in d.operands}
    serialized = sum(1 for r in d.results if v >= W.since(r.since))
    return _Layout(v < W.since(d.since), bool(bits),
                   sum(1 << i for name, i in bits.items() if name not in known),
                   tuple((a, bits.get(a.name, -1)) for a in d.attrs if v >= W.since(a.since)),
                   tuple(o for o in d.operands if v >= W.since(o.since)),
                   d.operand_count == "per_group" and d.has_variable_operands,
                   tuple((o, all_bits.get(o.name, -1), v < W.since(o.since))
                         for o in d.operands),
                   any(r.since != d.since for r in d.results), serialized,
                   len(d.results) - serialized)


# per version: each opcode's layout, and the highest opcode (cuda-tile refuses any above)
_LAYOUTS: dict[W.Version, dict[int, _Layout]] = {}
_MAX_OPCODE: dict[W.Version, int] = {}


class _Reader(TableReader):
    """The file structure, the functions and their ops."""

    def __init__(self, data: bytes, filename: str) -> None:
        self.filename = filename
        super().__init__(data)
        self.max_opcode = -1
        self.layouts: dict[int, _Layout] = {}

    # ---------------------------------------------------------------- file structure

    def read(self) -> Module:
        main = Cursor(self.data, 0, len(self.data), "file")
        try:
            self.read_header(main)
        except ReadFailure as e:
            raise e.then("failed to parse bytecode header", main) from None
        sections = self.read_sections(main)
        module = Module(name=None, filename=self.filename)
        if W.SEC_STRING not in sections:
            raise main.fail("string section is mandatory")
        self.section(main, sections, W.SEC_STRING, self.read_strings)
        if W.SEC_PRODUCER in sections:
            module.producer = self.section(main, sections, W.SEC_PRODUCER, self.read_producer)
        self.section(main, sections, W.SEC_TYPE, self.read_type_section)
        self.section(main, sections, W.SEC_CONSTANT, self.read_constant_section)
        globals_ = self.section(main, sections, W.SEC_GLOBAL, self.read_global_section) or []
        if W.SEC_FUNC not in sections:
            raise main.fail("function section is mandatory")
        functions = self.section(main, sections, W.SEC_FUNC, self.read_function_section)
        self.section(main, sections, W.SEC_DEBUG, self.read_debug_section)
        for g in globals_:
            try:
                module.items.append(self.create_global(g, main))
            except ReadFailure as e:
                raise e.then("failed to create global from bytecode", main) from None
        for f in functions:
            try:
                module.items.append(self.create_function(f, main))
            except ReadFailure as e:
                raise e.then("failed to create function from bytecode", main) from None
        module.bytecode_types = tuple(self.table_types(main))
        if self.refused is not None:
            raise self.refused
        return module

    def section(self, main: Cursor, sections: dict[int, Cursor], sid: int, parse: Any) -> Any:
        cur = sections.get(sid)
        if cur is None:
            return None
        try:
            return parse(cur)
        except ReadFailure as e:
            raise e.then(_SECTION_FAILED[sid], main) from None

    def read_header(self, cur: Cursor) -> None:
        for i, expected in enumerate(W.MAGIC):
            got = 0  # what cuda-tile reads past the end
            if cur.pos < cur.end:
                got = cur.byte()
            if got != expected:
                raise cur.fail(f"invalid magic number at position {i}, got {got} expected "
                               f"{expected}")
        major, minor, tag = cur.byte(), cur.byte(), cur.le(2)
        if not W.is_known_version((major, minor)):
            first, last = W.SUPPORTED_VERSIONS[0], W.SUPPORTED_VERSIONS[-1]
            raise cur.fail(f"unsupported Tile version {major}.{minor}.{tag}"
                           f", this reader supports versions ["
                           f"{W.version_str(first)} - {W.version_str(last)}]")
        self.version = v = (major, minor)
        if v not in _MAX_OPCODE:
            _MAX_OPCODE[v] = max(d.opcode for d in OPS_BY_OPCODE.values()
                                 if W.since(d.since) <= v)
        self.max_opcode = _MAX_OPCODE[v]
        self.layouts = _LAYOUTS.setdefault(v, {})

    def read_sections(self, cur: Cursor) -> dict[int, Cursor]:
        sections: dict[int, Cursor] = {}
        while True:
            try:
                sid, length, alignment = self.section_header(cur)
            except ReadFailure as e:
                raise e.then("failed to parse section header", cur) from None
            if sid == W.SEC_END:
                if not cur.at_end():
                    raise cur.fail("end section is not the last section")
                return sections
            need = _SECTION_ALIGNMENT.get(sid)
            if need and (alignment is None or alignment % need):
                has = ("has no alignment flag set" if alignment is None
                       else f"has alignment of {alignment}")
                raise cur.fail(f"section {sid} must have alignment that is a multiple of "
                               f"{need} bytes, but {has}")
            if length > cur.remaining:
                raise cur.fail(f"section length {length} exceeds remaining bytecode data. "
                               f"{cur.remaining}")
            sections[sid] = cur.sub(length, f"{W.SECTION_NAMES[sid]} section")

    def section_header(self, cur: Cursor) -> tuple[int, int, int | None]:
        """(id, length, alignment or None); the cursor ends at the section's payload."""
        if cur.at_end():
            raise cur.fail("unexpected end of data while reading section header")
        ident = cur.byte()
        sid = ident & 0x7F
        if sid == W.SEC_END:
            if ident & 0x80:
                raise cur.fail("end section should not have alignment flag set")
            return sid, 0, None
        if sid >= _NUM_SECTIONS:
            raise cur.fail(f"unknown section ID: {sid}")
        try:
            length = cur.varint()
        except ReadFailure as e:
            raise e.then("failed to read section length", cur) from None
        if length > cur.remaining:
            raise cur.fail(f"section length {length} exceeds remaining data size "
                           f"{cur.remaining}")
        if not ident & 0x80:
            return sid, length, None
        alignment = cur.varint()
        if alignment == 0 or alignment & (alignment - 1):
            raise cur.fail(f"invalid alignment value: {alignment}")
        cur.skip_padding(alignment)
        return sid, length, alignment

    # ---------------------------------------------------------------- globals

    def read_global_section(self, cur: Cursor) -> list[_Global]:
        try:
            n = cur.varint()
        except ReadFailure as e:
            raise e.then("failed to read number of global.", cur) from None
        v133 = self.version >= (13, 3)
        fit = cur.remaining // (6 if v133 else 4)
        if n > fit:
            raise cur.fail(f"number of globals ({n}) exceeds the maximum of {fit} that can "
                           f"fit in the remaining payload of {cur.remaining} bytes.")
        out = []
        for _ in range(n):
            out.append(_Global(
                self.field(cur, "failed to read global symbol name string."),
                self.field(cur, "failed to read global value type"),
                self.field(cur, "failed to read global value constant index"),
                self.field(cur, "failed to read global alignment"),
                self.field(cur, "failed to read global symbol visibility") if v133 else 0,
                self.field(cur, "failed to read global constant flag") if v133 else 0))
        return out

    def create_global(self, g: _Global, main: Cursor) -> Operation:
        if g.constant >= len(self.constants):
            raise main.fail("global value constant index out of bounds")
        try:
            name = self.string(g.name, main)
        except ReadFailure as e:
            raise e.then(f"failed to get global symbol name string for index {g.name}",
                         main) from None
        if not name:
            raise main.fail(f"global symbol name at index {g.name} is empty")
        t: T.Type | None = None
        why = None
        try:
            t = self.type_at(g.type, main)
        except ReadFailure as e:
            why = e
        value = self.dense(g.constant, t, why)
        try:
            visibility = SymbolVisibility(g.visibility)
        except ValueError:
            raise main.fail(f"invalid symbol visibility value: {g.visibility}") from None
        attrs: dict[str, Any] = {"sym_name": name, "value": value, "alignment": g.alignment}
        if self.version >= (13, 3):
            attrs["symbol_visibility"] = visibility
            if g.is_constant:
                attrs["constant"] = True
        return Operation("global", attributes=attrs)

    # ---------------------------------------------------------------- functions

    def read_function_section(self, cur: Cursor) -> list[_Function]:
        n = cur.varint()
        if n > cur.end - cur.base:
            size = cur.end - cur.base
            raise cur.fail(f"number of functions ({n}) exceeds payload size ({size})")
        out = []
        for k in range(n):
            name, signature, flags, slot = cur.varint(), cur.varint(), cur.byte(), cur.varint()
            hints = None
            if flags & W.FUNC_ENTRY and flags & W.FUNC_HAS_HINTS:
                hints = self.tagged_attr(cur)
            length = cur.varint()
            if length > cur.remaining:
                raise cur.fail(f"function body length {length}"
                               f" exceeds remaining bytecode data ({cur.remaining} bytes)")
            body = cur.sub(length, f"body of function {k}")
            out.append(_Function(name, signature, flags, slot, hints, body))
        return out

    def create_function(self, f: _Function, main: Cursor) -> Operation:
        try:
            name = self.string(f.name, main)
        except ReadFailure as e:
            raise e.then(f"failed to get function name string at index {f.name}",
                         main) from None
        if not name:
            raise main.fail(f"function name at index {f.name} is empty")
        if f.signature >= len(self.type_offsets):
            raise main.fail(f"function signature index {f.signature}"
                            f" out of bounds for function '{name}'")
        try:
            sig = self.type_at(f.signature, main)
        except ReadFailure as e:
            # (cuda-tile's message lacks the closing quote)
            raise e.then(f"failed to parse type at index {f.signature} for function "
                         f"'{name}", main) from None
        if not isinstance(sig, T.FunctionType):
            raise main.fail(f"function signature index {f.signature}"
                            f" does not refer to a function type for function '{name}'"
                            f", got type: {quoted(sig)}")
        self.start_locations(f.debug_slot)
        try:
            location = self.next_location(main)
        except ReadFailure as e:
            raise e.then(f"failed to read function location for '{name}'", main) from None
        attrs: dict[str, Any] = {"sym_name": name, "function_type": sig}
        if f.flags & W.FUNC_ENTRY:
            if f.hints is not None:
                if not isinstance(f.hints, A.OptimizationHintsAttr):
                    raise main.fail(
                        f"invalid optimization hints attribute for function '{name}'")
                attrs["optimization_hints"] = f.hints
        # Without the entry flag: the test-only `testing$func` that NVIDIA's writer emits
        # (cuda-tile refuses it; nanotile reads it back).
        entry = Operation("entry" if f.flags & W.FUNC_ENTRY else "testing$func",
                          attributes=attrs)
        entry.location = location
        f.body.what = f"body of function '{name}'"
        block = Block()
        for t in sig.inputs:
            block.add_argument(t)
        values = list(block.arguments)
        try:
            self.enter(f.body, "regions")
            while not f.body.at_end():
                block.append(self.read_op(f.body, values))
        except ReadFailure as e:
            raise e.then(f"failed to parse function body for function '{name}'",
                         main) from None
        self.depth["regions"] -= 1
        region = Region([block], entry)
        block.parent = region
        entry.regions = [region]
        return entry

    # ---------------------------------------------------------------- ops

    def read_op(self, c: Cursor, values: list[Value]) -> Operation:
        try:
            opcode = c.varint()
        except ReadFailure as e:
            raise e.then("failed to read operation opcode.", c) from None
        opcode &= 0xFFFFFFFF
        if opcode > self.max_opcode:
            raise c.fail(f"unsupported opcode {opcode} for bytecode version "
                         f"{W.version_str(self.version)}")
        try:
            location = self.next_location(c)
        except ReadFailure as e:
            raise e.then("failed to read operation location.", c) from None
        d = OPS_BY_OPCODE.get(opcode)
        if d is None:
            raise c.fail(f"unknown or unimplemented opcode: {opcode - (opcode >> 31 << 32)}")
        lay = self.layouts.get(opcode)
        if lay is None:
            lay = self.layouts[opcode] = _layout(d, self.version)
        if lay.too_new:
            self.refuse(c, f"unsupported opcode {opcode} for bytecode version "
                           f"{W.version_str(self.version)}")
        op = Operation(d.name)
        op.location = location
        result_types = self.read_result_types(c, d, lay)
        flags = 0
        if lay.has_flags:
            try:
                flags = c.varint()
            except ReadFailure as e:
                raise e.then("failed to read flags field", c) from None
            if flags & lay.reserved:
                name = d.flags[(flags & lay.reserved).bit_length() - 1][0]
                raise c.own(f"'{d.name}': '{name}' is not supported by this reader")
        for a, bit in lay.attrs:
            if bit >= 0:
                if flags >> bit & 1:
                    self.read_attr(c, d, a, op, result_types, True)
            elif a.kind != "unit":
                self.read_attr(c, d, a, op, result_types, False)
        self.read_operands(c, d, lay, flags, op, values)
        inbounds = op.attributes.get("inbounds")
        if inbounds is not None and not any(inbounds) and op.operand_segments and len(
                inbounds) == op.operand_segments[[o.name for o in d.operands].index("index")]:
            # All-false, one per index: the default, which the writer re-derives.
            del op.attributes["inbounds"]
        if d.regions:
            self.read_regions(c, d, op, values)
        op.results = [Value(t, op, i) for i, t in enumerate(result_types)]
        values.extend(op.results)
        # Results added after this file's version (print_tko's token, 13.2) are not
        # serialized and take no value id, but the op still has them.
        for _ in range(lay.unserialized_results):
            op.results.append(Value(T.TOKEN, op, len(op.results)))
        if d.name in _ITEM_OPS:  # cuda-tile reads one like any op; its verifier refuses it
            self.refuse(c, f"'{d.name}' cannot appear inside a function body")
        return op

    def read_result_types(self, c: Cursor, d: OpDef, lay: _Layout) -> list[T.Type]:
        n = 0
        if d.counted_results:
            try:
                n = c.varint(limited=True)
            except ReadFailure as e:
                raise e.then(f"failed to read number of result types for {d.cpp_class}",
                             c) from None
        count = n if d.counted_results and not lay.versioned_results else lay.results
        types: list[T.Type] = []
        try:
            for _ in range(count):
                types.append(self.read_type(c))
        except ReadFailure as e:
            raise e.then(f"failed to get result type {len(types)} for {d.cpp_class}",
                         c) from None
        if not d.counted_results:
            return types
        if lay.versioned_results:
            if n != count:
                raise c.fail(f"result count mismatch for {d.cpp_class}: expected {count} "
                             f"compatible results but got {n}")
        elif n != len(d.results) and not any(r.variadic for r in d.results):
            self.refuse(c, f"'{d.name}' has {len(d.results)} results, not {n}")
        return types

    def read_attr(self, c: Cursor, d: OpDef, a: AttrDef, op: Operation,
                  result_types: list[T.Type], optional: bool) -> None:
        if a.kind == "unit":
            op.attributes[a.name] = True
            return
        try:
            op.attributes[a.name] = self.attr_value(c, d, a, result_types)
        except ReadFailure as e:
            if optional:
                raise e.then(f"failed to parse optional attribute '{a.name}'", c) from None
            raise e.then(f"failed to parse attribute '{a.name}'", c) from None

    def attr_value(self, c: Cursor, d: OpDef, a: AttrDef, result_types: list[T.Type]) -> Any:
        kind = a.kind
        if kind == "enum":
            return self.enum_value(c, a.enum)
        if kind == "bool":
            return self.inline_bool(c)
        if kind == "int":
            return self.inline_int(c, a.bits)
        if kind == "string" or a.name == "sym_name":  # (a SymbolNameAttr is a StringAttr)
            return self.string_attr(c)
        if kind == "symbol":
            try:
                name = self.read_string(c)
            except ReadFailure as e:
                raise e.then("failed to read string for FlatSymbolRefAttr.", c) from None
            if not name:
                raise c.fail("empty symbol reference is invalid")
            return name
        if kind == "type":
            return self.attr_type(c, "failed to get referenced type for TypeAttr")
        if kind == "dense":
            t = result_types[0] if result_types else self.attr_type(
                c, "failed to read valid MLIR Type for self-contained DenseElementsAttr")
            return self.constant_index(c, t)
        if kind == "i32_array":
            try:
                values = c.le_list(4)
            except ReadFailure as e:
                raise e.then("failed to read DenseI32ArrayAttr values.", c) from None
            for v in values:
                if v in _I32_EDGES:
                    raise c.fail(f"array contains unsupported value {v}")
            return values
        if kind == "bool_array":  # 13.4, as tileirdisasm 13.4 reads it
            try:
                return tuple(v != 0 for v in c.le_list(1))
            except ReadFailure as e:
                raise e.then("failed to read DenseBoolArrayAttr values.", c) from None
        if kind == "attr":  # assume's predicate
            try:
                value = self.tagged_attr(c)
            except ReadFailure as e:
                raise e.then("failed to parse self-contained attribute for "
                             "AssumePredicateAttrInterface", c) from None
            if not isinstance(value, PREDICATES):
                raise c.fail("failed to cast parsed attribute to AssumePredicateAttrInterface")
            return value
        if kind == "attr_array":
            return self.array_attr(c)
        if kind == "hints":
            return self.hints(c)
        raise c.own(f"unsupported attribute kind {kind}")  # pragma: no cover

    def read_operands(self, c: Cursor, d: OpDef, lay: _Layout, flags: int, op: Operation,
                      values: list[Value]) -> None:
        if lay.attr_sized:
            self.read_segments(c, d, lay, flags, op, values)
            return
        groups = lay.operands
        if d.operand_count == "total":
            try:
                total = c.varint(limited=True)
            except ReadFailure as e:
                raise e.then("failed to read operand count", c) from None
        else:
            total = len(groups)
        operands = op.operands
        for i in range(total):
            try:
                idx = c.varint()
            except ReadFailure as e:
                raise e.then(f"failed to read operand index {i}", c) from None
            if idx >= len(values):
                raise c.fail(f"operand index {idx} out of bounds (size={len(values)}) for "
                             f"operand {i}")
            operands.append(values[idx])
        if not d.has_variable_operands:
            return
        # One count for all groups: the fixed ones take one each, the variable one the
        # rest (the op's verifier refuses other counts; nanotile must split them now).
        fixed = sum(1 for o in groups if o.kind == "single")
        flexible = [o for o in groups if o.kind != "single"]
        rest = total - fixed
        if rest < 0 or (not flexible and rest) or (
                flexible and flexible[0].kind == "optional" and rest > 1):
            self.refuse(c, f"invalid operand count {total} for '{d.name}'")
            return
        sizes = iter([1 if o.kind == "single" else rest for o in groups])
        op.operand_segments = [next(sizes) if o in groups else 0 for o in d.operands]

    def read_segments(self, c: Cursor, d: OpDef, lay: _Layout, flags: int, op: Operation,
                      values: list[Value]) -> None:
        """Operands in segments (AttrSizedOperandSegments): an optional one announced by
        its flag, each variadic one with its own count."""
        sizes = []
        for o, bit, too_new in lay.segments:
            if o.kind == "single":
                n = 1
            elif o.kind == "optional":
                set_ = bit >= 0 and bool(flags >> bit & 1)
                if too_new:
                    if set_:
                        raise c.fail(f"malformed bytecode: flag set for operand '{o.name}' "
                                     f"which requires {o.since} but reading "
                                     f"{W.version_str(self.version)} bytecode")
                    n = 0
                else:
                    n = int(set_)
            else:
                try:
                    n = c.varint()
                except ReadFailure as e:
                    raise e.then(f"failed to read actual size for variadic ODS segment "
                                 f"'{o.name}' of op 'cuda_tile.{d.name}'", c) from None
                n &= 0xFFFFFFFF
                if n >> 31:  # cuda-tile keeps it as an int32: negative
                    raise c.fail(f"failed to read operands for {o.name} segment, exceeds "
                                 "maximum supported capacity")
            for j in range(n):
                try:
                    idx = c.varint()
                except ReadFailure as e:
                    raise e.then(f"failed to read operand index for {o.name} segment, element "
                                 f"{j}", c) from None
                if idx >= len(values):
                    raise c.fail(f"operand index {idx} out of bounds (size={len(values)}) for "
                                 f"{o.name} segment, element {j}")
                op.operands.append(values[idx])
            sizes.append(n)
        op.operand_segments = sizes

    def read_regions(self, c: Cursor, d: OpDef, op: Operation, values: list[Value]) -> None:
        try:
            n = c.varint(limited=True)
        except ReadFailure as e:
            raise e.then("failed to read number of regions to parse.", c) from None
        if n != d.regions:
            raise c.fail(f"cuda_tile.{d.name} op expected {d.regions} regions, got {n}")
        self.enter(c, "regions")
        for i in range(n):
            try:
                op.regions.append(self.read_region(c, op, values))
            except ReadFailure as e:
                raise e.then(f"failed to parse region {i}", c) from None
        self.depth["regions"] -= 1

    def read_region(self, c: Cursor, op: Operation, values: list[Value]) -> Region:
        region = Region([], op)
        try:
            nblocks = c.varint()
        except ReadFailure as e:
            raise e.then("failed to read region block count", c) from None
        for k in range(nblocks):
            try:
                region.blocks.append(self.read_block(c, region, values))
            except ReadFailure as e:
                raise e.then(f"failed to parse block {k} in region.", c) from None
        if nblocks > 1:
            self.refuse(c, f"a region holds at most one block, not {nblocks}")
        return region

    def read_block(self, c: Cursor, region: Region, values: list[Value]) -> Block:
        block = Block(parent=region)
        try:
            nargs = c.varint()
        except ReadFailure as e:
            raise e.then("failed to read block argument count.", c) from None
        mark = len(values)
        try:
            for _ in range(nargs):
                block.add_argument(self.read_type(c))
        except ReadFailure as e:
            raise e.then(f"failed to read block argument type: {len(block.arguments)}",
                         c) from None
        values.extend(block.arguments)
        try:
            nops = c.varint()
        except ReadFailure as e:
            raise e.then("failed to read block operation count.", c) from None
        ops = block.ops
        i = 0
        try:
            for i in range(nops):
                block.append(self.read_op(c, values))
        except ReadFailure as e:
            raise e.then(f"failed to parse operation {i} in block.", c) from None
        if not ops:
            raise c.fail("invalid block structure: block is expected to have a terminator "
                         "operation, but it is empty")
        last = ops[-1]
        if last.name not in _TERMINATORS:
            raise c.fail("invalid block structure: block is expected to have a terminator "
                         f"operation, but the last operation 'cuda_tile.{last.name}' is not "
                         "a terminator.")
        del values[mark:]
        return block


_TERMINATORS = frozenset(d.name for d in OPS_BY_OPCODE.values() if d.is_terminator)


def _diagnostic(failure: ReadFailure, filename: str) -> Diagnostic:
    """The chain as one diagnostic: its first message that is not nanotile's explanation
    of a silent failure is the error, the others are notes, in order."""
    frames = failure.frames
    main = next((k for k, f in enumerate(frames) if f[3] != DETAIL), 0)
    diag = Diagnostic("error", frames[main][0], filename, offset=frames[main][1])
    diag.notes = [Diagnostic("note", m, filename, offset=o)
                  for k, (m, o, _, _) in enumerate(frames) if k != main]
    return diag


def cuda_tile_chain(data: bytes) -> list[tuple[str, int | None, int]] | None:
    """What reading ``data`` reports, as cuda-tile would print it: the chain's messages
    with cuda-tile's offsets and kinds (wire.CUDA, DETAIL, OWN), or None when it reads.
    For tests that compare with NVIDIA's tools."""
    try:
        _read(data, "-")
    except ReadFailure as e:
        return [(m, rel, kind) for m, _, rel, kind in e.frames]
    return None


def _read(data: bytes, filename: str) -> Module:
    # Nesting is bounded explicitly (MAX_NESTING, MAX_DEBUG_NESTING); the limit is raised
    # so that those bounds, not Python's default stack limit, decide.
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 20000))
    try:
        return _Reader(bytes(data), filename).read()
    finally:
        sys.setrecursionlimit(old_limit)


def read_bytecode(data: bytes, filename: str) -> Module:
    """Decode a ``.tileirbc`` file; raises CompileError (with a byte offset) if malformed."""
    try:
        return _read(data, filename)
    except ReadFailure as e:
        raise CompileError(_diagnostic(e, filename)) from None
    except RecursionError:
        raise CompileError(Diagnostic("error", "bytecode nests too deeply", filename,
                                      offset=0)) from None
