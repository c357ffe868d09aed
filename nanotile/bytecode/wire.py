"""Wire-format tables and primitive codecs shared by the bytecode reader and writer.

Facts come from ../shared/reference/wire-format.md (cuTile 1.7.0's writer, versions
13.1-13.4) and wire-format-cuda-tile-13.3.md (NVIDIA's C++ reader/writer). Per-op layouts
are not here: they are read from the op table (nanotile.ir.optable).
"""

from __future__ import annotations

from ..diagnostics import CompileError, Diagnostic
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


class Cursor:
    """Reads primitives from ``data[pos:end]``; every read is bounds-checked.

    ``base`` is the absolute file offset of ``data[0]`` so errors name file offsets.
    Errors are CompileErrors naming the byte offset where the bad field starts.
    """

    __slots__ = ("data", "end", "filename", "pos", "what")

    def __init__(self, data: bytes, pos: int, end: int, filename: str, what: str = "") -> None:
        self.data = data
        self.pos = pos
        self.end = end
        self.filename = filename
        self.what = what

    def error(self, message: str, offset: int | None = None) -> CompileError:
        return CompileError(Diagnostic("error", message, self.filename,
                                       offset=self.pos if offset is None else offset))

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    def at_end(self) -> bool:
        return self.pos >= self.end

    def sub(self, length: int, what: str) -> Cursor:
        """A cursor over the next ``length`` bytes (which this cursor skips)."""
        self.need(length, what)
        c = Cursor(self.data, self.pos, self.pos + length, self.filename, what)
        self.pos += length
        return c

    def need(self, n: int, what: str) -> None:
        if n < 0 or n > self.end - self.pos:
            ctx = f" in {self.what}" if self.what else ""
            raise self.error(f"truncated bytecode: {what} needs {n} bytes, "
                             f"{max(self.end - self.pos, 0)} left{ctx}")

    def byte(self, what: str = "byte") -> int:
        self.need(1, what)
        b = self.data[self.pos]
        self.pos += 1
        return b

    def raw(self, n: int, what: str = "bytes") -> bytes:
        self.need(n, what)
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def varint(self, what: str = "varint") -> int:
        start = self.pos
        result = shift = 0
        data, end = self.data, self.end
        pos = self.pos
        while True:
            if pos >= end:
                self.pos = start
                raise self.error(f"truncated bytecode: unterminated varint ({what})"
                                 + (f" in {self.what}" if self.what else ""))
            b = data[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                break
            shift += 7
            if shift > 63:
                raise self.error(f"varint too long ({what})", start)
        self.pos = pos
        if result >> 64:
            raise self.error(f"varint out of 64-bit range ({what})", start)
        return result

    def svarint(self, what: str = "signed varint") -> int:
        u = self.varint(what)
        return (u >> 1) ^ -(u & 1)

    def count(self, what: str, min_item_bytes: int = 1) -> int:
        """A varint count, checked against the bytes left (each item needs some bytes)."""
        start = self.pos
        n = self.varint(what)
        if n * min_item_bytes > self.end - self.pos:
            raise self.error(f"{what} {n} exceeds the {self.end - self.pos} bytes left"
                             + (f" in {self.what}" if self.what else ""), start)
        return n

    def int_list(self, width: int, what: str) -> tuple[int, ...]:
        n = self.count(f"{what} count", width)
        raw = self.raw(n * width, what)
        return tuple(int.from_bytes(raw[i:i + width], "little", signed=True)
                     for i in range(0, n * width, width))

    def align(self, alignment: int, base: int = 0) -> None:
        """Skip 0xCB padding up to a multiple of ``alignment`` (relative to ``base``)."""
        n = -(self.pos - base) % alignment
        start = self.pos
        pad = self.raw(n, "alignment padding")
        if any(b != PAD for b in pad):
            raise self.error("invalid padding byte (expected 0xCB)", start)
