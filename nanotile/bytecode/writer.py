"""Encode a nanotile Module as Tile IR bytecode, version 13.1, 13.2, 13.3 or 13.4.

The output follows cuTile 1.7.0's writer: sections in the order Func, [Global],
Constant, Debug, Type, [Producer], String, end; the same alignments and 0xCB padding;
and table entries (strings, types, constants, debug attributes) numbered in the order
cuTile interns them, which this writer re-derives by walking the module the way cuTile's
code generator does (per function: its debug scope, name, signature and hints, then each
op in pre-order: its location, result types, attributes, block arguments). A module read
from a cuTile file therefore re-encodes byte for byte.

IR that uses something newer than the target version (an op, a type, an attribute, an
optional operand, a result) is refused with a CompileError, as NVIDIA's writer does.
"""

from __future__ import annotations

from typing import Any

from ..diagnostics import CompileError, Diagnostic
from ..ir import attrs as A
from ..ir import types as T
from ..ir.core import Block, Module, Operation, Value
from ..ir.enums import SymbolVisibility
from ..ir.optable import AttrDef, OpDef, lookup
from . import wire as W
from .wire import pad_to, put_int_list, put_svarint, put_varint


class _Interner:
    """A de-duplicating table: encoded bytes -> id, in first-use order."""

    def __init__(self, first_id: int = 0) -> None:
        self.ids: dict[bytes, int] = {}
        self.first_id = first_id

    def __call__(self, item: bytes) -> int:
        i = self.ids.get(item)
        if i is None:
            i = self.ids[item] = len(self.ids) + self.first_id
        return i

    def items(self) -> list[bytes]:
        return list(self.ids)  # dicts keep insertion order = id order


def _table(items: list[bytes], width: int) -> bytearray:
    """varint N, padding to ``width``, N offsets of ``width`` bytes, then the items."""
    buf = bytearray()
    put_varint(buf, len(items))
    pad_to(buf, width)
    offset = 0
    for item in items:
        buf += offset.to_bytes(width, "little")
        offset += len(item)
    for item in items:
        buf += item
    return buf


def _full_name(op: Operation) -> str:
    d = lookup(op.name)
    return op.name if d is None else f"cuda_tile.{d.name}"


def _post_order(items: list[Operation]):
    """(op, its parent op, whether a reduce or scan encloses it) for ``items`` and every op
    nested in them, children before their parent (MLIR's walk), without recursion."""
    stack: list[tuple[Operation, Any, bool, bool]] = [
        (item, None, False, False) for item in reversed(items)]
    while stack:
        op, parent, inside, expanded = stack.pop()
        if expanded:
            yield op, parent, inside
            continue
        stack.append((op, parent, inside, True))
        d = lookup(op.name)
        enclosing = inside or (d is not None and d.name in ("reduce", "scan"))
        children = [c for r in op.regions for b in r.blocks for c in b.ops]
        stack.extend((c, op, enclosing, False) for c in reversed(children))


def _section(out: bytearray, sid: int, payload: bytes, alignment: int) -> None:
    out.append(sid | (0x80 if alignment > 1 else 0))
    put_varint(out, len(payload))
    if alignment > 1:
        put_varint(out, alignment)
        pad_to(out, alignment)
    out += payload


