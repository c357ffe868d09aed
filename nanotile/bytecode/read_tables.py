"""The tables of a Tile IR bytecode file, read as cuda-tile's reader reads them: strings,
types, constants, debug info, and the attributes that ops and functions hold.

Part of the bytecode reader (reader.py describes its errors): every failure raises a
wire.ReadFailure carrying cuda-tile's messages; a type, constant or debug attribute is
decoded when first used, as in cuda-tile, and then kept.
"""

from __future__ import annotations

import struct
from typing import Any

from ..ir import attrs as A
from ..ir import types as T
from ..ir import type_rules as TV
from . import wire as W
from .wire import DETAIL, Cursor, ReadFailure

_INT64_EDGES = (2**63 - 1, -2**63)
_TYPED_ATTRS = (A.IntegerAttr, A.FloatAttr, A.BoolAttr, A.StringAttr, A.DenseElementsAttr)
PREDICATES = (A.DivByAttr, A.SameElementsAttr, A.BoundedAttr)
_LOCATIONS = (A.DILocAttr, A.CallSiteLoc, A.UnknownLoc)
_SCOPES = (A.DISubprogramAttr, A.DILexicalBlockAttr)
_UNITS = (A.DICompileUnitAttr,)
_UNKNOWN = A.UnknownLoc()


