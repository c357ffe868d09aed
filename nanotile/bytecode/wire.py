"""Wire-format tables and primitive codecs shared by the bytecode reader and writer.

Facts come from ../shared/reference/wire-format.md (cuTile 1.7.0's writer, versions
13.1-13.4) and wire-format-cuda-tile-13.3.md (NVIDIA's C++ reader/writer). Per-op layouts
are not here: they are read from the op table (nanotile.ir.optable).
"""

from __future__ import annotations

import struct

from ..ir import limits
from ..ir import types as T

MAGIC = b"\x7fTileIR\x00"
PAD = 0xCB

Version = tuple[int, int]
SUPPORTED_VERSIONS: tuple[Version, ...] = ((13, 1), (13, 2), (13, 3), (13, 4))
LATEST: Version = (13, 4)
# NVIDIA's test-only versions (cuda-tile built with tests): they order above every 13.x
# and are accepted only where the test-only ops need them (nanotile-translate, the
# reader and writer); the production range above and its messages do not include them.
TESTING_VERSIONS: tuple[Version, ...] = ((250, 0), (250, 1))


def is_known_version(v: Version) -> bool:
    """A production version or one of the test-only versions."""
    return v in SUPPORTED_VERSIONS or v in TESTING_VERSIONS

# Section ids (low 7 bits of the section id byte; bit 7 = an alignment field follows).
SEC_END = 0x00
SEC_STRING = 0x01
SEC_FUNC = 0x02
SEC_DEBUG = 0x03
SEC_CONSTANT = 0x04
SEC_TYPE = 0x05
SEC_GLOBAL = 0x06
SEC_PRODUCER = 0x07  # 13.3+ (NVIDIA's C++ writer; cuTile never writes it)
SECTION_NAMES = {SEC_STRING: "string", SEC_FUNC: "function", SEC_DEBUG: "debug",
                 SEC_CONSTANT: "constant", SEC_TYPE: "type", SEC_GLOBAL: "global",
                 SEC_PRODUCER: "producer"}

# Function record flags.
FUNC_ENTRY = 0x02
FUNC_HAS_HINTS = 0x04

# Type tags (varints). Element types map to the ElementType singletons.
ELEMENT_TAGS: dict[int, T.ElementType] = {
    0x00: T.I1, 0x01: T.I8, 0x02: T.I16, 0x03: T.I32, 0x04: T.I64, 0x05: T.F16,
    0x06: T.BF16, 0x07: T.F32, 0x08: T.TF32, 0x09: T.F64, 0x0A: T.F8E4M3FN,
    0x0B: T.F8E5M2, 0x12: T.F8E8M0FNU, 0x13: T.F4E2M1FN, 0x16: T.I4, 130: T.F8E5M3FNU,
}
TAG_OF_ELEMENT: dict[str, int] = {t.name: tag for tag, t in ELEMENT_TAGS.items()}
TAG_POINTER = 0x0C
TAG_TILE = 0x0D
TAG_TENSOR_VIEW = 0x0E
TAG_PARTITION_VIEW = 0x0F
TAG_FUNCTION = 0x10
TAG_TOKEN = 0x11
TAG_GATHER_SCATTER_VIEW = 0x14
TAG_STRIDED_VIEW = 0x15
# Version that introduced each non-element type tag.
TYPE_TAG_SINCE = {TAG_GATHER_SCATTER_VIEW: (13, 3), TAG_STRIDED_VIEW: (13, 3)}
# The names NVIDIA's tools use for types in version errors (BytecodeTypeOpcodes.td).
TYPE_ERROR_NAMES = {"f8E8M0FNU": "Float8E8M0FNU", "f4E2M1FN": "Float4E2M1FN", "i4": "Int4",
                    "f8E5M3FNU": "Float8E5M3FNU", "strided_view": "StridedViewType",
                    "gather_scatter_view": "GatherScatterViewType"}

# Tagged attribute tags.
ATTR_INTEGER = 0x01
ATTR_FLOAT = 0x02
ATTR_BOOL = 0x03
ATTR_TYPE = 0x04
ATTR_STRING = 0x05
ATTR_ARRAY = 0x06
ATTR_DENSE = 0x07
ATTR_DIV_BY = 0x08
ATTR_SAME_ELEMENTS = 0x09
ATTR_DICT = 0x0A
ATTR_HINTS = 0x0B
ATTR_BOUNDED = 0x0C

