"""Facts written into the IR: what ``assume-to-facts`` learned about a value is kept as a
discardable attribute of the value's owner, so that a printed stage carries its facts and
a pipeline resumed from a dump knows what the original run knew.

- results of an op: ``nanotile.facts`` on the op, one list of predicates per result:
  ``%n = get_tile_block_id {nanotile.facts = [[#cuda_tile.bounded<0, 7>], [], []]}``;
- block arguments (an entry's parameters, a loop's iteration values): ``nanotile.args``
  on the op that owns the block, one list per argument of its first block:
  ``entry @k(...) attributes {nanotile.args = [[#cuda_tile.div_by<16>], []]}``.

The predicates are the assume predicates (nanotile.ir.attrs: DivByAttr, BoundedAttr,
SameElementsAttr). A parsed file holds the attribute as text (an OpaqueAttr); ``read``
turns it back into predicates.
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
    from ..ir.asm_attrs import AsmError
    from .language import op_error

    try:
        return fact_lists(op.attributes.get(key))
    except (ValueError, AsmError) as e:
        raise CompileError(op_error(op, f"attribute {key}: {e}")) from None


def fact_lists(attribute: Any) -> list[list[Any]]:
    """The per-value predicate lists of a facts attribute (as built, or parsed text)."""
    if attribute is None:
        return []
    if isinstance(attribute, A.OpaqueAttr):
        return _parse_lists(attribute.text)
    if not isinstance(attribute, list | tuple) or \
            not all(isinstance(x, list | tuple) for x in attribute):
        raise ValueError("expected a list of predicate lists, e.g. [[#cuda_tile.div_by<16>], []]")
    lists = [list(x) for x in attribute]
    if not all(isinstance(p, PREDICATES) for x in lists for p in x):
        raise ValueError("expected div_by, bounded or same_elements predicates, e.g. "
                         "[[#cuda_tile.div_by<16>], []]")
    return lists


def _parse_lists(text: str) -> list[list[Any]]:
    """``[[#cuda_tile.div_by<16>], []]`` -> [[DivByAttr(16)], []]."""
    from ..ir.asm_attrs import parse_sub, strip_prefix

    inner = _split(_unwrap(text.strip(), "[", "]"))
    return [[parse_sub(strip_prefix(p), "predicate") for p in _split(_unwrap(group, "[", "]"))]
            for group in inner]


def _unwrap(text: str, left: str, right: str) -> str:
    text = text.strip()
    if not (text.startswith(left) and text.endswith(right)):
        raise ValueError(f"expected {left}...{right}, got '{text}'")
    return text[1:-1]


def _split(text: str) -> list[str]:
    """Top-level comma-separated parts (commas inside <> or [] do not split)."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "<[":
            depth += 1
        elif c in ">]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    last = text[start:]
    if last.strip() or parts:
        parts.append(last)
    return [p.strip() for p in parts]