class TableReader:
    """Reads the tables; reader._Reader adds the file structure, functions and ops."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.version: W.Version = (0, 0)
        self.string_offsets: tuple[int, ...] = ()
        self.string_blob = self.string_size = 0
        self.strings: dict[int, str] = {}
        self.type_offsets: tuple[int, ...] = ()
        self.type_blob = self.type_size = 0
        self.types: dict[int, T.Type] = {}
        self.types_in_progress: set[int] = set()
        self.constants: list[tuple[int, int]] = []
        self.dense_cache: dict[tuple[int, T.Type], A.DenseElementsAttr] = {}
        self.di_slots: tuple[int, ...] = ()  # per function: its start in di_refs
        self.di_refs: tuple[int, ...] = ()
        self.di_offsets: tuple[int, ...] = ()
        self.di_blob = self.di_size = 0
        self.di_attrs: dict[int, Any] = {}
        self.di_in_progress: set[int] = set()
        self.loc_start: int | None = None  # where the function being read takes locations
        self.loc_next = 0
        # regions in regions (a function's body is the first) and attributes in
        # attributes, each at most W.MAX_NESTING deep, as the text parser and the writer
        self.depth = {"regions": 0, "attributes": 0}
        # The first check of nanotile's own that failed: reported only if cuda-tile's
        # reader finds nothing wrong first (reading goes on as cuda-tile's would).
        self.refused: ReadFailure | None = None

    def refuse(self, cur: Cursor, message: str) -> None:
        """A check only nanotile makes failed here; reading goes on."""
        if self.refused is None:
            self.refused = cur.own(message)

    def index_table(self, cur: Cursor, n: int, what: str) -> tuple[int, ...]:
        """The string or type table's count check and its 4-byte offsets."""
        fit = cur.remaining // 4
        if n > fit:
            raise cur.fail(f"number of {what} ({n}) exceeds the maximum of {fit} that can "
                           f"fit in the remaining payload of {cur.remaining} bytes.")
        cur.skip_padding(4)
        return _u32s(cur, n, f"the {what} offsets")

    # ---------------------------------------------------------------- strings

    def read_strings(self, cur: Cursor) -> None:
        n = cur.varint()
        if n:
            self.string_offsets = self.index_table(cur, n, "strings")
            self.string_blob, self.string_size = cur.pos, cur.remaining

    def read_producer(self, cur: Cursor) -> str:
        try:
            idx = cur.varint()
        except ReadFailure as e:
            raise e.then("failed to read producer string index", cur) from None
        try:
            return self.string(idx, cur)
        except ReadFailure as e:
            raise e.then(f"failed to get producer string at index {idx}", cur) from None

    def string(self, idx: int, cur: Cursor) -> str:
        s = self.strings.get(idx)
        if s is not None:
            return s
        offsets = self.string_offsets
        if idx >= len(offsets):
            raise cur.fail(f"string index {idx} out of bounds", located=False)
        # As cuda-tile's StringRef::substr: no offset is checked, the slice is clamped.
        size = self.string_size
        start = min(offsets[idx], size)
        end = offsets[idx + 1] if idx + 1 < len(offsets) else size
        length = min((end - offsets[idx]) & 0xFFFFFFFF, size - start)
        raw = self.data[self.string_blob + start:self.string_blob + start + length]
        try:
            s = raw.decode("utf-8")
        except UnicodeDecodeError:
            self.refuse(cur, f"string {idx} is not valid UTF-8")
            s = raw.decode("utf-8", errors="replace")
        self.strings[idx] = s
        return s

    def read_string(self, cur: Cursor) -> str:
        return self.string(cur.varint(), cur)

    # ---------------------------------------------------------------- types

    def read_type_section(self, cur: Cursor) -> None:
        n = cur.varint()
        if n:
            self.type_offsets = self.index_table(cur, n, "types")
            self.type_blob, self.type_size = cur.pos, cur.remaining

    def read_type(self, cur: Cursor) -> T.Type:
        """A type id, then the type (cuda-tile's readAndGetType)."""
        idx = cur.varint()
        t = self.types.get(idx)
        return t if t is not None else self.type_at(idx, cur)

    def type_at(self, idx: int, cur: Cursor) -> T.Type:
        """Type ``idx`` of the table, decoded once (cuda-tile's getType: its failures are
        silent, nanotile's notes say why)."""
        t = self.types.get(idx)
        if t is not None:
            return t
        offsets = self.type_offsets
        if idx >= len(offsets):
            raise ReadFailure(f"type id {idx} is out of range (the type table has "
                              f"{len(offsets)} entries)", cur, DETAIL)
        if idx in self.types_in_progress:
            raise ReadFailure(f"type {idx} refers to itself", cur, DETAIL)
        if len(self.types_in_progress) > W.MAX_NESTING:
            raise cur.own(f"types nested too deeply (limit {W.MAX_NESTING})")
        start = offsets[idx]
        end = offsets[idx + 1] if idx + 1 < len(offsets) else self.type_size
        if end < start or end > self.type_size:
            raise ReadFailure(f"type table entry {idx} has invalid offsets", cur, DETAIL)
        entry = Cursor(self.data, self.type_blob + start, self.type_blob + end,
                       f"type table entry {idx}")
        tag = entry.varint() & 0xFF
        self.types_in_progress.add(idx)
        try:
            t = self.decode_type(tag, Cursor(self.data, entry.pos, entry.end, entry.what))
        finally:
            self.types_in_progress.discard(idx)
        self.types[idx] = t
        return t

    def table_types(self, main: Cursor) -> list[T.Type]:
        """The table's types in order; entries that nothing uses and that do not decode
        are left out (cuda-tile never decodes them)."""
        out = []
        for k in range(len(self.type_offsets)):
            try:
                out.append(self.type_at(k, main))
            except ReadFailure:
                pass
        return out

    def sub_type(self, c: Cursor, name: str) -> T.Type:
        try:
            return self.read_type(c)
        except ReadFailure as e:
            raise e.then(f"failed to get {name} type", c) from None

    def tensor_view(self, c: Cursor) -> T.TensorViewType:
        tv = self.sub_type(c, "tensor_view")
        if not isinstance(tv, T.TensorViewType):
            raise c.fail(f"expected ::mlir::cuda_tile::TensorViewType but got {quoted(tv)}")
        return tv

    def i32s(self, c: Cursor, name: str, suffix: str = " data") -> tuple[int, ...]:
        """A type's list of i32 (``suffix``: " data" for a DenseI32ArrayAttr parameter,
        "" for an ArrayRef<int32_t> one, as the generated readers say)."""
        try:
            return c.le_list(4)
        except ReadFailure as e:
            raise e.then(f"failed to read {name}{suffix}", c) from None

    def optional_flags(self, c: Cursor) -> int:
        try:
            return c.varint()
        except ReadFailure as e:
            raise e.then("failed to read optional parameter flags", c) from None

    def padding(self, c: Cursor, flags: int | None) -> T.PaddingValue | None:
        """A view's optional padding value: announced by ``flags`` bit 0 (13.3+) or, in
        older files (``flags`` None), by a byte (cut off = absent, as in cuda-tile)."""
        if flags is None:
            present = c.byte() if c.pos < c.end else 0
        else:
            present = flags & 1
        return self.enum_value(c, T.PaddingValue) if present else None

    def decode_type(self, tag: int, c: Cursor) -> T.Type:
        """A type table entry's payload (after its tag), as cuda-tile's generated
        readers decode it; a type they would build is then checked as getChecked
        does (nanotile.ir.type_rules), the message at the end of the payload."""
        et = W.ELEMENT_TAGS.get(tag)
        if et is not None:
            self.check_type_version(et.name, W.since(et.since), c)
            return et
        v134 = self.version >= (13, 4)
        v133 = self.version >= (13, 3)
        if tag == W.TAG_TOKEN:
            return T.TOKEN
        if tag == W.TAG_POINTER:
            flags = self.type_flags(c) if v134 else 0
            pointee = self.sub_type(c, "pointeeType")
            attr = self.pointer_attr(c) if flags & 1 else None
            return self.checked(c, T.PointerType(pointee, attr), TV.check_pointer_type(pointee))
        if tag == W.TAG_TILE:
            element = self.sub_type(c, "elementType")
            try:
                shape = c.le_list(8)
            except ReadFailure as e:
                raise e.then("failed to read shape", c) from None
            msg = TV.check_tile_type(shape, element)
            return self.checked(c, None if msg else T.TileType(shape, element), msg)
        if tag == W.TAG_TENSOR_VIEW:
            flags = self.type_flags(c) if v134 else 0
            element = self.sub_type(c, "elementType")
            shape = _dyn(self.i64s(c, "shape"))
            strides = _dyn(self.i64s(c, "strides"))
            attr = self.pointer_attr(c) if flags & 1 else None
            msg = TV.check_tensor_view_type(element, shape, strides)
            return self.checked(c, None if msg else T.TensorViewType(element, shape, strides,
                                                                     attr), msg)
        if tag == W.TAG_PARTITION_VIEW:
            flags = self.optional_flags(c) if v133 else None
            tile = self.i32s(c, "tile_shape")
            tv = self.tensor_view(c)
            dim_map = self.i32s(c, "dim_map", "")
            pad = self.padding(c, flags)
            msg = TV.check_partition_view_type(tile, tv, dim_map, pad)
            return self.checked(c, None if msg else T.PartitionViewType(
                tile, tv, _dim_map(tile, dim_map), pad), msg)
        if tag == W.TAG_STRIDED_VIEW:
            self.check_type_version("strided_view", (13, 3), c)
            flags = self.optional_flags(c)
            tile = self.i32s(c, "tile_shape")
            strides = self.i32s(c, "traversal_strides")
            tv = self.tensor_view(c)
            dim_map = self.i32s(c, "dim_map", "")
            pad = self.padding(c, flags)
            msg = TV.check_strided_view_type(tile, strides, tv, dim_map, pad)
            return self.checked(c, None if msg else T.StridedViewType(
                tile, strides, tv, _dim_map(tile, dim_map), pad), msg)
        if tag == W.TAG_GATHER_SCATTER_VIEW:
            self.check_type_version("gather_scatter_view", (13, 3), c)
            flags = self.optional_flags(c)
            tile = self.i32s(c, "tile_shape")
            tv = self.tensor_view(c)
            try:
                sparse = c.varint()
            except ReadFailure as e:
                raise e.then("failed to read sparse_dim", c) from None
            if sparse > 0xFFFFFFFF:
                raise c.fail(f"sparse_dim value {sparse} exceeds uint32_t range")
            pad = self.padding(c, flags)
            msg = TV.check_gather_scatter_view_type(tile, tv, sparse, pad)
            return self.checked(c, None if msg else T.GatherScatterViewType(
                tile, tv, sparse, pad), msg)
        if tag == W.TAG_FUNCTION:
            return self.function_type(c)
        raise c.fail(f"unknown type tag: {tag}", located=False)

    def i64s(self, c: Cursor, name: str) -> tuple[int, ...]:
        try:
            return c.le_list(8)
        except ReadFailure as e:
            raise e.then(f"failed to read {name}", c) from None

    def checked(self, c: Cursor, t: T.Type | None, msg: str | None) -> T.Type:
        if msg:
            raise c.fail(msg)
        assert t is not None
        return t

    def function_type(self, c: Cursor) -> T.FunctionType:
        parts: list[list[T.Type]] = [[], []]
        for k, (count_msg, item_msg) in enumerate((
                ("failed to read number of parameters", "failed to get parameter type"),
                ("failed to read number of results", "failed to get result type"))):
            try:
                n = c.varint(limited=True)
            except ReadFailure as e:
                raise e.then(count_msg, c) from None
            try:
                for _ in range(n):
                    parts[k].append(self.read_type(c))
            except ReadFailure as e:
                raise e.then(item_msg, c) from None
        return T.FunctionType(tuple(parts[0]), tuple(parts[1]))

    def check_type_version(self, name: str, since: W.Version, c: Cursor) -> None:
        if self.version < since:
            pretty = W.TYPE_ERROR_NAMES.get(name, name)
            raise c.fail(f"type '{pretty}' requires bytecode version {W.version_str(since)}+, "
                         f"file version is {W.version_str(self.version)}", located=False)

    def type_flags(self, c: Cursor) -> int:
        """13.4's flags of pointer and tensor_view types (bit 0: a pointer attribute)."""
        return self.optional_flags(c)

    def pointer_attr(self, c: Cursor) -> int:
        """13.4's pointer attribute (an enum; nanotile keeps its byte)."""
        try:
            return c.byte()
        except ReadFailure as e:
            raise e.then("failed to read VarInt for enum attribute.", c) from None

    # ---------------------------------------------------------------- constants

    def read_constant_section(self, cur: Cursor) -> None:
        n = cur.varint(limited=True)
        if not n:
            return
        cur.skip_padding(8)
        if cur.remaining // 8 < n:
            raise cur.fail("insufficient data for constant indices")
        starts = struct.unpack_from(f"<{n}Q", self.data, cur.pos)
        cur.pos += 8 * n
        size = cur.remaining
        for i, start in enumerate(starts):
            end = starts[i + 1] if i + 1 < n else size
            if end < start:
                raise cur.fail(f"invalid constant start indices: end ({end}) is less than "
                               f"start ({start}) for constant {i}")
            if end > size:
                raise cur.fail(f"constant {i} extends beyond available data: size="
                               f"{end - start}, start={start}, total data size={size}")
            self.constants.append((cur.pos + start, cur.pos + end))

    def constant_index(self, c: Cursor, t: T.Type | None) -> A.DenseElementsAttr:
        try:
            idx = c.varint()
        except ReadFailure as e:
            raise e.then("failed to read constant index", c) from None
        if idx >= len(self.constants):
            raise c.fail(f"constant index {idx} out of bounds")
        return self.dense(idx, t)

    def dense(self, idx: int, t: T.Type | None,
              why: ReadFailure | None = None) -> A.DenseElementsAttr:
        """Constant ``idx`` as a value of type ``t`` (None: the type did not decode, for
        the reason ``why``)."""
        if t is not None:
            cached = self.dense_cache.get((idx, t))
            if cached is not None:
                return cached
        start, end = self.constants[idx]
        c = Cursor(self.data, start, end, f"constant {idx}")
        if t is None:
            if why is None:
                raise c.fail("provided type is null")
            raise why.then("provided type is null", c)
        if not isinstance(t, T.TileType) or not isinstance(t.element, T.ElementType):
            shown = quoted(t) if isinstance(t, T.TileType) else "'<<NULL TYPE>>'"
            raise c.fail(f"expect Cuda Tile integer or float type but got: {shown}")
        try:
            n = c.varint()
        except ReadFailure as e:
            raise e.then("failed to read the size of the data buffer", c) from None
        try:
            data = c.raw(n)
        except ReadFailure as e:
            raise e.then("failed to read the raw byte data", c) from None
        value = _dense_value(data, t)
        if value is None:
            raise c.fail("failed to validate buffer size and format")
        self.dense_cache[(idx, t)] = value
        return value

    # ---------------------------------------------------------------- attributes

    def enter(self, cur: Cursor, what: str) -> None:
        self.depth[what] += 1
        if self.depth[what] > W.MAX_NESTING:
            raise cur.own(f"{what} nested too deeply (limit {W.MAX_NESTING})")

    def enum_value(self, c: Cursor, enum: Any) -> Any:
        try:
            raw = c.varint() & 0xFFFFFFFF
        except ReadFailure as e:
            raise e.then("failed to read VarInt for enum attribute.", c) from None
        try:
            return enum(raw)
        except ValueError:
            raise c.fail(f"invalid integer value for enum type: {raw}") from None

    def inline_bool(self, c: Cursor) -> bool:
        try:
            return c.byte() != 0
        except ReadFailure as e:
            raise e.then("failed to read byte for inline bool (i1)", c) from None

    def inline_int(self, c: Cursor, width: int) -> int:
        try:
            value = c.varint()
        except ReadFailure as e:
            raise e.then(f"failed to read VarInt for inline integer (width={width})",
                         c) from None
        if value >> width:
            raise c.fail(f"value {value} does not fit in {width} bits")
        return value

    def tagged_attr(self, cur: Cursor) -> Any:
        """A self-contained attribute: a tag, then the attribute."""
        try:
            tag = cur.varint()
        except ReadFailure as e:
            raise e.then("failed to read AttributeTag for self-contained attribute.",
                         cur) from None
        self.enter(cur, "attributes")
        try:
            return self.decode_attr(tag, cur)
        finally:
            self.depth["attributes"] -= 1

    def decode_attr(self, full_tag: int, c: Cursor) -> Any:
        tag = full_tag & 0xFF  # cuda-tile's AttributeTag is a byte
        if tag == W.ATTR_INTEGER:
            t = self.attr_type(c, "failed to read valid IntegerType for IntegerAttr")
            if not isinstance(t, T.ElementType) or t.is_float:
                raise c.fail("failed to read valid IntegerType for IntegerAttr")
            if t.bitwidth == 1:
                return A.IntegerAttr(int(self.inline_bool(c)), t)
            value = self.inline_int(c, t.bitwidth)
            if value >> (t.bitwidth - 1):
                value -= 1 << t.bitwidth
            return A.IntegerAttr(value, t)
        if tag == W.ATTR_FLOAT:
            t = self.attr_type(c, "failed to read valid FloatType for FloatAttr")
            if not isinstance(t, T.ElementType) or not t.is_float:
                raise c.fail("failed to read valid FloatType for FloatAttr")
            return A.FloatAttr(self.float_bits(c, W.value_bits(t)), t)
        if tag == W.ATTR_BOOL:
            return A.BoolAttr(self.inline_bool(c))
        if tag == W.ATTR_TYPE:
            return A.TypeAttr(self.attr_type(c, "failed to get referenced type for TypeAttr"))
        if tag == W.ATTR_STRING:
            return A.StringAttr(self.string_attr(c))
        if tag == W.ATTR_ARRAY:
            return A.ArrayAttr(self.array_attr(c))
        if tag == W.ATTR_DENSE:
            t = self.attr_type(c, "failed to read valid MLIR Type for self-contained "
                                  "DenseElementsAttr")
            if not isinstance(t, T.TileType):
                raise c.fail("failed to read valid MLIR Type for self-contained "
                             "DenseElementsAttr")
            # cuda-tile reads an index only for its typed dense attribute, never here.
            raise c.fail("unknown DenseElementsAttr based Attr")
        if tag == W.ATTR_DIV_BY:
            divisor = self.field(c, "failed to read divisor for DivByAttr")
            flags = self.flags_byte(c, "failed to read flags byte for DivByAttr")
            every = self.signed(c, "failed to read value for 'every' in DivByAttr", flags & 1)
            along = self.signed(c, "failed to read value for 'along' in DivByAttr", flags & 2)
            return A.DivByAttr(divisor, every, along)
        if tag == W.ATTR_SAME_ELEMENTS:
            try:
                values = self.i64_array(c)
            except ReadFailure as e:
                raise e.then("failed to read DenseI64ArrayAttr for SameElementsAttr",
                             c) from None
            return A.SameElementsAttr(values)
        if tag == W.ATTR_DICT:
            return A.DictAttr(self.dict_entries(c))
        if tag == W.ATTR_HINTS:
            return self.hints(c)
        if tag == W.ATTR_BOUNDED:
            flags = self.flags_byte(c, "failed to read flags byte for BoundedAttr")
            lower = self.signed(c, "failed to read lower bound for BoundedAttr", flags & 1)
            upper = self.signed(c, "failed to read upper bound for BoundedAttr", flags & 2)
            return A.BoundedAttr(lower, upper)
        raise c.fail(f"unsupported AttributeTag {full_tag} for self-contained attribute")

    def attr_type(self, c: Cursor, message: str) -> T.Type:
        try:
            return self.read_type(c)
        except ReadFailure as e:
            raise e.then(message, c) from None

    def field(self, c: Cursor, message: str) -> int:
        try:
            return c.varint()
        except ReadFailure as e:
            raise e.then(message, c) from None

    def flags_byte(self, c: Cursor, message: str) -> int:
        try:
            return c.byte()
        except ReadFailure as e:
            raise e.then(message, c) from None

    def signed(self, c: Cursor, message: str, present: int) -> int | None:
        if not present:
            return None
        try:
            return c.svarint()
        except ReadFailure as e:
            raise e.then(message, c) from None

    def float_bits(self, c: Cursor, width: int) -> int:
        """A float's bits as cuda-tile's parseAPInt reads them."""
        if width <= 8:
            try:
                bits = c.byte()
            except ReadFailure as e:
                raise e.then("failed to read byte for APInt (<= 8 bits).", c) from None
            if bits >> width:
                raise c.fail(f"value {bits} does not fit in {width} bits.")
            return bits
        try:
            bits = c.svarint() & 0xFFFFFFFFFFFFFFFF
        except ReadFailure as e:
            raise e.then("failed to read signed varint for APInt (<= 64 bits).", c) from None
        if bits >> width:
            raise c.fail(f"value {bits} does not fit in {width} bits")
        return bits

    def string_attr(self, c: Cursor) -> str:
        try:
            return self.read_string(c)
        except ReadFailure as e:
            raise e.then("failed to read StringAttr.", c) from None

    def i64_array(self, c: Cursor) -> tuple[int, ...]:
        try:
            values = c.le_list(8)
        except ReadFailure as e:
            raise e.then("failed to read DenseI64ArrayAttr values.", c) from None
        for v in values:
            if v in _INT64_EDGES:
                raise c.fail(f"array contains unsupported value {v}")
        return values

    def array_attr(self, c: Cursor) -> tuple[Any, ...]:
        try:
            n = c.varint(limited=True)
        except ReadFailure as e:
            raise e.then("failed to read size for ArrayAttr.", c) from None
        out = []
        for i in range(n):
            try:
                element = self.tagged_attr(c)
            except ReadFailure as e:
                raise e.then(f"failed to parse ArrayAttr element {i}", c) from None
            if not isinstance(element, _TYPED_ATTRS):
                raise c.fail("ArrayAttr contains non-TypedAttr elements or is null")
            out.append(element)
        return tuple(out)

    def dict_entries(self, c: Cursor) -> tuple[tuple[str, Any], ...]:
        try:
            n = c.varint(limited=True)
        except ReadFailure as e:
            raise e.then("failed to read size for DictionaryAttr", c) from None
        entries = []
        for i in range(n):
            try:
                key = self.read_string(c)
            except ReadFailure as e:
                raise e.then(f"failed to read key for DictionaryAttr element {i}", c) from None
            if not key:
                raise c.fail(f"invalid empty attribute name for DictionaryAttr element {i}")
            try:
                entries.append((key, self.tagged_attr(c)))
            except ReadFailure as e:
                raise e.then(f"failed to parse DictionaryAttr value for key {key}", c) from None
        keys = sorted(k.encode() for k, _ in entries)
        for a, b in zip(keys, keys[1:]):
            if a == b:
                from ..ir.asm_attrs import string_text

                raise c.fail("failed to parse DictionaryAttr, duplicate key found: "
                             f"{string_text(a.decode())}")
        return tuple(entries)

    def hints(self, c: Cursor) -> A.OptimizationHintsAttr:
        """An optimization_hints dictionary (its tag, if any, already read)."""
        entries = self.dict_entries(c)
        for key, value in entries:
            if not isinstance(value, A.DictAttr):
                raise c.fail(f"expected dictionary attribute for optimization_hints entry "
                             f"`{key}` got value={_attr_text(value)}").then(
                    "failed to parse OptimizationHintsAttr", c)
        return A.OptimizationHintsAttr(entries)

    # ---------------------------------------------------------------- debug info

    def read_debug_section(self, cur: Cursor) -> None:
        n = self.field(cur, "failed to read total number of operations with debug info")
        self.di_slots = self.debug_array(cur, n, 4, (
            "failed to skip padding for debug info index offset pointer",
            "failed to read debug info index offset pointer.",
            "failed to skip debug info index offsets"))
        n = self.field(cur, "failed to read total number of debug info indices")
        self.di_refs = self.debug_array(cur, n, 8, (
            "failed to skip padding for debug info indices pointer",
            "failed to read debug info indices pointer",
            "failed to skip debug info indices"))
        n = self.field(cur, "failed to read total number of debug info attributes")
        fit = cur.remaining // 4
        if n > fit:
            raise cur.fail(f"number of debug info attributes ({n}) exceeds the maximum of "
                           f"{fit} that can fit in the remaining payload of {cur.remaining} "
                           "bytes.")
        self.di_offsets = self.debug_array(cur, n, 4, (
            "failed to skip padding for debug info offset pointer",
            "failed to read debug info offset pointer",
            "failed to skip debug info offsets"))
        self.di_blob, self.di_size = cur.pos, cur.remaining

    def debug_array(self, cur: Cursor, n: int, width: int,
                    messages: tuple[str, str, str]) -> tuple[int, ...]:
        """Padding, then ``n`` integers of ``width`` bytes; ``messages``: cuda-tile's for
        the padding, for nothing left to point at, for the integers cut off."""
        try:
            cur.skip_padding(width)
        except ReadFailure as e:
            raise e.then(messages[0], cur) from None
        if cur.at_end():
            raise cur.fail(messages[1])
        if n * width > cur.remaining:
            raise cur.truncated(f"{n} integers of {width} bytes").then(messages[2], cur)
        values = struct.unpack_from(f"<{n}{'I' if width == 4 else 'Q'}", self.data, cur.pos)
        cur.pos += n * width
        return values

    def di_ref(self, ref: int, cur: Cursor) -> Any:
        """Debug attribute ``ref`` (1-based; 0 = the unknown location); cuda-tile's
        getDebugInfo, whose failures are silent."""
        if ref == 0:
            return _UNKNOWN
        value = self.di_attrs.get(ref)
        if value is not None:
            return value
        offsets = self.di_offsets
        if ref > len(offsets):
            raise ReadFailure(f"debug attribute {ref} is out of range (the debug table has "
                              f"{len(offsets)} entries)", cur, DETAIL)
        start = offsets[ref - 1]
        end = offsets[ref] if ref < len(offsets) else self.di_size
        if end < start or end > self.di_size:
            raise ReadFailure(f"debug attribute {ref} has invalid offsets", cur, DETAIL)
        if ref in self.di_in_progress:
            raise ReadFailure(f"debug attribute {ref} refers to itself", cur, DETAIL)
        if len(self.di_in_progress) > W.MAX_DEBUG_NESTING:
            raise cur.own(f"debug attributes nested too deeply (limit {W.MAX_DEBUG_NESTING})")
        entry = Cursor(self.data, self.di_blob + start, self.di_blob + end,
                       f"debug attribute {ref}")
        tag = entry.varint() & 0xFF
        self.di_in_progress.add(ref)
        try:
            value = self.decode_di(tag, Cursor(self.data, entry.pos, entry.end, entry.what))
        finally:
            self.di_in_progress.discard(ref)
        self.di_attrs[ref] = value
        return value

    def di_field(self, c: Cursor, kinds: tuple[type, ...], message: str) -> Any:
        try:
            ref = c.varint()
            value = self.di_ref(ref, c)
            if not isinstance(value, kinds):
                raise ReadFailure(f"debug attribute {ref} is a {type(value).__name__}", c,
                                  DETAIL)
            return value
        except ReadFailure as e:
            raise e.then(message, c) from None

    def di_string(self, c: Cursor, message: str) -> str:
        try:
            return self.read_string(c)
        except ReadFailure as e:
            raise e.then(message, c) from None

    def decode_di(self, tag: int, c: Cursor) -> Any:
        file, field, string = (A.DIFileAttr,), self.field, self.di_string
        if tag == W.DI_COMPILE_UNIT:
            return A.DICompileUnitAttr(self.di_field(
                c, file, "failed to read file attribute when parsing DICompileUnitAttr"))
        if tag == W.DI_FILE:
            return A.DIFileAttr(
                string(c, "failed to read file name attribute when parsing DIFileAttr"),
                string(c, "failed to read directory attribute when parsing DIFileAttr"))
        if tag == W.DI_LEXICAL_BLOCK:
            return A.DILexicalBlockAttr(
                self.di_field(c, _SCOPES,
                              "failed to read scope attribute when parsing DILexicalBlockAttr"),
                self.di_field(c, file,
                              "failed to read file attribute when parsing DILexicalBlockAttr"),
                field(c, "failed to read line number when parsing DILexicalBlockAttr"),
                field(c, "failed to read column number when parsing DILexicalBlockAttr"))
        if tag == W.DI_LOC:
            return A.DILocAttr(
                self.di_field(c, _SCOPES, "failed to read scope attribute when parsing DILocAttr"),
                string(c, "failed to read file name attribute when parsing FileLineColLoc"),
                field(c, "failed to read line number when parsing FileLineColLoc"),
                field(c, "failed to read column number when parsing FileLineColLoc"))
        if tag == W.DI_SUBPROGRAM:
            unit_failed = "failed to read compile unit attribute when parsing DISubprogramAttr"
            return A.DISubprogramAttr(
                self.di_field(c, file,
                              "failed to read file attribute when parsing DISubprogramAttr"),
                field(c, "failed to read line number when parsing DISubprogramAttr"),
                string(c, "failed to read name attribute when parsing DISubprogramAttr"),
                string(c, "failed to read linkage name attribute when parsing DISubprogramAttr"),
                self.di_field(c, _UNITS, unit_failed),
                field(c, "failed to read scope line number when parsing DISubprogramAttr"))
        if tag == W.DI_CALL_SITE:
            return A.CallSiteLoc(
                self.di_field(c, _LOCATIONS,
                              "failed to read callee attribute when parsing CallSiteLoc"),
                self.di_field(c, _LOCATIONS,
                              "failed to read caller attribute when parsing CallSiteLoc"))
        return _UNKNOWN  # any other tag (0 among them) is an unknown location

    def start_locations(self, slot: int) -> None:
        """The function with debug slot ``slot`` (0: none) is about to be read."""
        self.loc_next = 0
        self.loc_start = -1 if slot == 0 else (
            self.di_slots[slot - 1] if slot <= len(self.di_slots) else None)

    def next_location(self, cur: Cursor) -> A.Location | None:
        """The next op's location: its function's references are taken in turn."""
        start = self.loc_start
        if start == -1:
            return None
        if start is None:
            raise ReadFailure("the function's debug slot is out of range", cur, DETAIL)
        k = start + self.loc_next
        if k >= len(self.di_refs):
            raise ReadFailure("the function's debug references run out", cur, DETAIL)
        self.loc_next += 1
        ref = self.di_refs[k]
        loc = self.di_ref(ref, cur)
        if not isinstance(loc, _LOCATIONS):
            raise ReadFailure(f"debug attribute {ref} is a {type(loc).__name__}, not a "
                              "location", cur, DETAIL)
        return None if loc is _UNKNOWN or isinstance(loc, A.UnknownLoc) else loc


