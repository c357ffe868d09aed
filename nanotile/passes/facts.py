"""Facts written into the IR: what ``assume-to-facts`` learned about a value is kept as a
discardable attribute of the value's owner, so that a printed stage carries its facts and
a pipeline resumed from a dump knows what the original run knew.

- results of an op: ``nanotile.facts`` on the op, one list of predicates per result:
  ``%n = get_tile_block_id {nanotile.facts = [[#cuda_tile.bounded<0, 7>], [], []]}``;
- block arguments (an entry's parameters, a loop's iteration values): ``nanotile.args``
  on the op that owns the block, one list per argument of its first block:
  ``entry @k(...) attributes {nanotile.args = [[#cuda_tile.div_by<16>], []]}``.

The predicates are the assume predicates (nanotile.ir.attrs: DivByAttr, BoundedAttr,
SameElementsAttr); a parsed file holds them so too (the text reader reads an array of
attributes as a list).
"""

from __future__ import annotations

from typing import Any

from ..ir import attrs as A
from ..ir.core import Block, Module, Operation, Value

RESULTS = "nanotile.facts"
ARGUMENTS = "nanotile.args"

PREDICATES = (A.DivByAttr, A.BoundedAttr, A.SameElementsAttr)


def write(value: Value, predicates: list[Any]) -> None:
    """Record ``predicates`` (all that is known about ``value``) on its owner."""
    owner = value.owner
    if isinstance(owner, Operation):
        slots, key, values = owner, RESULTS, owner.results
    elif isinstance(owner, Block) and owner.parent is not None and \
            owner.parent.parent is not None:
        slots, key = owner.parent.parent, ARGUMENTS  # block -> region -> op
        values = owner.arguments
    else:
        return
    lists = [list(x) for x in fact_lists(slots.attributes.get(key))]
    lists += [[] for _ in range(len(values) - len(lists))]
    lists[values.index(value)] = list(predicates)
    slots.attributes[key] = lists


PREDICATES = (A.DivByAttr, A.BoundedAttr, A.SameElementsAttr)


def read(module: Module) -> dict[Value, list[Any]]:
    """Every fact the module's attributes record, by value. A malformed attribute is a
    CompileError at its op."""
    found: dict[Value, list[Any]] = {}
    for item in module.items:
        for op in item.walk():
            groups = [(op.results, RESULTS)]
            if op.regions and op.regions[0].blocks:
                groups.append((op.regions[0].blocks[0].arguments, ARGUMENTS))
            for values, key in groups:
                for value, predicates in zip(values, _lists_at(op, key)):
                    if predicates:
                        found[value] = list(predicates)
    return found


def _lists_at(op: Operation, key: str) -> list[list[Any]]:
    from ..diagnostics import CompileError
    from .language import op_error

    try:
        return fact_lists(op.attributes.get(key))
    except ValueError as e:
        raise CompileError(op_error(op, f"attribute {key}: {e}")) from None


def fact_lists(attribute: Any) -> list[list[Any]]:
    """The per-value predicate lists of a facts attribute."""
    if attribute is None:
        return []
    if not isinstance(attribute, list | tuple) or \
            not all(isinstance(x, list | tuple) for x in attribute):
        raise ValueError("expected a list of predicate lists, e.g. [[#cuda_tile.div_by<16>], []]")
    lists = [list(x) for x in attribute]
    if not all(isinstance(p, PREDICATES) for x in lists for p in x):
        raise ValueError("expected div_by, bounded or same_elements predicates, e.g. "
                         "[[#cuda_tile.div_by<16>], []]")
    return lists
