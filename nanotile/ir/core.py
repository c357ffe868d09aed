"""The IR's structure: values, operations, blocks, regions and modules.

An ``Operation`` is generic: its ``name`` selects a row of the op table
(``optable.OPS``), which says what its operands, results, attributes and regions mean.
Operands are ``Value`` objects; a value is either an op's result or a block's argument.
Operand *groups* (an optional or variadic operand of the op table) are flattened into
``operands``; ``operand_groups()`` splits them again using ``operand_segments``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .attrs import Location, SourceRange, TextPosition
from .types import Type


class Value:
    """An SSA value. ``name_hint`` is the name it was written with (without ``%``)."""

    __slots__ = ("index", "name_hint", "owner", "type")

    def __init__(self, type: Type, owner: Operation | Block | None = None,
                 index: int = 0, name_hint: str | None = None) -> None:
        self.type = type
        self.owner = owner
        self.index = index
        self.name_hint = name_hint

    @property
    def is_block_argument(self) -> bool:
        return isinstance(self.owner, Block)

    def __repr__(self) -> str:
        return f"<Value %{self.name_hint or '?'} : {self.type}>"


@dataclass(eq=False)
class Operation:
    """One op: ``results = name(operands) {attributes} (regions)``.

    ``attributes`` maps attribute names of the op table to Python values (see attrs.py);
    an absent optional attribute is simply not in the dict. ``operand_segments`` gives
    the size of each operand group of the op table, in order, when the op has optional
    or variadic operands (None when every group is a single operand).
    """

    name: str
    operands: list[Value] = field(default_factory=list)
    results: list[Value] = field(default_factory=list)
    attributes: dict[str, Any] = field(default_factory=dict)
    regions: list[Region] = field(default_factory=list)
    operand_segments: list[int] | None = None
    location: Location | None = None
    source: SourceRange | TextPosition | None = None  # where it was written (diagnostics)
    parent: Block | None = None

    def __post_init__(self) -> None:
        for region in self.regions:  # regions know their op (block arguments' owner)
            region.parent = self

    @property
    def result_types(self) -> list[Type]:
        return [r.type for r in self.results]

    def operand_groups(self) -> list[list[Value]]:
        """Operands split into the op table's operand groups."""
        if self.operand_segments is None:
            return [[v] for v in self.operands]
        groups, start = [], 0
        for size in self.operand_segments:
            groups.append(self.operands[start:start + size])
            start += size
        return groups

    def walk(self) -> Iterator[Operation]:
        """This op and every op nested in its regions, in textual order."""
        yield self
        for region in self.regions:
            for block in region.blocks:
                for op in block.ops:
                    yield from op.walk()

    def __repr__(self) -> str:
        return f"<Operation {self.name} at {id(self):#x}>"


@dataclass(eq=False)
class Block:
    """A list of ops with typed arguments. Tile IR regions have exactly one block."""

    arguments: list[Value] = field(default_factory=list)
    ops: list[Operation] = field(default_factory=list)
    parent: Region | None = None
    # where the last insertion or removal of nanotile.ir.rewrite happened in ``ops``: a
    # pass that inserts op after op before the same anchor, or walks the block forward,
    # finds its next place there instead of searching the whole list
    position_hint: int = field(default=0, repr=False, compare=False)

    def add_argument(self, type: Type, name_hint: str | None = None) -> Value:
        v = Value(type, self, len(self.arguments), name_hint)
        self.arguments.append(v)
        return v

    def append(self, op: Operation) -> Operation:
        op.parent = self
        self.ops.append(op)
        return op

    @property
    def terminator(self) -> Operation | None:
        return self.ops[-1] if self.ops else None


@dataclass(eq=False)
class Region:
    blocks: list[Block] = field(default_factory=list)
    parent: Operation | None = None

    def __post_init__(self) -> None:
        for block in self.blocks:
            block.parent = self

    @property
    def block(self) -> Block:
        """The single block of a Tile IR region."""
        return self.blocks[0]


@dataclass(eq=False)
class Module:
    """A ``cuda_tile.module``: its items are ``entry``, ``global`` (and test-only) ops.

    ``name`` is None for tileirdisasm's bare form (bytecode stores no module name).
    ``producer`` is the optional producer string (bytecode 13.3+).
    ``attributes`` holds any other discardable attributes written on the module.
    """

    name: str | None = None
    items: list[Operation] = field(default_factory=list)
    producer: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    location: Location | None = None
    source: SourceRange | None = None
    # The file the module was read from, for messages about ops that carry no position
    # of their own (bytecode without debug information).
    filename: str | None = field(default=None, compare=False)
    # Side record kept by the bytecode reader: the file's type table in its order. cuTile
    # registers some types before their first use (list element types, lazily defined
    # globals), so the order cannot always be re-derived from the IR; the bytecode writer
    # numbers these types first (those still used) to re-encode the file byte for byte.
    bytecode_types: tuple[Type, ...] | None = field(default=None, compare=False)
    # The PTX program (nanotile.targets.ptx.ir.PtxProgram) once the select-instructions pass ran:
    # from then on the module is in a ptx language and the ptx passes edit this program;
    # ``items`` keep the Tile IR it was lowered from, for reference only.
    ptx: Any = field(default=None, compare=False)
    # Whether the ops' text positions (``source``) are the program's own lines: False for a
    # dump resumed with --start-after, whose lines are the dump's (PTX .loc lines skip them).
    text_positions: bool = field(default=True, compare=False)

    def walk(self) -> Iterator[Operation]:
        for item in self.items:
            yield from item.walk()

    def entries(self) -> list[Operation]:
        return [op for op in self.items if op.name == "entry"]

    def lookup(self, sym_name: str) -> Operation | None:
        for op in self.items:
            if op.attributes.get("sym_name") == sym_name:
                return op
        return None


def make_op(name: str, operands: list[Value], result_types: list[Type],
            attributes: dict[str, Any] | None = None, regions: list[Region] | None = None,
            operand_segments: list[int] | None = None,
            location: Location | None = None) -> Operation:
    """Build an op, creating its result values and linking its regions. An op whose only
    operand group is variadic (yield, pick, ...) gets its one segment here; ops with
    several groups, one of them variadic, need ``operand_segments`` from the caller."""
    if operand_segments is None:
        operand_segments = _single_group_segments(name, len(operands))
    op = Operation(name, list(operands), [], dict(attributes or {}), list(regions or []),
                   operand_segments, location)
    op.results = [Value(t, op, i) for i, t in enumerate(result_types)]
    for region in op.regions:
        region.parent = op
    return op


def _single_group_segments(name: str, count: int) -> list[int] | None:
    from .optable import lookup  # the op table does not import this module; keep it so

    opdef = lookup(name)
    if opdef is not None and len(opdef.operands) == 1 and opdef.operands[0].kind != "single":
        return [count]
    return None