class _Writer:
    def __init__(self, version: W.Version, filename: str,
                 seed_types: tuple[T.Type, ...] = ()) -> None:
        self.version = version
        self.vtext = W.version_str(version)
        self.filename = filename
        self.strings = _Interner()
        self.types = _Interner()
        self.type_ids: dict[T.Type, int] = {}
        self.consts = _Interner()
        self.di = _Interner(first_id=1)
        self.di_ids: dict[Any, int] = {}
        self.used: set[int] = set()  # id() of every value used as an operand
        # i1 and i32 are always types 0 and 1 (cuTile registers them first).
        self.type_id(T.I1)
        self.type_id(T.I32)
        for t in seed_types:
            self.type_id(t)

    # ------------------------------------------------------------------ errors

    def fail(self, message: str, op: Operation | None = None) -> CompileError:
        src = op.source if op is not None else None
        if src is not None:
            return CompileError(Diagnostic("error", message, src.filename, src.line, src.column))
        return CompileError(Diagnostic("error", message, self.filename))

    def fail_in_module(self, message: str, op: Operation) -> CompileError:
        """An error at the module, with a remark at the offending op (as NVIDIA's tool)."""
        src = self.module.source if self.module is not None else None
        return self.fail_at(src, f"'cuda_tile.module' op {message}", op)

    def fail_at(self, src: Any, message: str, op: Operation) -> CompileError:
        """An error at ``src`` with cuda-tile's remark 'invalid op: NAME' at ``op``."""
        diag = Diagnostic("error", message, self.filename)
        if src is not None:
            diag = Diagnostic("error", message, src.filename, src.line, src.column)
        name = _full_name(op)
        if op.source is not None:
            diag.notes.append(Diagnostic("remark", f"invalid op: {name}", op.source.filename,
                                         op.source.line, op.source.column))
        else:
            diag.notes.append(Diagnostic("remark", f"invalid op: {name}", self.filename))
        return CompileError(diag)

    def check_self_contained(self, module: Module) -> None:
        """cuda-tile's writer checks, before it writes anything, that the module holds only
        functions and globals, then walks every op (children first, as MLIR walks): each
        must be of its dialect, and each inside a reduce or scan pure. The verifier already
        refuses what the walk finds in a verified module; the Python API may write one that
        was not verified."""
        for item in module.items:
            if item.name not in ("entry", "testing$func", "global"):
                raise self.fail_in_module("only function and global ops are allowed in the "
                                          "body", item)
        for op, parent, inside in _post_order(module.items):
            d = lookup(op.name)
            if d is None and not op.name.startswith("cuda_tile.") and "." in op.name:
                raise self.fail_in_module("only ops from the 'cuda_tile' dialect are allowed",
                                          op)
            if inside and not (d is not None and (d.is_pure or d.name == "yield")):
                # cuda-tile's yield is Pure; the op table marks no terminator so
                raise self.fail_at(parent.source, f"'{_full_name(parent)}' op only pure "
                                   "operations allowed", op)

    def needs(self, since: str | W.Version) -> bool:
        """True when the target version lacks something introduced in ``since``."""
        v = W.since(since) if isinstance(since, str) else since
        return self.version < v

    # ------------------------------------------------------------------ strings, types

    def string(self, s: str) -> int:
        return self.strings(s.encode("utf-8"))

    def type_id(self, t: T.Type, op: Operation | None = None) -> int:
        i = self.type_ids.get(t)
        if i is None:
            i = self.type_ids[t] = self.types(bytes(self.encode_type(t, op)))
        return i

    def type_version(self, name: str, since: W.Version, op: Operation | None) -> None:
        if self.version < since:
            pretty = W.TYPE_ERROR_NAMES.get(name, name)
            # Reported without a source position, as NVIDIA's writer does (types are
            # encoded in a table, not at the op that uses them).
            raise self.fail(f"type '{pretty}' requires bytecode version "
                            f"{W.version_str(since)}+, targeting {self.vtext}")

    def encode_type(self, t: T.Type, op: Operation | None) -> bytearray:
        buf = bytearray()
        v133 = self.version >= (13, 3)
        v134 = self.version >= (13, 4)
        if isinstance(t, T.ElementType):
            tag = W.TAG_OF_ELEMENT.get(t.name)
            if tag is None:
                raise self.fail(f"unsupported type in bytecode writer: {t}", op)
            self.type_version(t.name, W.since(t.since), op)
            put_varint(buf, tag)
        elif isinstance(t, T.TokenType):
            put_varint(buf, W.TAG_TOKEN)
        elif isinstance(t, T.PointerType):
            pointee = self.type_id(t.pointee, op)
            self.ptr_attr_version(t.ptr_attr, op)
            put_varint(buf, W.TAG_POINTER)
            if v134:
                put_varint(buf, int(t.ptr_attr is not None))
            put_varint(buf, pointee)
            if t.ptr_attr is not None:
                buf.append(t.ptr_attr)
        elif isinstance(t, T.TileType):
            if t.layout is not None:
                raise self.fail(f"type '{t}' carries a layout: layouts are below the tile "
                                "level and have no bytecode form", op)
            element = self.type_id(t.element, op)
            put_varint(buf, W.TAG_TILE)
            put_varint(buf, element)
            put_int_list(buf, t.shape, 8)
        elif isinstance(t, T.TensorViewType):
            element = self.type_id(t.element, op)
            self.ptr_attr_version(t.ptr_attr, op)
            put_varint(buf, W.TAG_TENSOR_VIEW)
            if v134:
                put_varint(buf, int(t.ptr_attr is not None))
            put_varint(buf, element)
            put_int_list(buf, [W.INT64_MIN if d is None else d for d in t.shape], 8)
            put_int_list(buf, [W.INT64_MIN if d is None else d for d in t.strides], 8)
            if t.ptr_attr is not None:
                buf.append(t.ptr_attr)
        elif isinstance(t, T.PartitionViewType):
            tv = self.type_id(t.tensor_view, op)
            put_varint(buf, W.TAG_PARTITION_VIEW)
            if v133:
                put_varint(buf, int(t.padding is not None))
            put_int_list(buf, t.tile_shape, 4)
            put_varint(buf, tv)
            put_int_list(buf, _dim_map(t.tile_shape, t.dim_map), 4)
            if not v133:
                put_varint(buf, int(t.padding is not None))
            if t.padding is not None:
                buf.append(t.padding.value)
        elif isinstance(t, T.StridedViewType):
            self.type_version("strided_view", (13, 3), op)
            tv = self.type_id(t.tensor_view, op)
            put_varint(buf, W.TAG_STRIDED_VIEW)
            put_varint(buf, int(t.padding is not None))
            put_int_list(buf, t.tile_shape, 4)
            put_int_list(buf, t.traversal_strides, 4)
            put_varint(buf, tv)
            put_int_list(buf, _dim_map(t.tile_shape, t.dim_map), 4)
            if t.padding is not None:
                buf.append(t.padding.value)
        elif isinstance(t, T.GatherScatterViewType):
            self.type_version("gather_scatter_view", (13, 3), op)
            tv = self.type_id(t.tensor_view, op)
            put_varint(buf, W.TAG_GATHER_SCATTER_VIEW)
            put_varint(buf, int(t.padding is not None))
            put_int_list(buf, t.tile_shape, 4)
            put_varint(buf, tv)
            put_varint(buf, t.sparse_dim)
            if t.padding is not None:
                buf.append(t.padding.value)
        elif isinstance(t, T.FunctionType):
            ins = [self.type_id(x, op) for x in t.inputs]
            outs = [self.type_id(x, op) for x in t.results]
            put_varint(buf, W.TAG_FUNCTION)
            for ids in (ins, outs):
                put_varint(buf, len(ids))
                for i in ids:
                    put_varint(buf, i)
        else:
            raise self.fail(f"unsupported type in bytecode writer: {t}", op)
        return buf

    def ptr_attr_version(self, ptr_attr: int | None, op: Operation | None) -> None:
        if ptr_attr is not None and self.version < (13, 4):
            raise self.fail(f"parameter 'ptrAttr' requires bytecode version 13.4+, "
                            f"but targeting {self.vtext}", op)

    # ------------------------------------------------------------------ constants

    def constant(self, value: Any, op: Operation | None) -> int:
        if not isinstance(value, A.DenseElementsAttr):
            raise self.fail("expected a dense constant value", op)
        t = value.type
        if isinstance(t, T.TileType) and isinstance(t.element, T.ElementType):
            width = W.storage_bytes(t.element)
            n = t.num_elements
            sizes = (1, (n + 7) // 8) if t.element.name == "i1" else (width, width * n)
            if len(value.data) not in sizes:
                raise self.fail(f"constant of {len(value.data)} bytes does not fit {t} "
                                f"({width} bytes per element)", op)
        buf = bytearray()
        put_varint(buf, len(value.data))
        buf += value.data
        return self.consts(bytes(buf))

    # ------------------------------------------------------------------ attributes

    def tagged(self, buf: bytearray, a: Any, op: Operation | None) -> None:
        """A self-contained (tagged) attribute.

        Plain Python values (as a hint dictionary may hold them) are taken as cuTile
        writes them: bool -> Bool, int -> i32 Integer, str -> String.
        """
        if isinstance(a, bool):
            a = A.BoolAttr(a)
        elif isinstance(a, int):
            a = A.IntegerAttr(a, T.I32)
        elif isinstance(a, str):
            a = A.StringAttr(a)
        if isinstance(a, A.IntegerAttr):
            t = a.type
            if not isinstance(t, T.ElementType) or t.is_float:
                raise self.fail(f"integer attribute of non-integer type {t}", op)
            tid = self.type_id(t, op)
            put_varint(buf, W.ATTR_INTEGER)
            put_varint(buf, tid)
            put_varint(buf, a.value & ((1 << t.bitwidth) - 1))
        elif isinstance(a, A.FloatAttr):
            tid = self.type_id(a.type, op)
            put_varint(buf, W.ATTR_FLOAT)
            put_varint(buf, tid)
            if W.value_bits(a.type) <= 8:
                buf.append(a.bits)
            else:
                put_svarint(buf, a.bits)
        elif isinstance(a, A.BoolAttr):
            put_varint(buf, W.ATTR_BOOL)
            buf.append(int(a.value))
        elif isinstance(a, A.TypeAttr):
            tid = self.type_id(a.value, op)
            put_varint(buf, W.ATTR_TYPE)
            put_varint(buf, tid)
        elif isinstance(a, A.StringAttr):
            sid = self.string(a.value)
            put_varint(buf, W.ATTR_STRING)
            put_varint(buf, sid)
        elif isinstance(a, A.ArrayAttr):
            put_varint(buf, W.ATTR_ARRAY)
            put_varint(buf, len(a.elements))
            for e in a.elements:
                self.tagged(buf, e, op)
        elif isinstance(a, A.DenseElementsAttr):
            tid = self.type_id(a.type, op)
            cid = self.constant(a, op)
            put_varint(buf, W.ATTR_DENSE)
            put_varint(buf, tid)
            put_varint(buf, cid)
        elif isinstance(a, A.DivByAttr):
            put_varint(buf, W.ATTR_DIV_BY)
            put_varint(buf, a.divisor)
            buf.append((a.every is not None) | (a.along is not None) << 1)
            if a.every is not None:
                put_svarint(buf, a.every)
            if a.along is not None:
                put_svarint(buf, a.along)
        elif isinstance(a, A.SameElementsAttr):
            put_varint(buf, W.ATTR_SAME_ELEMENTS)
            put_int_list(buf, a.values, 8)
        elif isinstance(a, A.DictAttr):
            put_varint(buf, W.ATTR_DICT)
            self.dict_body(buf, a.entries, op)
        elif isinstance(a, A.OptimizationHintsAttr):
            put_varint(buf, W.ATTR_HINTS)
            self.dict_body(buf, a.targets, op)
        elif isinstance(a, A.BoundedAttr):
            put_varint(buf, W.ATTR_BOUNDED)
            buf.append((a.lower is not None) | (a.upper is not None) << 1)
            if a.lower is not None:
                put_svarint(buf, a.lower)
            if a.upper is not None:
                put_svarint(buf, a.upper)
        else:
            raise self.fail(f"unsupported attribute in bytecode writer: {a!r}", op)

    def dict_body(self, buf: bytearray, entries: tuple, op: Operation | None) -> None:
        put_varint(buf, len(entries))
        for key, value in entries:
            put_varint(buf, self.string(key))
            self.tagged(buf, value, op)

    # ------------------------------------------------------------------ debug info

    def di_id(self, a: Any, op: Operation | None) -> int:
        """Id (1-based) of a debug attribute; its parts are interned first."""
        if a is None or isinstance(a, (A.UnknownLoc, A.FileLineColLoc)):
            return 0  # a plain or unknown location carries no debug info
        i = self.di_ids.get(a)
        if i is not None:
            return i
        buf = bytearray()
        if isinstance(a, A.DILocAttr):
            scope = self.di_id(a.scope, op)
            put_varint(buf, W.DI_LOC)
            put_varint(buf, scope)
            put_varint(buf, self.string(a.filename))
            put_varint(buf, a.line)
            put_varint(buf, a.column)
        elif isinstance(a, A.CallSiteLoc):
            callee = self.di_id(a.callee, op)
            caller = self.di_id(a.caller, op)
            put_varint(buf, W.DI_CALL_SITE)
            put_varint(buf, callee)
            put_varint(buf, caller)
        elif isinstance(a, A.DIFileAttr):
            put_varint(buf, W.DI_FILE)
            put_varint(buf, self.string(a.name))
            put_varint(buf, self.string(a.directory))
        elif isinstance(a, A.DICompileUnitAttr):
            file = self.di_id(a.file, op)
            put_varint(buf, W.DI_COMPILE_UNIT)
            put_varint(buf, file)
        elif isinstance(a, A.DILexicalBlockAttr):
            scope = self.di_id(a.scope, op)
            file = self.di_id(a.file, op)
            put_varint(buf, W.DI_LEXICAL_BLOCK)
            for x in (scope, file, a.line, a.column):
                put_varint(buf, x)
        elif isinstance(a, A.DISubprogramAttr):
            file = self.di_id(a.file, op)
            unit = self.di_id(a.compile_unit, op)
            put_varint(buf, W.DI_SUBPROGRAM)
            put_varint(buf, file)
            put_varint(buf, a.line)
            put_varint(buf, self.string(a.name))
            put_varint(buf, self.string(a.linkage_name))
            put_varint(buf, unit)
            put_varint(buf, a.scope_line)
        else:
            kind = type(a).__name__.removesuffix("Attr")
            raise self.fail(f"unsupported location, got {kind}, expected DILocAttr or "
                            f"CallSiteLoc", op)
        i = self.di_ids[a] = self.di(bytes(buf))
        return i

    # ------------------------------------------------------------------ module

    module: Module | None = None

    def write(self, module: Module) -> bytes:
        self.module = module
        self.check_self_contained(module)
        entries = [item for item in module.items if item.name != "global"]
        globals_ = [item for item in module.items if item.name == "global"]
        for item in entries:
            for op in item.walk():
                self.used.update(id(v) for v in op.operands)
        func = bytearray()
        put_varint(func, len(entries))
        debug_slots = [self.function(func, e) for e in entries]
        glob = self.global_section(globals_) if globals_ else None

        out = bytearray(W.MAGIC)
        out += bytes([self.version[0], self.version[1], 0, 0])
        _section(out, W.SEC_FUNC, func, 8)
        if glob is not None:
            _section(out, W.SEC_GLOBAL, glob, 1)
        _section(out, W.SEC_CONSTANT, _table(self.consts.items(), 8), 8)
        _section(out, W.SEC_DEBUG, self.debug_section(debug_slots), 8)
        _section(out, W.SEC_TYPE, _table(self.types.items(), 4), 4)
        producer = _producer(module)
        if producer is not None and self.version >= (13, 3):  # older versions drop it
            payload = bytearray()
            put_varint(payload, self.string(producer))
            _section(out, W.SEC_PRODUCER, payload, 1)
        _section(out, W.SEC_STRING, _table(self.strings.items(), 4), 4)
        out.append(W.SEC_END)
        return bytes(out)

    def global_section(self, globals_: list[Operation]) -> bytearray:
        buf = bytearray()
        put_varint(buf, len(globals_))
        seen: set[str] = set()
        for g in globals_:
            name = g.attributes.get("sym_name")
            value = g.attributes.get("value")
            if not isinstance(name, str) or not isinstance(value, A.DenseElementsAttr):
                raise self.fail("a global needs a name and a dense value", g)
            if name in seen:
                raise self.fail(f"global `{name}` has already been defined", g)
            seen.add(name)
            vis = g.attributes.get("symbol_visibility", SymbolVisibility.public)
            const = bool(g.attributes.get("constant", False))
            if self.version < (13, 3):
                if const:
                    raise self.fail(f"constant global `{name}` cannot be encoded in bytecode "
                                    f"version {self.vtext} (the `constant` attribute requires "
                                    f"bytecode 13.3+)", g)
                if vis != SymbolVisibility.public:
                    raise self.fail(f"global `{name}` uses non-public symbol visibility, which "
                                    f"cannot be encoded in bytecode version {self.vtext} "
                                    f"(requires bytecode 13.3+)", g)
            put_varint(buf, self.string(name))
            put_varint(buf, self.type_id(value.type, g))
            put_varint(buf, self.constant(value, g))
            put_varint(buf, int(g.attributes.get("alignment", 0)))
            if self.version >= (13, 3):
                buf.append(vis.value)
                put_varint(buf, int(const))
        return buf

    def debug_section(self, slots: list[list[int]]) -> bytearray:
        buf = bytearray()
        put_varint(buf, len(slots))
        pad_to(buf, 4)
        start = 0
        for s in slots:
            buf += start.to_bytes(4, "little")
            start += len(s)
        put_varint(buf, start)
        pad_to(buf, 8)
        for s in slots:
            for ref in s:
                buf += ref.to_bytes(8, "little")
        items = self.di.items() or [b"\x00"]  # cuTile's placeholder for an empty table
        table = _table(items, 4)
        # The table's index is aligned relative to the section start, like the rest.
        head = bytearray()
        put_varint(head, len(items))
        buf += head
        pad_to(buf, 4)
        buf += table[len(head) + (-len(head) % 4):]
        return buf

    # ------------------------------------------------------------------ functions, ops

    def function(self, out: bytearray, entry: Operation) -> list[int]:
        attrs = entry.attributes
        name, sig = attrs.get("sym_name"), attrs.get("function_type")
        if not isinstance(name, str) or not isinstance(sig, T.FunctionType):
            raise self.fail("an entry needs a name and a function type", entry)
        if not entry.regions or not entry.regions[0].blocks:
            raise self.fail(f"entry '{name}' has no body", entry)
        slots = [self.di_id(entry.location, entry)]
        put_varint(out, self.string(name))
        put_varint(out, self.type_id(sig, entry))
        hints = attrs.get("optimization_hints")
        if entry.name == "testing$func":  # a non-entry function: flags 0, no hints
            if hints is not None:
                raise self.fail("a testing$func cannot carry optimization hints", entry)
            out.append(0)
        else:
            out.append(W.FUNC_ENTRY | (W.FUNC_HAS_HINTS if hints is not None else 0))
        put_varint(out, self.slot_number)
        self.slot_number += 1
        if hints is not None:
            self.tagged(out, hints, entry)
        for key in ("arg_attrs", "res_attrs"):
            if attrs.get(key):
                raise self.fail(f"'{key}' of entry '{name}' cannot be encoded in bytecode",
                                entry)
        block = entry.regions[0].blocks[0]
        ids: dict[int, int] = {}
        for k, arg in enumerate(block.arguments):
            ids[id(arg)] = k
        body = bytearray()
        self.next_id = len(block.arguments)
        for op in block.ops:
            self.op(body, op, ids, slots)
        put_varint(out, len(body))
        out += body
        return slots

    slot_number = 1

    def op(self, buf: bytearray, op: Operation, ids: dict[int, int], slots: list[int]) -> None:
        d = lookup(op.name)
        if d is None:  # a cuda_tile op that the op table lacks (built through the API)
            raise self.fail("operation not supported in bytecode (missing from "
                            "BytecodeOpcodes.td)", op)
        if d.internal:
            raise self.fail(f"operation '{d.name}' is internal to nanotile (below the tile "
                            "level) and has no bytecode form", op)
        if d.name in ("entry", "global", "module"):
            raise self.fail(f"operation 'cuda_tile.{d.name}' cannot be encoded in a function "
                            "body", op)
        if self.needs(d.since):
            raise self.fail(f"operation 'cuda_tile.{d.name}' is not available in bytecode "
                            f"version {self.vtext}", op)
        slots.append(self.di_id(op.location, op))
        put_varint(buf, d.opcode)
        results = self.results(buf, d, op)
        groups = self.groups(d, op)
        flags = self.flags(buf, d, op, groups)
        for a in d.attrs:
            self.attribute(buf, d, a, op, flags, groups)
        self.operands(buf, d, op, groups, ids)
        if d.regions:
            self.regions(buf, d, op, ids, slots)
        for r in results:
            ids[id(r)] = self.next_id
            self.next_id += 1

    def results(self, buf: bytearray, d: OpDef, op: Operation) -> list[Value]:
        """Write the result types; returns the results that are serialized."""
        kept = list(op.results)
        fixed = not any(r.variadic for r in d.results)
        if fixed and len(op.results) != len(d.results):
            raise self.fail(f"'{d.name}' must have {len(d.results)} results, "
                            f"not {len(op.results)}", op)
        if fixed:
            kept = []
            for r, v in zip(d.results, op.results):
                if self.needs(r.since):
                    if id(v) in self.used:
                        raise self.fail(f"result '{r.name}' requires bytecode version "
                                        f"{r.since} but is being used and targeting "
                                        f"{self.vtext}", op)
                    continue
                kept.append(v)
        tids = [self.type_id(v.type, op) for v in kept]
        if d.counted_results:
            put_varint(buf, len(tids))
        for t in tids:
            put_varint(buf, t)
        return kept

    def groups(self, d: OpDef, op: Operation) -> dict[str, list[Value]]:
        """The op's operands by operand-group name."""
        if op.operand_segments is not None:
            sizes = list(op.operand_segments)
        else:
            fixed = sum(1 for o in d.operands if o.kind == "single")
            flexible = [o for o in d.operands if o.kind != "single"]
            if len(flexible) > 1:
                raise self.fail(f"'{d.name}' needs operand segment sizes", op)
            rest = len(op.operands) - fixed
            sizes = [1 if o.kind == "single" else rest for o in d.operands]
        if len(sizes) != len(d.operands) or sum(sizes) != len(op.operands) or any(
                n != 1 for o, n in zip(d.operands, sizes) if o.kind == "single") or any(
                n > 1 for o, n in zip(d.operands, sizes) if o.kind == "optional"):
            raise self.fail(f"operands of '{d.name}' do not match its operand groups", op)
        out, start = {}, 0
        for o, n in zip(d.operands, sizes):
            out[o.name] = op.operands[start:start + n]
            start += n
        return out

    def present(self, name: str, op: Operation, groups: dict[str, list[Value]]) -> bool:
        if name in groups:
            return bool(groups[name])
        value = op.attributes.get(name)
        return value is not None and value is not False

    def flags(self, buf: bytearray, d: OpDef, op: Operation,
              groups: dict[str, list[Value]]) -> dict[str, bool]:
        bits, written, out = 0, False, {}
        for i, (name, since) in enumerate(d.flags):
            on = self.present(name, op, groups)
            out[name] = on
            if self.needs(since):
                if on:
                    kind = "operand" if name in groups else "attribute"
                    raise self.fail(f"optional {kind} '{name}' is provided but requires "
                                    f"bytecode version {since}, targeting {self.vtext}", op)
                continue
            written = True
            bits |= int(on) << i
        if written:
            put_varint(buf, bits)
        return out

    def attribute(self, buf: bytearray, d: OpDef, a: AttrDef, op: Operation,
                  flags: dict[str, bool], groups: dict[str, list[Value]]) -> None:
        value = op.attributes.get(a.name)
        if self.needs(a.since):
            if value is not None and value is not False and value != a.default and not (
                    a.kind == "bool_array" and not any(value)):
                raise self.fail(f"attribute '{a.name}' requires bytecode version {a.since}+, "
                                f"but targeting {self.vtext}", op)
            return
        if a.kind == "unit" or (a.name in flags and not flags[a.name]):
            return
        if value is None:
            if a.kind == "bool_array":  # cuTile writes all-false, one per index
                value = (False,) * len(groups.get("index", ()))
            elif a.default is not None:
                value = a.default
            else:
                raise self.fail(f"'{d.name}' is missing its attribute '{a.name}'", op)
        self.attr_value(buf, d, a, value, op)

    def attr_value(self, buf: bytearray, d: OpDef, a: AttrDef, value: Any,
                   op: Operation) -> None:
        kind = a.kind
        try:
            if kind == "enum":
                if not isinstance(value, a.enum):  # type: ignore[arg-type]
                    raise TypeError
                buf.append(value.value)
            elif kind == "bool":
                buf.append(int(bool(value)))
            elif kind == "int":
                put_varint(buf, int(value))
            elif kind in ("string", "symbol"):
                put_varint(buf, self.string(value))
            elif kind == "type":
                put_varint(buf, self.type_id(value, op))
            elif kind == "dense":
                put_varint(buf, self.constant(value, op))
            elif kind == "i32_array":
                put_int_list(buf, tuple(value), 4)
            elif kind == "bool_array":
                put_int_list(buf, [int(bool(x)) for x in value], 1)
            elif kind == "attr":
                self.tagged(buf, value, op)
            elif kind == "attr_array":
                elements = value.elements if isinstance(value, A.ArrayAttr) else tuple(value)
                put_varint(buf, len(elements))
                for e in elements:
                    self.tagged(buf, e, op)
            elif kind == "hints":
                if not isinstance(value, A.OptimizationHintsAttr):
                    raise TypeError
                self.dict_body(buf, value.targets, op)
            else:
                raise TypeError
        except (TypeError, ValueError, OverflowError, AttributeError):
            raise self.fail(f"invalid value for attribute '{a.name}' of '{d.name}': "
                            f"{value!r}", op) from None

    def operand_id(self, v: Value, ids: dict[int, int], op: Operation) -> int:
        i = ids.get(id(v))
        if i is None:
            raise self.fail(f"an operand of '{op.name}' is not defined before its use", op)
        return i

    def operands(self, buf: bytearray, d: OpDef, op: Operation,
                 groups: dict[str, list[Value]], ids: dict[int, int]) -> None:
        active = []
        for o in d.operands:
            if self.needs(o.since):
                if groups[o.name]:
                    raise self.fail(f"optional operand '{o.name}' is provided but requires "
                                    f"bytecode version {o.since}, targeting {self.vtext}", op)
                continue
            active.append(o)
        if d.operand_count == "total":
            values = [v for o in active for v in groups[o.name]]
            put_varint(buf, len(values))
            for v in values:
                put_varint(buf, self.operand_id(v, ids, op))
            return
        for o in active:
            values = groups[o.name]
            if o.kind == "variadic":
                put_varint(buf, len(values))
            for v in values:
                put_varint(buf, self.operand_id(v, ids, op))

    region_depth = 1  # a function's body is the first region

    def regions(self, buf: bytearray, d: OpDef, op: Operation, ids: dict[int, int],
                slots: list[int]) -> None:
        if len(op.regions) != d.regions:
            raise self.fail(f"'{d.name}' must have {d.regions} regions", op)
        if self.region_depth >= W.MAX_NESTING:  # what the reader and text parser refuse
            raise self.fail(f"regions nested too deeply (limit {W.MAX_NESTING})", op)
        put_varint(buf, len(op.regions))
        self.region_depth += 1
        try:
            for region in op.regions:
                put_varint(buf, len(region.blocks))
                for block in region.blocks:
                    self.block(buf, block, ids, slots)
        finally:
            self.region_depth -= 1

    def block(self, buf: bytearray, block: Block, ids: dict[int, int],
              slots: list[int]) -> None:
        put_varint(buf, len(block.arguments))
        for arg in block.arguments:
            put_varint(buf, self.type_id(arg.type))
        saved = self.next_id
        for arg in block.arguments:
            ids[id(arg)] = self.next_id
            self.next_id += 1
        put_varint(buf, len(block.ops))
        for op in block.ops:
            self.op(buf, op, ids, slots)
        # Values defined in the block go out of scope with it.
        for arg in block.arguments:
            ids.pop(id(arg), None)
        for op in block.ops:
            for r in op.results:
                ids.pop(id(r), None)
        self.next_id = saved


def _producer(module: Module) -> str | None:
    """The module's producer string (Module.producer, or a `producer` module attribute)."""
    if module.producer is not None:
        return module.producer
    value = module.attributes.get("producer")
    if isinstance(value, A.StringAttr):
        return value.value
    return value if isinstance(value, str) else None


def _dim_map(tile: tuple[int, ...], dim_map: tuple[int, ...] | None) -> tuple[int, ...]:
    return tuple(range(len(tile))) if dim_map is None else dim_map


def write_bytecode(module: Module, version: tuple[int, int] = W.LATEST,
                   filename: str = "<module>") -> bytes:
    """Encode ``module`` for bytecode ``version``; raises CompileError if it cannot."""
    version = (int(version[0]), int(version[1]))
    if not W.is_known_version(version):
        # cuda-tile's writeHeader, at the module
        first, last = W.SUPPORTED_VERSIONS[0], W.SUPPORTED_VERSIONS[-1]
        message = (f"unsupported version requested {W.version_str(version)}, must be in "
                   f"range [{W.version_str(first)}, {W.version_str(last)}]")
        src = module.source
        if src is None:
            raise CompileError(Diagnostic("error", message, filename))
        raise CompileError(Diagnostic("error", message, src.filename, src.line, src.column))
    try:
        return _write(module, version, filename)
    except (ValueError, OverflowError, TypeError) as e:
        # A number the wire format cannot hold, or a malformed IR value (a list where the
        # IR holds tuples): an error for the user, not a traceback.
        raise CompileError(Diagnostic("error", f"cannot encode the module in bytecode: {e}",
                                      filename)) from None


def _write(module: Module, version: W.Version, filename: str) -> bytes:
    first = _Writer(version, filename)
    data = first.write(module)
    recorded = module.bytecode_types
    if not recorded:
        return data
    # The module was read from bytecode: number its types in the file's order (cuTile
    # sometimes registers a type before its first use), keeping only types still used.
    used = first.type_ids
    seed = tuple(t for t in recorded if t in used)
    order = sorted(used, key=used.__getitem__)
    expected = list(dict.fromkeys([T.I1, T.I32, *seed, *order]))
    if order == expected:
        return data
    return _Writer(version, filename, seed).write(module)
