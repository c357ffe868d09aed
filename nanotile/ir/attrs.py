"""Tile IR attributes: compile-time values attached to ops.

Inside an op, most attributes are held as plain Python values (the op table says which
kind each one is): an enum attribute is an ``enums`` member, a unit attribute is ``True``,
an integer is ``int``, a string or symbol name is ``str``, an i32 array is ``tuple[int]``.
The classes here are the attributes that need more structure than that.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from .types import ElementType, TileType, Type


@dataclass(frozen=True, slots=True)
class IntegerAttr:
    """``42 : i32``: an integer with its type (used in identities and hint dictionaries)."""

    value: int
    type: Type


@dataclass(frozen=True, slots=True)
class FloatAttr:
    """``1.0 : f32``. ``bits`` is the exact bit pattern in the type's format."""

    bits: int
    type: ElementType


@dataclass(frozen=True, slots=True)
class BoolAttr:
    value: bool


@dataclass(frozen=True, slots=True)
class StringAttr:
    value: str


@dataclass(frozen=True, slots=True)
class TypeAttr:
    value: Type


@dataclass(frozen=True, slots=True)
class ArrayAttr:
    elements: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class DictAttr:
    """An ordered dictionary of named attributes, ``{a = 1, b = true}``."""

    entries: tuple[tuple[str, Any], ...]

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.entries:
            if k == key:
                return v
        return default


@dataclass(frozen=True, slots=True)
class DenseElementsAttr:
    """The value of a ``constant`` or ``global``: raw little-endian element bytes.

    Keeping the bytes (not Python numbers) makes constants bit-exact through text and
    bytecode. ``splat`` means ``data`` holds one element that fills the whole ``type``.
    The layout is the bytecode's (measured on cuTile 1.7.0's files): every element takes
    whole bytes, its value bits rounded up to bytes: i4 and f4E2M1FN one byte each (NOT
    packed two per byte), tf32 THREE bytes holding its 19-bit pattern (the f32 bits
    shifted right by 13; 1.0 is ``00 fc 01``), the others their width. i1 is MLIR's
    special case: a splat is ONE byte, 0xFF for true and 0x00 for false (tileirdisasm
    reads 0x01 as packed bits); a non-splat i1 constant is bit-packed, element 0 in the
    lowest bit, ceil(n/8) bytes.
    """

    type: TileType
    data: bytes
    splat: bool


@dataclass(frozen=True, slots=True)
class DivByAttr:
    """``div_by<16>`` / ``div_by<16, every 4 along 1>``: an assume predicate."""

    divisor: int
    every: int | None = None
    along: int | None = None


@dataclass(frozen=True, slots=True)
class BoundedAttr:
    """``bounded<0, ?>``: lower/upper bounds (None = unbounded)."""

    lower: int | None
    upper: int | None


@dataclass(frozen=True, slots=True)
class SameElementsAttr:
    """``same_elements<[1, 2]>``: groups of equal elements per dimension."""

    values: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class OptimizationHintsAttr:
    """``optimization_hints=<default = {}, sm_100 = {occupancy = 2}>``.

    Maps a target name (``default``, ``sm_90``, ...) to a DictAttr of hints.
    """

    targets: tuple[tuple[str, DictAttr], ...]


@dataclass(frozen=True, slots=True)
class OpaqueAttr:
    """An attribute of another dialect, or one not modelled: kept as its text."""

    text: str


# ----------------------------------------------------------------------------------------
# Locations and debug info


@dataclass(frozen=True, slots=True)
class Location:
    """Base class of source locations."""


@dataclass(frozen=True, slots=True)
class UnknownLoc(Location):
    pass


@dataclass(frozen=True, slots=True)
class FileLineColLoc(Location):
    filename: str
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class NameLoc(Location):
    name: str
    child: Location | None = None


@dataclass(frozen=True, slots=True)
class CallSiteLoc(Location):
    callee: Location
    caller: Location


@dataclass(frozen=True, slots=True)
class FusedLoc(Location):
    locations: tuple[Location, ...]
    metadata: Any = None


@dataclass(frozen=True, slots=True)
class DIFileAttr:
    name: str
    directory: str


@dataclass(frozen=True, slots=True)
class DICompileUnitAttr:
    file: DIFileAttr


@dataclass(frozen=True, slots=True)
class DISubprogramAttr:
    file: DIFileAttr
    line: int
    name: str
    linkage_name: str
    compile_unit: DICompileUnitAttr
    scope_line: int = 0  # optional in cuda-tile: 0 when not given, and then not printed


@dataclass(frozen=True, slots=True)
class DILexicalBlockAttr:
    scope: Any
    file: DIFileAttr
    line: int
    column: int = 0  # optional in cuda-tile


@dataclass(frozen=True, slots=True)
class DILocAttr(Location):
    """A location inside a debug scope (what cuTile attaches to each op)."""

    scope: Any
    filename: str
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class SourceRange:
    """Where something was written in a text file (for diagnostics, not for printing)."""

    filename: str
    line: int
    column: int
    extra: dict = field(default_factory=dict, compare=False, hash=False)


class TextPosition:
    """A SourceRange for an op read from text: the same fields, with ``line`` and
    ``column`` worked out from the op's offset only when a message asks for them (a
    parse records one per op; few are ever shown)."""

    __slots__ = ("extra", "filename", "line_starts", "offset")

    def __init__(self, filename: str, offset: int, line_starts: list[int],
                 extra: Any) -> None:
        self.filename = filename
        self.offset = offset
        self.line_starts = line_starts  # offsets where the text's lines start (shared)
        self.extra = extra

    @property
    def line(self) -> int:
        return bisect.bisect_right(self.line_starts, self.offset)

    @property
    def column(self) -> int:
        return self.offset - self.line_starts[self.line - 1] + 1

    def __repr__(self) -> str:
        return f"TextPosition({self.filename!r}, line={self.line}, column={self.column})"

    def __deepcopy__(self, memo: dict) -> TextPosition:
        """A copy of the op keeps its place in the same text: the table of line starts
        is shared, not copied, and so is an immutable ``extra``."""
        import copy
        from types import MappingProxyType

        extra = self.extra if isinstance(self.extra, MappingProxyType) else \
            copy.deepcopy(self.extra, memo)
        return TextPosition(self.filename, self.offset, self.line_starts, extra)
