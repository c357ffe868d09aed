"""The dialect's enumerations, with their text spelling and their bytecode byte.

The byte values are those of reference/wire-format.md section 9. An enum member's
``name`` is its text spelling (as tileirdisasm prints it) and its ``value`` is the
wire byte.
"""

from __future__ import annotations

from enum import Enum


class RoundingMode(Enum):
    nearest_even = 0
    zero = 1
    negative_inf = 2
    positive_inf = 3
    approx = 4
    full = 5
    nearest_int_to_zero = 6
    nearest_away = 7


class ComparisonPredicate(Enum):
    equal = 0
    not_equal = 1
    less_than = 2
    less_than_or_equal = 3
    greater_than = 4
    greater_than_or_equal = 5


class ComparisonOrdering(Enum):
    unordered = 0
    ordered = 1


class Signedness(Enum):
    unsigned = 0
    signed = 1


class IntegerOverflow(Enum):
    none = 0
    nsw = 1
    nuw = 2
    nw = 3


class MemoryOrderingSemantics(Enum):
    weak = 0
    relaxed = 1
    acquire = 2
    release = 3
    acq_rel = 4


class MemoryScope(Enum):
    tl_blk = 0
    device = 1
    sys = 2


class AtomicRMWMode(Enum):
    and_ = 0
    or_ = 1
    xor = 2
    add = 3
    addf = 4
    max = 5
    min = 6
    umax = 7
    umin = 8
    xchg = 9

    @property
    def text(self) -> str:
        return self.name.rstrip("_")


class SymbolVisibility(Enum):
    public = 0
    private = 1


# Enums cuda-tile keeps as plain i32 attributes (ODS I32EnumAttr, no attribute of the
# dialect wraps them): the generic form writes them `0 : i32`.
INTEGER_ENUMS: frozenset[type[Enum]] = frozenset({MemoryOrderingSemantics, MemoryScope,
                                                   AtomicRMWMode})


def enum_text(member: Enum) -> str:
    """The text spelling of an enum member (``and_`` is spelled ``and``)."""
    return member.name.rstrip("_")


def enum_from_text(enum_cls: type[Enum], text: str) -> Enum:
    """Look a member up by its text spelling; raises KeyError if there is none."""
    for member in enum_cls:
        if enum_text(member) == text:
            return member
    raise KeyError(text)


ENUMS: dict[str, type[Enum]] = {
    cls.__name__: cls
    for cls in (RoundingMode, ComparisonPredicate, ComparisonOrdering, Signedness,
                IntegerOverflow, MemoryOrderingSemantics, MemoryScope, AtomicRMWMode,
                SymbolVisibility)
}