def _u32s(cur: Cursor, n: int, what: str) -> tuple[int, ...]:
    """``n`` 4-byte offsets (cuda-tile points at them: nothing may be cut off)."""
    if cur.at_end() or 4 * n > cur.remaining:
        raise cur.truncated(what)
    values = struct.unpack_from(f"<{n}I", cur.data, cur.pos)
    cur.pos += 4 * n
    return values


def _dense_value(data: bytes, t: T.TileType) -> A.DenseElementsAttr | None:
    """``data`` as the elements of ``t`` if its size fits (MLIR's isValidRawBuffer)."""
    n = t.num_elements
    if t.element.name == "i1":
        # MLIR's i1 layout: a splat is one byte 0x00/0xFF; otherwise bits, LSB first.
        if len(data) == 1 and data[0] in (0x00, 0xFF):
            return A.DenseElementsAttr(t, data, True)
        if n == 1 and len(data) == 1:  # one packed bit: still one element, so a splat
            return A.DenseElementsAttr(t, b"\xff" if data[0] & 1 else b"\x00", True)
        return A.DenseElementsAttr(t, data, False) if len(data) == (n + 7) // 8 else None
    width = W.storage_bytes(t.element)
    if len(data) == width:  # one element: a splat (also when the tile has one)
        return A.DenseElementsAttr(t, data, True)
    return A.DenseElementsAttr(t, data, False) if len(data) == n * width else None


