"""Decode Tile IR bytecode (versions 13.1-13.4) into a nanotile Module.

The file's declared version decides which version-gated fields are read. Every length,
count and id is checked against the bytes that are left (or the table it indexes) before
anything is allocated, nesting is bounded, and every problem is a CompileError naming the
byte offset, so a malformed file can never crash the reader.

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

from typing import Any

from ..diagnostics import CompileError
from ..ir import attrs as A
from ..ir import types as T
from ..ir.core import Block, Module, Operation, Region, Value
from ..ir.enums import SymbolVisibility
from ..ir.optable import OPS_BY_OPCODE, AttrDef, OpDef
from . import wire as W
from .wire import Cursor

_ITEM_OPS = ("entry", "global", "module")


class _Table:
    """A String/Type/Constant/Debug table: item k is ``data[starts[k]:ends[k]]``."""

    def __init__(self, cur: Cursor, width: int, what: str, base: int | None = None) -> None:
        # The index is aligned relative to the start of the section payload.
        base = cur.pos if base is None else base
        n = cur.count(f"{what} table size", width)
        cur.align(width, base)
        cur.need(n * width, f"{what} table index")
        raw = cur.raw(n * width, f"{what} table index")
        offsets = [int.from_bytes(raw[i:i + width], "little") for i in range(0, n * width, width)]
        self.blob = cur.pos
        size = cur.remaining
        prev = 0
        for k, off in enumerate(offsets):
            if off < prev or off > size or (k == 0 and off != 0):
                raise cur.error(f"invalid offset {off} for {what} table entry {k}",
                                base + (k * width))
            prev = off
        self.starts = [self.blob + o for o in offsets]
        self.ends = self.starts[1:] + [cur.end]
        self.what = what
        cur.pos = cur.end

    def __len__(self) -> int:
        return len(self.starts)


class _Reader:
    def __init__(self, data: bytes, filename: str) -> None:
        self.data = data
        self.filename = filename
        self.version: W.Version = (0, 0)
        self.strings: list[str] = []
        self.type_table: _Table | None = None
        self.types: dict[int, T.Type] = {}
        self.types_in_progress: set[int] = set()
        self.const_table: _Table | None = None
        self.consts: dict[int, bytes] = {}
        self.di_table: _Table | None = None
        self.di_attrs: dict[int, Any] = {}
        self.di_in_progress: set[int] = set()
        self.di_slots: list[list[int]] = []
        self.op_locs: list[int] = []  # debug refs of the function being read
        self.op_index = 0
        # regions in regions (a function's body is the first) and attributes in
        # attributes, each at most W.MAX_NESTING deep, as the text parser and the writer
        self.depth = {"regions": 0, "attributes": 0}

    def error(self, message: str, offset: int) -> CompileError:
        return Cursor(self.data, offset, offset, self.filename).error(message)

    # ---------------------------------------------------------------- file structure

    def read(self) -> Module:
        data = self.data
        if len(data) < len(W.MAGIC) or not data.startswith(W.MAGIC):
            raise self.error("invalid magic number (not Tile IR bytecode)", 0)
        cur = Cursor(data, len(W.MAGIC), len(data), self.filename, "header")
        major, minor = cur.byte("version"), cur.byte("version")
        tag = int.from_bytes(cur.raw(2, "version tag"), "little")
        if not W.is_known_version((major, minor)):
            raise self.error(f"unsupported Tile IR bytecode version: {major}.{minor} "
                             f"(unsupported Tile version {major}.{minor}.{tag}, this reader "
                             f"supports versions {W.supported_range()})", 8)
        self.version = (major, minor)
        sections = self.read_sections(cur)
        for sid in (W.SEC_STRING, W.SEC_FUNC):
            if sid not in sections:
                raise self.error(f"{W.SECTION_NAMES[sid]} section is mandatory", len(data) - 1)
        self.read_strings(sections[W.SEC_STRING])
        module = Module(name=None)
        if W.SEC_PRODUCER in sections:
            c = sections[W.SEC_PRODUCER]
            module.producer = self.string(c.varint("producer string id"), c)
            self.expect_end(c)
        if W.SEC_TYPE in sections:
            self.type_table = _Table(sections[W.SEC_TYPE], 4, "type")
        if W.SEC_CONSTANT in sections:
            self.const_table = _Table(sections[W.SEC_CONSTANT], 8, "constant")
        if W.SEC_DEBUG in sections:
            self.read_debug_section(sections[W.SEC_DEBUG])
        if W.SEC_GLOBAL in sections:
            module.items.extend(self.read_globals(sections[W.SEC_GLOBAL]))
        module.items.extend(self.read_functions(sections[W.SEC_FUNC]))
        if self.type_table is not None:
            c = Cursor(self.data, 0, 0, self.filename)
            module.bytecode_types = tuple(self.type_at(k, c, self.type_table.starts[k])
                                          for k in range(len(self.type_table)))
        return module

    def read_sections(self, cur: Cursor) -> dict[int, Cursor]:
        sections: dict[int, Cursor] = {}
        while True:
            start = cur.pos
            if cur.at_end():
                raise cur.error("truncated bytecode: missing end-of-bytecode section")
            ident = cur.byte("section id")
            sid = ident & 0x7F
            if sid == W.SEC_END:
                if ident & 0x80:
                    raise cur.error("end section must not have an alignment", start)
                if not cur.at_end():
                    raise cur.error("end section is not the last section", start)
                return sections
            if sid not in W.SECTION_NAMES or (sid == W.SEC_PRODUCER and self.version < (13, 3)):
                raise cur.error(f"unknown section ID: {sid}", start)
            if sid in sections:
                raise cur.error(f"duplicate {W.SECTION_NAMES[sid]} section", start)
            length = cur.varint("section length")
            if ident & 0x80:
                apos = cur.pos
                alignment = cur.varint("section alignment")
                if alignment == 0 or alignment & (alignment - 1) or alignment > 4096:
                    raise cur.error(f"invalid section alignment {alignment}", apos)
                cur.align(alignment)
            if length > cur.remaining:
                raise cur.error(f"{W.SECTION_NAMES[sid]} section length {length} exceeds the "
                                f"{cur.remaining} bytes left", start)
            sections[sid] = cur.sub(length, f"{W.SECTION_NAMES[sid]} section")

    def expect_end(self, cur: Cursor) -> None:
        if not cur.at_end():
            raise cur.error(f"{cur.remaining} unexpected trailing bytes in {cur.what}")

    # ---------------------------------------------------------------- strings

    def read_strings(self, cur: Cursor) -> None:
        table = _Table(cur, 4, "string")
        for k, (s, e) in enumerate(zip(table.starts, table.ends)):
            try:
                self.strings.append(self.data[s:e].decode("utf-8"))
            except UnicodeDecodeError:
                raise self.error(f"string {k} is not valid UTF-8", s) from None

    def string(self, idx: int, cur: Cursor) -> str:
        if idx >= len(self.strings):
            raise cur.error(f"invalid string id {idx} (the string table has "
                            f"{len(self.strings)} entries)")
        return self.strings[idx]

    def read_string(self, cur: Cursor, what: str) -> str:
        start = cur.pos
        idx = cur.varint(what)
        if idx >= len(self.strings):
            raise cur.error(f"invalid string id {idx} for {what} (the string table has "
                            f"{len(self.strings)} entries)", start)
        return self.strings[idx]

    # ---------------------------------------------------------------- types

    def read_type(self, cur: Cursor, what: str = "type id") -> T.Type:
        start = cur.pos
        return self.type_at(cur.varint(what), cur, start)

    def type_at(self, idx: int, cur: Cursor, start: int) -> T.Type:
        t = self.types.get(idx)
        if t is not None:
            return t
        table = self.type_table
        if table is None or idx >= len(table):
            raise cur.error(f"invalid type id {idx} (the type table has "
                            f"{0 if table is None else len(table)} entries)", start)
        if idx in self.types_in_progress or len(self.types_in_progress) > W.MAX_NESTING:
            raise cur.error(f"type {idx} refers to itself or nests too deeply", start)
        self.types_in_progress.add(idx)
        c = Cursor(self.data, table.starts[idx], table.ends[idx], self.filename,
                   f"type table entry {idx}")
        t = self.decode_type(c)
        self.expect_end(c)
        self.types_in_progress.discard(idx)
        self.types[idx] = t
        return t

    def check_type_version(self, name: str, since: W.Version, offset: int) -> None:
        if self.version < since:
            pretty = W.TYPE_ERROR_NAMES.get(name, name)
            raise self.error(f"type '{pretty}' requires bytecode version "
                             f"{W.version_str(since)}+, file version is "
                             f"{W.version_str(self.version)}", offset)

    def type_flags(self, c: Cursor, allowed: int) -> int:
        start = c.pos
        flags = c.varint("type flags")
        if flags & ~allowed:
            raise c.error(f"unknown type flag bits {flags:#x}", start)
        return flags

    def tensor_view_of(self, c: Cursor) -> T.TensorViewType:
        start = c.pos
        tv = self.read_type(c, "tensor_view type id")
        if not isinstance(tv, T.TensorViewType):
            raise c.error(f"expected a tensor_view type, got {tv}", start)
        return tv

    def padding(self, c: Cursor) -> T.PaddingValue:
        start = c.pos
        b = c.byte("padding value")
        try:
            return T.PaddingValue(b)
        except ValueError:
            raise c.error(f"invalid padding value {b}", start) from None

    def decode_type(self, c: Cursor) -> T.Type:
        start = c.pos
        tag = c.varint("type tag")
        if tag in W.ELEMENT_TAGS:
            et = W.ELEMENT_TAGS[tag]
            self.check_type_version(et.name, W.since(et.since), start)
            return et
        v134 = self.version >= (13, 4)
        v133 = self.version >= (13, 3)
        if tag == W.TAG_TOKEN:
            return T.TOKEN
        if tag == W.TAG_POINTER:
            flags = self.type_flags(c, 1) if v134 else 0
            pointee = self.read_type(c, "pointee type id")
            attr = c.byte("pointer attribute") if flags & 1 else None
            return T.PointerType(pointee, attr)
        if tag == W.TAG_TILE:
            epos = c.pos
            element = self.read_type(c, "tile element type id")
            if not isinstance(element, (T.ElementType, T.PointerType)):
                raise c.error(f"invalid tile element type {element}", epos)
            spos = c.pos
            shape = c.int_list(8, "tile shape")
            if any(d < 0 for d in shape):
                raise c.error("tile dimensions must be non-negative", spos)
            return T.TileType(shape, element)
        if tag == W.TAG_TENSOR_VIEW:
            flags = self.type_flags(c, 1) if v134 else 0
            epos = c.pos
            element = self.read_type(c, "tensor_view element type id")
            if not isinstance(element, T.ElementType):
                raise c.error(f"invalid tensor_view element type {element}", epos)
            spos = c.pos
            shape = _dyn(c.int_list(8, "tensor_view shape"))
            strides = _dyn(c.int_list(8, "tensor_view strides"))
            if len(shape) != len(strides):
                raise c.error("tensor_view shape and strides differ in rank", spos)
            attr = c.byte("pointer attribute") if flags & 1 else None
            return T.TensorViewType(element, shape, strides, attr)
        if tag == W.TAG_PARTITION_VIEW:
            flags = self.type_flags(c, 1) if v133 else 0
            tile = c.int_list(4, "partition_view tile shape")
            tv = self.tensor_view_of(c)
            dim_map = c.int_list(4, "partition_view dim map")
            if not v133:
                ppos = c.pos
                has = c.varint("padding flag")
                if has > 1:
                    raise c.error(f"invalid padding flag {has}", ppos)
                flags = has
            pad = self.padding(c) if flags & 1 else None
            return T.PartitionViewType(tile, tv, _dim_map(tile, dim_map), pad)
        if tag == W.TAG_STRIDED_VIEW:
            self.check_type_version("strided_view", (13, 3), start)
            flags = self.type_flags(c, 1)
            tile = c.int_list(4, "strided_view tile shape")
            strides = c.int_list(4, "strided_view traversal strides")
            tv = self.tensor_view_of(c)
            dim_map = c.int_list(4, "strided_view dim map")
            pad = self.padding(c) if flags & 1 else None
            return T.StridedViewType(tile, strides, tv, _dim_map(tile, dim_map), pad)
        if tag == W.TAG_GATHER_SCATTER_VIEW:
            self.check_type_version("gather_scatter_view", (13, 3), start)
            flags = self.type_flags(c, 1)
            tile = c.int_list(4, "gather_scatter_view tile shape")
            tv = self.tensor_view_of(c)
            sparse = c.varint("sparse dim")
            pad = self.padding(c) if flags & 1 else None
            return T.GatherScatterViewType(tile, tv, sparse, pad)
        if tag == W.TAG_FUNCTION:
            n = c.count("function input count")
            inputs = tuple(self.read_type(c) for _ in range(n))
            n = c.count("function result count")
            results = tuple(self.read_type(c) for _ in range(n))
            return T.FunctionType(inputs, results)
        raise c.error(f"unknown type tag {tag}", start)

    # ---------------------------------------------------------------- constants

    def constant(self, cur: Cursor, what: str) -> bytes:
        start = cur.pos
        idx = cur.varint(what)
        table = self.const_table
        if table is None or idx >= len(table):
            raise cur.error(f"invalid constant id {idx} (the constant table has "
                            f"{0 if table is None else len(table)} entries)", start)
        if idx not in self.consts:
            c = Cursor(self.data, table.starts[idx], table.ends[idx], self.filename,
                       f"constant table entry {idx}")
            n = c.varint("constant length")
            if n != c.remaining:
                raise c.error(f"constant {idx} declares {n} bytes but its entry holds "
                              f"{c.remaining}")
            self.consts[idx] = c.raw(n)
        return self.consts[idx]

    def dense(self, data: bytes, t: T.Type, cur: Cursor, start: int) -> A.DenseElementsAttr:
        if not isinstance(t, T.TileType) or not isinstance(t.element, T.ElementType):
            raise cur.error(f"a dense constant needs a tile type of numbers, got {t}", start)
        width = W.storage_bytes(t.element)
        n = t.num_elements
        if t.element.name == "i1":
            # MLIR's i1 layout: a splat is one byte 0x00/0xFF; otherwise bits, LSB first.
            if len(data) == 1 and data[0] in (0x00, 0xFF):
                return A.DenseElementsAttr(t, data, True)
            if len(data) == (n + 7) // 8:
                return A.DenseElementsAttr(t, data, False)
        elif len(data) == width:  # one element: a splat (also when the tile has one)
            return A.DenseElementsAttr(t, data, True)
        elif len(data) == n * width:
            return A.DenseElementsAttr(t, data, False)
        raise cur.error(f"constant of {len(data)} bytes does not fit {t}", start)

    # ---------------------------------------------------------------- attributes

    def enter(self, cur: Cursor, what: str) -> None:
        self.depth[what] += 1
        if self.depth[what] > W.MAX_NESTING:
            raise cur.error(f"{what} nested too deeply (limit {W.MAX_NESTING})")

    def tagged_attr(self, cur: Cursor) -> Any:
        self.enter(cur, "attributes")
        try:
            return self._tagged_attr(cur)
        finally:
            self.depth["attributes"] -= 1

    def _tagged_attr(self, c: Cursor) -> Any:
        start = c.pos
        tag = c.varint("attribute tag")
        if tag == W.ATTR_INTEGER:
            tpos = c.pos
            t = self.read_type(c)
            if not isinstance(t, T.ElementType) or t.is_float:
                raise c.error(f"integer attribute of non-integer type {t}", tpos)
            vpos = c.pos
            value = c.varint("integer attribute value")
            if value >> t.bitwidth:
                raise c.error(f"integer attribute value {value} does not fit {t}", vpos)
            if t.bitwidth > 1 and value >> (t.bitwidth - 1):
                value -= 1 << t.bitwidth
            return A.IntegerAttr(value, t)
        if tag == W.ATTR_FLOAT:
            tpos = c.pos
            t = self.read_type(c)
            if not isinstance(t, T.ElementType) or not t.is_float:
                raise c.error(f"float attribute of non-float type {t}", tpos)
            vpos = c.pos
            width = W.value_bits(t)
            bits = c.byte("float bits") if width <= 8 else c.svarint("float bits")
            if bits < 0 or bits >> width:
                raise c.error(f"float attribute bits {bits:#x} do not fit {t}", vpos)
            return A.FloatAttr(bits, t)
        if tag == W.ATTR_BOOL:
            return A.BoolAttr(self.bool_byte(c))
        if tag == W.ATTR_TYPE:
            return A.TypeAttr(self.read_type(c))
        if tag == W.ATTR_STRING:
            return A.StringAttr(self.read_string(c, "string attribute"))
        if tag == W.ATTR_ARRAY:
            n = c.count("array attribute size")
            return A.ArrayAttr(tuple(self.tagged_attr(c) for _ in range(n)))
        if tag == W.ATTR_DENSE:
            tpos = c.pos
            t = self.read_type(c)
            return self.dense(self.constant(c, "constant id"), t, c, tpos)
        if tag == W.ATTR_DIV_BY:
            divisor = c.varint("div_by divisor")
            flags = self.flag_byte(c, 3)
            every = c.svarint("div_by every") if flags & 1 else None
            along = c.svarint("div_by along") if flags & 2 else None
            return A.DivByAttr(divisor, every, along)
        if tag == W.ATTR_SAME_ELEMENTS:
            return A.SameElementsAttr(c.int_list(8, "same_elements values"))
        if tag in (W.ATTR_DICT, W.ATTR_HINTS):
            entries = self.dict_entries(c)
            if tag == W.ATTR_DICT:
                return A.DictAttr(entries)
            return self.hints(entries, c, start)
        if tag == W.ATTR_BOUNDED:
            flags = self.flag_byte(c, 3)
            lower = c.svarint("lower bound") if flags & 1 else None
            upper = c.svarint("upper bound") if flags & 2 else None
            return A.BoundedAttr(lower, upper)
        raise c.error(f"unknown attribute tag {tag}", start)

    def dict_entries(self, c: Cursor) -> tuple[tuple[str, Any], ...]:
        n = c.count("dictionary size", 2)
        entries = []
        for k in range(n):
            kpos = c.pos
            key = self.read_string(c, "dictionary key")
            if not key:
                raise c.error(f"invalid empty attribute name for DictionaryAttr element {k}",
                              kpos)
            entries.append((key, self.tagged_attr(c)))
        return tuple(entries)

    def hints(self, entries: tuple, c: Cursor, start: int) -> A.OptimizationHintsAttr:
        for key, value in entries:
            if not isinstance(value, A.DictAttr):
                raise c.error(f"optimization hints for '{key}' must be a dictionary", start)
        return A.OptimizationHintsAttr(entries)

    def bool_byte(self, c: Cursor) -> bool:
        start = c.pos
        b = c.byte("bool")
        if b > 1:
            raise c.error(f"invalid bool byte {b}", start)
        return bool(b)

    def flag_byte(self, c: Cursor, allowed: int) -> int:
        start = c.pos
        b = c.byte("flags")
        if b & ~allowed:
            raise c.error(f"unknown flag bits {b:#x}", start)
        return b

    # ---------------------------------------------------------------- debug info

    def read_debug_section(self, cur: Cursor) -> None:
        base = cur.pos
        nfuncs = cur.count("debug function count", 4)
        cur.align(4, base)
        starts = [int.from_bytes(cur.raw(4), "little") for _ in range(nfuncs)]
        total = cur.count("debug entry count", 8)
        cur.align(8, base)
        raw = cur.raw(total * 8, "debug entries")
        refs = [int.from_bytes(raw[i:i + 8], "little") for i in range(0, total * 8, 8)]
        for k, s in enumerate(starts):
            end = starts[k + 1] if k + 1 < nfuncs else total
            if not s <= end <= total:
                raise cur.error(f"invalid debug slice for function {k}", base)
            self.di_slots.append(refs[s:end])
        self.di_table = _Table(cur, 4, "debug attribute", base)

    def di_ref(self, ref: int, c: Cursor, start: int) -> Any:
        """Debug attribute ``ref`` (1-based; 0 = none)."""
        if ref == 0:
            return None
        if ref in self.di_attrs:
            return self.di_attrs[ref]
        table = self.di_table
        if table is None or ref > len(table):
            raise c.error(f"invalid debug attribute id {ref}", start)
        if ref in self.di_in_progress or len(self.di_in_progress) > W.MAX_DEBUG_NESTING:
            raise c.error(f"debug attribute {ref} refers to itself or nests too deeply", start)
        self.di_in_progress.add(ref)
        dc = Cursor(self.data, table.starts[ref - 1], table.ends[ref - 1], self.filename,
                    f"debug attribute {ref}")
        value = self.decode_di(dc)
        self.expect_end(dc)
        self.di_in_progress.discard(ref)
        self.di_attrs[ref] = value
        return value

    def di_field(self, c: Cursor, what: str, kinds: tuple[type, ...]) -> Any:
        start = c.pos
        value = self.di_ref(c.varint(what), c, start)
        if not isinstance(value, kinds):
            raise c.error(f"invalid {what}: {type(value).__name__}", start)
        return value

    def decode_di(self, c: Cursor) -> Any:
        start = c.pos
        tag = c.varint("debug tag")
        scopes = (A.DISubprogramAttr, A.DILexicalBlockAttr)
        if tag == W.DI_COMPILE_UNIT:
            return A.DICompileUnitAttr(self.di_field(c, "file", (A.DIFileAttr,)))
        if tag == W.DI_FILE:
            return A.DIFileAttr(self.read_string(c, "file name"),
                                self.read_string(c, "directory"))
        if tag == W.DI_LEXICAL_BLOCK:
            scope = self.di_field(c, "scope", scopes)
            file = self.di_field(c, "file", (A.DIFileAttr,))
            return A.DILexicalBlockAttr(scope, file, c.varint("line"), c.varint("column"))
        if tag == W.DI_LOC:
            scope = self.di_field(c, "scope", scopes)
            name = self.read_string(c, "file name")
            return A.DILocAttr(scope, name, c.varint("line"), c.varint("column"))
        if tag == W.DI_SUBPROGRAM:
            file = self.di_field(c, "file", (A.DIFileAttr,))
            line = c.varint("line")
            name = self.read_string(c, "name")
            linkage = self.read_string(c, "linkage name")
            unit = self.di_field(c, "compile unit", (A.DICompileUnitAttr,))
            return A.DISubprogramAttr(file, line, name, linkage, unit, c.varint("scope line"))
        if tag == W.DI_CALL_SITE:
            locs = (A.DILocAttr, A.CallSiteLoc)
            return A.CallSiteLoc(self.di_field(c, "callee", locs), self.di_field(c, "caller", locs))
        if tag == 0 and c.at_end():
            return A.UnknownLoc()  # cuTile's placeholder entry of an otherwise empty table
        raise c.error(f"unknown debug attribute tag {tag}", start)

    def location(self, ref: int, c: Cursor) -> A.Location | None:
        loc = self.di_ref(ref, c, c.pos)
        if loc is not None and not isinstance(loc, (A.DILocAttr, A.CallSiteLoc)):
            raise c.error(f"debug entry {ref} is not a location")
        return loc

    # ---------------------------------------------------------------- globals

    def read_globals(self, cur: Cursor) -> list[Operation]:
        n = cur.count("global count", 4)
        out = []
        for _ in range(n):
            name = self.read_string(cur, "global name")
            tpos = cur.pos
            t = self.read_type(cur)
            value = self.dense(self.constant(cur, "global constant id"), t, cur, tpos)
            attrs: dict[str, Any] = {"sym_name": name, "value": value,
                                     "alignment": cur.varint("global alignment")}
            if self.version >= (13, 3):
                vpos = cur.pos
                vis = cur.byte("global visibility")
                if vis > 1:
                    raise cur.error(f"invalid symbol visibility {vis}", vpos)
                attrs["symbol_visibility"] = SymbolVisibility(vis)
                cpos = cur.pos
                const = cur.varint("global constant flag")
                if const > 1:
                    raise cur.error(f"invalid global constant flag {const}", cpos)
                if const:
                    attrs["constant"] = True
            out.append(Operation("global", attributes=attrs))
        self.expect_end(cur)
        return out

    # ---------------------------------------------------------------- functions and ops

    def read_functions(self, cur: Cursor) -> list[Operation]:
        n = cur.count("function count", 4)
        out = []
        for _ in range(n):
            out.append(self.read_function(cur))
        # NVIDIA's C++ writer pads the function section to 8 bytes at its end.
        while not cur.at_end() and self.data[cur.pos] == W.PAD:
            cur.pos += 1
        self.expect_end(cur)
        return out

    def read_function(self, cur: Cursor) -> Operation:
        start = cur.pos
        name = self.read_string(cur, "function name")
        spos = cur.pos
        sig = self.read_type(cur, "function type id")
        if not isinstance(sig, T.FunctionType):
            raise cur.error(f"function signature must be a function type, got {sig}", spos)
        fpos = cur.pos
        flags = cur.byte("function flags")
        if flags & ~(W.FUNC_ENTRY | W.FUNC_HAS_HINTS) or flags == W.FUNC_HAS_HINTS:
            raise cur.error(f"unsupported function flags {flags:#x}", fpos)
        dpos = cur.pos
        slot = cur.varint("function debug index")
        if slot > len(self.di_slots):
            raise cur.error(f"invalid debug index {slot}", dpos)
        attrs: dict[str, Any] = {"sym_name": name, "function_type": sig}
        if flags & W.FUNC_HAS_HINTS:
            hpos = cur.pos
            hints = self.tagged_attr(cur)
            if not isinstance(hints, A.OptimizationHintsAttr):
                raise cur.error("entry hints must be an optimization_hints attribute", hpos)
            attrs["optimization_hints"] = hints
        body = cur.sub(cur.count("function body length"), f"body of function '{name}'")
        # Flags 0: a non-entry function, which NVIDIA's writer emits for the test-only
        # `testing$func` (tileirdisasm refuses those; nanotile reads them back).
        entry = Operation("entry" if flags & W.FUNC_ENTRY else "testing$func",
                          attributes=attrs)
        self.op_locs = self.di_slots[slot - 1] if slot else []
        self.op_index = 0
        entry.location = self.next_location(body)
        block = Block()
        for t in sig.inputs:
            block.add_argument(t)
        values = list(block.arguments)
        self.enter(body, "regions")
        while not body.at_end():
            block.append(self.read_op(body, values))
        self.depth["regions"] -= 1
        if slot and self.op_index != len(self.op_locs):
            raise self.error(f"function '{name}' has {self.op_index} debug entries "
                             f"but its debug slice holds {len(self.op_locs)}", start)
        region = Region([block], entry)
        block.parent = region
        entry.regions = [region]
        return entry

    def next_location(self, c: Cursor) -> A.Location | None:
        k = self.op_index
        self.op_index += 1
        if not self.op_locs:
            return None
        if k >= len(self.op_locs):
            raise c.error("more ops than debug entries for this function")
        return self.location(self.op_locs[k], c)

    def read_op(self, c: Cursor, values: list[Value]) -> Operation:
        start = c.pos
        opcode = c.varint("opcode")
        d = OPS_BY_OPCODE.get(opcode)
        if d is None:
            raise c.error(f"unknown or unimplemented opcode: {opcode}", start)
        if self.version < W.since(d.since):
            raise c.error(f"unsupported opcode {opcode} for bytecode version "
                          f"{W.version_str(self.version)}", start)
        if d.name in _ITEM_OPS:
            raise c.error(f"'{d.name}' cannot appear inside a function body", start)
        op = Operation(d.name)
        op.location = self.next_location(c)
        result_types = self.read_result_types(c, d)
        flags = self.read_flags(c, d)
        for a in d.attrs:
            self.read_attr(c, d, a, flags, op, result_types)
        self.read_operands(c, d, flags, op, values)
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
        for r in d.results:
            if self.version < W.since(r.since):
                op.results.append(Value(T.TOKEN, op, len(op.results)))
        return op

    def read_result_types(self, c: Cursor, d: OpDef) -> list[T.Type]:
        defs = [r for r in d.results if self.version >= W.since(r.since)]
        if d.counted_results:
            cpos = c.pos
            n = c.count("result count")
            if not any(r.variadic for r in defs) and n != len(defs):
                raise c.error(f"'{d.name}' has {len(defs)} results, not {n}", cpos)
        else:
            n = len(defs)
        return [self.read_type(c, "result type id") for _ in range(n)]

    def read_flags(self, c: Cursor, d: OpDef) -> dict[str, bool]:
        active = [(i, name) for i, (name, s) in enumerate(d.flags)
                  if self.version >= W.since(s)]
        if not active:
            return {}
        start = c.pos
        bits = c.varint("op flags")
        allowed = sum(1 << i for i, _ in active)
        if bits & ~allowed:
            raise c.error(f"unknown flag bits {bits:#x} for '{d.name}'", start)
        known = {a.name for a in d.attrs} | {o.name for o in d.operands}
        for i, name in active:
            if bits >> i & 1 and name not in known:  # a reserved bit (test-only ops)
                raise c.error(f"'{d.name}': '{name}' is not supported by this reader", start)
        return {name: bool(bits >> i & 1) for i, name in active}

    def read_attr(self, c: Cursor, d: OpDef, a: AttrDef, flags: dict[str, bool],
                  op: Operation, result_types: list[T.Type]) -> None:
        if self.version < W.since(a.since):
            return
        if a.kind == "unit":
            if flags.get(a.name):
                op.attributes[a.name] = True
            return
        if a.name in flags and not flags[a.name]:
            return
        start = c.pos
        kind = a.kind
        value: Any
        if kind == "enum":
            b = c.byte(a.name)
            try:
                value = a.enum(b)  # type: ignore[misc]
            except ValueError:
                raise c.error(f"invalid value {b} for attribute '{a.name}'", start) from None
        elif kind == "bool":
            value = self.bool_byte(c)
        elif kind == "int":
            value = c.varint(a.name)
        elif kind in ("string", "symbol"):
            value = self.read_string(c, a.name)
        elif kind == "type":
            value = self.read_type(c)
        elif kind == "dense":
            if not result_types:
                raise c.error(f"'{d.name}' needs a result type for its value", start)
            value = self.dense(self.constant(c, "constant id"), result_types[0], c, start)
        elif kind == "i32_array":
            value = c.int_list(4, a.name)
        elif kind == "bool_array":
            raw = c.int_list(1, a.name)
            if any(v not in (0, 1) for v in raw):
                raise c.error(f"invalid bool in '{a.name}'", start)
            value = tuple(bool(v) for v in raw)
        elif kind == "attr":
            value = self.tagged_attr(c)
        elif kind == "attr_array":
            n = c.count(f"{a.name} size")
            value = tuple(self.tagged_attr(c) for _ in range(n))
        elif kind == "hints":
            value = self.hints(self.dict_entries(c), c, start)
        else:  # pragma: no cover - the op table only uses the kinds above
            raise c.error(f"unsupported attribute kind {kind}", start)
        op.attributes[a.name] = value

    def operand(self, c: Cursor, values: list[Value]) -> Value:
        start = c.pos
        idx = c.varint("operand value id")
        if idx >= len(values):
            raise c.error(f"invalid value id {idx} ({len(values)} values are defined here)",
                          start)
        return values[idx]

    def read_operands(self, c: Cursor, d: OpDef, flags: dict[str, bool], op: Operation,
                      values: list[Value]) -> None:
        groups = [o for o in d.operands if self.version >= W.since(o.since)]
        sizes: list[int] = []
        if d.operand_count == "total":
            cpos = c.pos
            total = c.count("operand count")
            fixed = sum(1 for o in groups if o.kind == "single")
            flexible = [o for o in groups if o.kind != "single"]
            rest = total - fixed
            if rest < 0 or (not flexible and rest) or (
                    flexible and flexible[0].kind == "optional" and rest > 1):
                raise c.error(f"invalid operand count {total} for '{d.name}'", cpos)
            sizes = [1 if o.kind == "single" else rest for o in groups]
            op.operands = [self.operand(c, values) for _ in range(total)]
        else:
            for o in groups:
                if o.kind == "single":
                    n = 1
                elif o.kind == "optional":
                    n = 1 if flags.get(o.name) else 0
                else:
                    n = c.count(f"'{o.name}' operand count")
                sizes.append(n)
                op.operands.extend(self.operand(c, values) for _ in range(n))
        if d.has_variable_operands:
            # Groups newer than the file (print_tko's token before 13.2) are empty.
            it = iter(sizes)
            op.operand_segments = [next(it) if o in groups else 0 for o in d.operands]

    def read_regions(self, c: Cursor, d: OpDef, op: Operation, values: list[Value]) -> None:
        start = c.pos
        n = c.varint("region count")
        if n != d.regions:
            raise c.error(f"'{d.name}' has {d.regions} regions, not {n}", start)
        self.enter(c, "regions")
        try:
            for _ in range(n):
                region = Region([], op)
                bpos = c.pos
                nblocks = c.varint("block count")
                if nblocks > 1:
                    raise c.error(f"a region holds at most one block, not {nblocks}", bpos)
                for _ in range(nblocks):
                    block = Block(parent=region)
                    nargs = c.count("block argument count")
                    for _ in range(nargs):
                        block.add_argument(self.read_type(c))
                    mark = len(values)
                    values.extend(block.arguments)
                    nops = c.count("op count")
                    for _ in range(nops):
                        block.append(self.read_op(c, values))
                    del values[mark:]
                    region.blocks.append(block)
                op.regions.append(region)
        finally:
            self.depth["regions"] -= 1


def _dyn(values: tuple[int, ...]) -> tuple[int | None, ...]:
    return tuple(None if v == W.INT64_MIN else v for v in values)


def _dim_map(tile: tuple[int, ...], dim_map: tuple[int, ...]) -> tuple[int, ...] | None:
    """None for the identity map (the default, re-derived by the writer)."""
    return None if dim_map == tuple(range(len(tile))) else dim_map


def read_bytecode(data: bytes, filename: str) -> Module:
    """Decode a ``.tileirbc`` file; raises CompileError (with a byte offset) if malformed."""
    import sys

    # Nesting is bounded explicitly (MAX_NESTING, MAX_DEBUG_NESTING); the limit is raised
    # so that those bounds, not Python's default stack limit, decide.
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 20000))
    try:
        return _Reader(bytes(data), filename).read()
    except RecursionError:
        raise _Reader(b"", filename).error("bytecode nests too deeply", 0) from None
    finally:
        sys.setrecursionlimit(old_limit)
