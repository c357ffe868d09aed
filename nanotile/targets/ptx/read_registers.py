"""Which registers of each simt value some instruction will read (for select-instructions).

A simt value holds one register per element a thread owns, but not every register is
always read: a vector store ``st.global.v4`` reads the pointer and the mask of the first
element of each group of four only, and a ``pick`` reads the registers it names. The
elementwise ops that compute such a pointer or mask (an index plus a constant, a compare,
an ``and`` of two masks, an ``offset``) need then compute only those registers, and
select-instructions writes the instructions of those alone instead of leaving three in
four to ptx-dead-code.

``read_registers`` walks an entry's ops backwards, so that every use of a value is seen
before the op that defines it (structured control flow: a value's users come after its
definition in the walk, or inside ops that do). An op passes on what is read of its
results to its operands:

- an elementwise op: register k of each operand for register k of its result;
- ``pick``: the operand registers it names at the positions read;
- a vector load or store: the pointer and mask of each group's first element;
- every other op reads all registers of all its operands.

Values not in the answer are read in whole.
"""

from __future__ import annotations

from collections.abc import Callable

from ...ir import types as T
from ...ir.core import Operation, Value
from ...ir.optable import lookup


def read_registers(entry: Operation, count: Callable[[T.Type], int]) -> dict[Value, set[int]]:
    """For each op result of ``entry`` of which some registers are never read: the
    indices of those that are (``count(type)``: the registers of a simt value)."""
    reads: dict[Value, set[int]] = {}
    whole: set[Value] = set()
    for op in reversed(list(entry.walk())):
        if op is entry:
            continue
        for operand, indices in _operand_reads(op, reads, whole, count):
            if operand in whole:
                continue
            if indices is None:
                whole.add(operand)
                reads.pop(operand, None)
            else:
                reads.setdefault(operand, set()).update(indices)
    return {v: read for v, read in reads.items()
            if v not in whole and len(read) < count(v.type)}


def _operand_reads(op: Operation, reads, whole, count):
    """(operand, register indices it reads or None for all) for each operand of ``op``."""
    if _refines(op):
        result = op.results[0]
        read = None if result in whole else reads.get(result, set())
        if read is not None and op.name == "pick":
            return _pick_reads(op, read, count)
        if read is not None and _elementwise(op):
            registers = count(result.type)
            return [(v, read if count(v.type) == registers else None) for v in op.operands]
    if op.name in ("load_ptr_tko", "store_ptr_tko"):
        return _access_reads(op, count)
    return [(v, None) for v in op.operands]


def _refines(op: Operation) -> bool:
    return len(op.results) == 1 and not op.regions


def _elementwise(op: Operation) -> bool:
    row = lookup(op.name)
    return row is not None and "elementwise" in row.traits and "pure" in row.traits


def _pick_reads(op: Operation, read: set[int], count):
    """A pick's result register j is register ``registers[j]`` of its operands laid end to
    end (each one as many registers as its type has)."""
    owners = []
    for v in op.operands:
        owners.extend((v, k) for k in range(count(v.type)))
    wanted: dict[Value, set[int]] = {v: set() for v in op.operands}
    chosen = op.attributes["registers"]
    for j in read:
        v, k = owners[chosen[j]]
        wanted[v].add(k)
    return list(wanted.items())


def _access_reads(op: Operation, count):
    """A load or store of vectors of ``width`` registers reads the pointer and the mask of
    each vector's first register (and all values, and all padding)."""
    from .vectorize_memory import vector_of

    width = vector_of(op)
    groups = op.operand_groups()
    firsts = set(range(0, count(groups[0][0].type), width))
    pairs = []
    for operand, group in zip(lookup(op.name).operands, groups):
        addressing = operand.name in ADDRESSING and width > 1
        pairs.extend((v, firsts if addressing else None) for v in group)
    return pairs


# The operand groups (the op table's names) of load_ptr_tko and store_ptr_tko that a
# vector access reads once per vector
ADDRESSING = ("source", "destination", "mask")