def quoted(t: T.Type) -> str:
    """A type as MLIR streams it into a diagnostic: quoted, in its full form."""
    return f"'{_full(t)}'"


def _full(t: T.Type) -> str:
    from ..ir.asm_attrs import type_text

    if not isinstance(t, T.FunctionType):
        return type_text(t, generic=True)
    results = ", ".join(map(_full, t.results))
    if len(t.results) != 1 or isinstance(t.results[0], T.FunctionType):
        results = f"({results})"
    return f"({', '.join(map(_full, t.inputs))}) -> {results}"


def _attr_text(v: Any) -> str:
    """An attribute as MLIR streams it into a diagnostic."""
    from ..ir import asm_attrs as P

    if isinstance(v, A.OptimizationHintsAttr):
        return "#cuda_tile.optimization_hints" + P.hints_text(v)
    if isinstance(v, PREDICATES):
        return "#cuda_tile." + P.predicate_text(v)
    if isinstance(v, (A.IntegerAttr, A.FloatAttr, A.BoolAttr)):
        return P.typed_attr_text(v)
    if isinstance(v, A.StringAttr):
        return P.string_text(v.value)
    if isinstance(v, A.TypeAttr):
        return P.type_text(v.value, generic=True)
    if isinstance(v, A.ArrayAttr):
        return "[" + ", ".join(_attr_text(x) for x in v.elements) + "]"
    return str(v)


def _dyn(values: tuple[int, ...]) -> tuple[int | None, ...]:
    return tuple(None if v == W.INT64_MIN else v for v in values)


def _dim_map(tile: tuple[int, ...], dim_map: tuple[int, ...]) -> tuple[int, ...] | None:
    """None for the identity map (the default, re-derived by the writer)."""
    return None if dim_map == tuple(range(len(tile))) else dim_map