# Debug attribute tags.
DI_COMPILE_UNIT = 0x01
DI_FILE = 0x02
DI_LEXICAL_BLOCK = 0x03
DI_LOC = 0x04
DI_SUBPROGRAM = 0x05
DI_CALL_SITE = 0x06

INT64_MIN = -(1 << 63)
# regions inside regions, types inside types, attributes inside attributes: the limit the
# text parser applies too (nanotile/ir/limits.py)
MAX_NESTING = limits.MAX_NESTING
MAX_DEBUG_NESTING = 2000  # call-site locations nest once per inlined call


def value_bits(t: T.ElementType) -> int:
    """Significant bits of a value of ``t`` (tf32 is a 19-bit format held in 32 bits)."""
    return 19 if t.name == "tf32" else t.bitwidth


def storage_bytes(t: T.ElementType) -> int:
    """Bytes per element in a dense constant: the value bits rounded up to bytes (i4,
    f4E2M1FN: 1 byte; tf32: 3 bytes holding its 19 bits), as in cuTile's files. i1 is
    special: a splat is one byte 0x00/0xFF, other constants are packed bits."""
    return max(1, (value_bits(t) + 7) // 8)


def parse_version(text: str) -> Version:
    """``"13.3"`` -> (13, 3); anything else raises ValueError."""
    major, dot, minor = text.strip().partition(".")
    if not dot or not major.isdigit() or not minor.isdigit():
        raise ValueError(text)
    return int(major), int(minor)


def version_str(v: Version) -> str:
    return f"{v[0]}.{v[1]}"


def since(text: str) -> Version:
    """An op-table ``since`` string as a comparable version tuple."""
    return parse_version(text)


def supported_range() -> str:
    return f"[{version_str(SUPPORTED_VERSIONS[0])} - {version_str(SUPPORTED_VERSIONS[-1])}]"


# --------------------------------------------------------------------------------------
# Encoding primitives (writer side)


def put_varint(buf: bytearray, x: int) -> None:
    """Unsigned LEB128."""
    if x < 0:
        raise ValueError(f"negative varint {x}")
    while x >= 0x80:
        buf.append((x & 0x7F) | 0x80)
        x >>= 7
    buf.append(x)


def put_svarint(buf: bytearray, x: int) -> None:
    """Zig-zag, then LEB128."""
    put_varint(buf, (x << 1) if x >= 0 else ~(x << 1))


def put_int_list(buf: bytearray, values: tuple[int, ...] | list[int], width: int) -> None:
    put_varint(buf, len(values))
    for v in values:
        buf += int(v).to_bytes(width, "little", signed=True)


def pad_to(buf: bytearray, alignment: int, base: int = 0) -> None:
    buf += bytes([PAD]) * (-(base + len(buf)) % alignment)


# --------------------------------------------------------------------------------------
# Decoding primitives (reader side)

# cuda-tile's cap on counts it reads (std::numeric_limits<uint32_t>::max() - 1).
COUNT_LIMIT = (1 << 32) - 2
_U64 = (1 << 64) - 1
_LE_ARRAY = {1: "b", 4: "i", 8: "q"}

# What a frame of a ReadFailure is: a message of cuda-tile's reader; nanotile's own
# explanation of a failure that cuda-tile reports without a message (a truncated field);
# a check that only nanotile makes.
CUDA, DETAIL, OWN = 0, 1, 2


class ReadFailure(Exception):
    """Malformed bytecode, reported as cuda-tile's reader reports it: a chain of messages,
    innermost first, each ``(message, file offset, offset in cuda-tile's terms, kind)``.

    cuda-tile counts an offset from the start of the slice its reader is reading (the
    file, a section, a function body, a table entry), where the reader stands when it
    reports: after the field that failed. It names none (None here) for a few messages.
    """

    def __init__(self, message: str, cur: Cursor, kind: int = CUDA,
                 located: bool = True) -> None:
        super().__init__(message)
        self.frames: list[tuple[str, int, int | None, int]] = []
        self.then(message, cur, kind, located)

    def then(self, message: str, cur: Cursor, kind: int = CUDA,
             located: bool = True) -> ReadFailure:
        """Add an outer message at ``cur``'s position; returns self, to be raised."""
        self.frames.append((message, cur.pos, cur.pos - cur.base if located else None, kind))
        return self


class Cursor:
    """Reads primitives from ``data[pos:end]`` as cuda-tile's EncodingReader does.

    ``base`` is the file offset where the slice that cuda-tile's reader reads begins
    (offsets in its messages count from there); ``what`` names the slice in nanotile's
    own explanations. A read that fails raises a ReadFailure and leaves ``pos`` where
    cuda-tile's reader stands after the same failure.
    """

    __slots__ = ("base", "data", "end", "pos", "what")

    def __init__(self, data: bytes, pos: int, end: int, what: str,
                 base: int | None = None) -> None:
        self.data = data
        self.pos = pos
        self.end = end
        self.what = what
        self.base = pos if base is None else base

    def fail(self, message: str, located: bool = True) -> ReadFailure:
        """cuda-tile's message, here."""
        return ReadFailure(message, self, CUDA, located)

    def own(self, message: str) -> ReadFailure:
        """A refusal of nanotile's own, here."""
        return ReadFailure(message, self, OWN)

    def truncated(self, field: str) -> ReadFailure:
        return ReadFailure(f"truncated: the {self.what} ends inside {field}", self, DETAIL)

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def at_end(self) -> bool:
        return self.pos >= self.end

    def sub(self, length: int, what: str) -> Cursor:
        """A cursor over the next ``length`` bytes (which this cursor skips); the caller
        has checked that they are there."""
        c = Cursor(self.data, self.pos, self.pos + length, what)
        self.pos += length
        return c

    def byte(self) -> int:
        pos = self.pos
        if pos >= self.end:
            raise self.truncated("a byte")
        self.pos = pos + 1
        return self.data[pos]

    def le(self, width: int) -> int:
        """An unsigned little-endian integer of ``width`` bytes."""
        pos = self.pos
        if pos + width > self.end:
            raise self.truncated(f"a {8 * width}-bit integer")
        self.pos = pos + width
        return int.from_bytes(self.data[pos:pos + width], "little")

    def raw(self, n: int) -> bytes:
        if n > self.end - self.pos:
            raise self.truncated(f"{n} bytes")
        pos = self.pos
        self.pos = pos + n
        return self.data[pos:pos + n]

    def skip(self, n: int) -> None:
        if n > self.end - self.pos:
            raise self.truncated(f"{n} bytes")
        self.pos += n

    def varint(self, limited: bool = False) -> int:
        """Unsigned LEB128, kept to 64 bits; ``limited``: at most COUNT_LIMIT."""
        pos = self.pos
        if pos < self.end:
            b = self.data[pos]
            if b < 0x80:
                self.pos = pos + 1
                return b
        return self._long_varint(limited)

    def _long_varint(self, limited: bool) -> int:
        data, end, pos = self.data, self.end, self.pos
        result = shift = 0
        while True:
            if pos >= end:
                self.pos = pos
                raise self.truncated("a varint")
            if shift > 63:
                self.pos = pos
                raise ReadFailure(f"a varint longer than 10 bytes in the {self.what}", self,
                                  DETAIL)
            b = data[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        self.pos = pos
        result &= _U64
        if limited and result > COUNT_LIMIT:
            raise self.fail("varint value exceeds maximum supported capacity. (expected "
                            f"value less than {COUNT_LIMIT}, got {result}).")
        return result

    def svarint(self) -> int:
        """Zig-zag LEB128, as a signed 64-bit value."""
        u = self.varint()
        return (u >> 1) ^ -(u & 1)

    def le_array(self, count: int, width: int) -> tuple[int, ...]:
        """``count`` signed little-endian integers of ``width`` bytes."""
        if count > COUNT_LIMIT:
            raise self.fail(f"array size in bytecode ({count}"
                            ") exceeds maximum supported capacity")
        fit = (self.end - self.pos) // width
        if count > fit:
            self.pos += fit * width
            raise self.truncated(f"an array of {count} {8 * width}-bit integers")
        pos = self.pos
        self.pos = pos + count * width
        return struct.unpack_from(f"<{count}{_LE_ARRAY[width]}", self.data, pos)

    def le_list(self, width: int) -> tuple[int, ...]:
        """A varint count, then that many signed integers of ``width`` bytes."""
        return self.le_array(self.varint(), width)

    def skip_padding(self, alignment: int) -> None:
        """Skip to a multiple of ``alignment`` from ``base`` (cuda-tile neither checks the
        padding bytes nor accepts padding at the very end of a slice)."""
        if alignment < 2:
            return
        if self.pos >= self.end:
            raise self.truncated("alignment padding")
        self.skip(-(self.pos - self.base) % alignment)
