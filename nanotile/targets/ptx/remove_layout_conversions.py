"""remove-layout-conversions: conversions that cost more than computing the value again
go.  tile-layout -> tile-layout.

assign-layouts gives each value one layout, so a value whose users want different
layouts (an ``iota`` that indexes both the rows and the columns of a tile, a constant
used by two loads in different layouts) is converted for all but one of them, and a
conversion that moves elements between threads costs a round trip through shared
memory and two barriers. Many such values are cheap to compute again in the wanted
layout, because each thread can make its own elements:

- ``iota`` and splat ``constant`` (each thread knows its coordinates);
- a value with a single element (every thread holds it already);
- ``broadcast``, ``reshape``, ``permute`` and elementwise ops of such values, the
  operands taking the layout the op asks of them in the new layout (the layout
  algebra's ``broadcast_source``, ``reshape``, ``permute``), at most MAX_OPS ops.

``convert_layout %x : A -> B`` of such an ``%x`` (B a register layout) is replaced by a
copy of the ops computing ``%x`` with their results in B, placed just before the
conversion. A conversion of a conversion whose middle value has no other use becomes
one conversion, and a conversion to the layout the value already has goes. Ops left
without users by the rewrites are removed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...ir import types as T
from ...ir.core import Module, Operation, Value, make_op
from ...ir.layouts import LinearLayout
from ...ir.optable import lookup
from ...ir.rewrite import (
    all_ops,
    collect_uses,
    defining_op,
    erase,
    insert_before,
    is_pure,
    splat_number,
)
from ...passes.base import Pass, PassContext

MAX_OPS = 8  # ops copied for one conversion: beyond this, shared memory is cheaper

_LEAVES = frozenset({"iota", "constant"})


@dataclass(frozen=True)
class RemoveLayoutConversions(Pass):
    """Recompute cheap values in the layout their user wants instead of converting."""

    name = "remove-layout-conversions"
    input = "tile-layout"
    output = "tile-layout"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        replaced: list[Operation] = []
        for op in list(all_ops(module)):
            if op.name == "convert_layout":
                new = _simplify(op)
                if new is not None:
                    _replace_all_uses(module, op.results[0], new)
                    replaced.append(op)
        _erase_with_unused_sources(module, replaced)
        return bool(replaced)


def _simplify(op: Operation) -> Value | None:
    """The value that replaces the result of ``op`` (a convert_layout), or None."""
    source, result = op.operands[0], op.results[0]
    want = result.type.layout
    if source.type.layout == want:
        return source
    if not isinstance(want, LinearLayout):
        return None
    copies = recompute_plan(source, want)
    if copies is not None:
        return _emit(op, source, want, copies)
    inner = defining_op(source)
    if inner is not None and inner.name == "convert_layout" and \
            isinstance(inner.operands[0].type.layout, LinearLayout):
        # convert(convert(x)): one conversion from x (the middle value may have other users:
        # it then stays for them)
        direct = make_op("convert_layout", [inner.operands[0]], [result.type])
        insert_before(op, direct)
        return direct.results[0]
    return None


def recompute_plan(value: Value, layout: LinearLayout, memo: dict | None = None
                   ) -> list[tuple[Value, object]] | None:
    """The values to compute again, each with its new layout, operands before users; None
    when ``value`` is not cheap to recompute in ``layout``. ``memo`` keeps the layouts
    each op's operands need, by op and layout, for callers that plan many times over
    the same ops (the layout e-graph's extraction prices hundreds of plans)."""
    plan: list[tuple[Value, object]] = []
    seen: dict[Value, object] = {}

    def visit(v: Value, wanted: object) -> bool:
        if _single_element(v):
            return True  # every thread has it: used as it is
        if seen.get(v) == wanted:
            return True
        if v in seen or len(plan) >= MAX_OPS:
            return False  # the same value in two new layouts, or too many copies
        op = defining_op(v)
        if op is None or len(op.results) != 1 or op.regions or not is_pure(op):
            return False
        if memo is None:
            operand_layouts = _operand_layouts(op, wanted)
        else:
            key = (id(op), wanted)
            if key not in memo:
                memo[key] = _operand_layouts(op, wanted)
            operand_layouts = memo[key]
        if operand_layouts is None:
            return False
        for operand, operand_layout in zip(op.operands, operand_layouts):
            if not visit(operand, operand_layout):
                return False
        seen[v] = wanted
        plan.append((v, wanted))
        return True

    return plan if visit(value, layout) and plan else None


def _operand_layouts(op: Operation, layout: object) -> list[object] | None:
    """The layouts ``op``'s operands need for its result to come out in ``layout``."""
    if not isinstance(layout, LinearLayout):
        return None
    if op.name in _LEAVES:
        return [] if op.name == "iota" or _is_splat(op) else None
    if not op.operands or not all(isinstance(v.type, T.TileType) for v in op.operands):
        return None
    source = op.operands[0].type
    try:
        if op.name == "broadcast":
            return [layout.broadcast_source(source.shape)]
        if op.name == "reshape":
            return [layout.reshape(source.shape)]
        if op.name == "permute":
            permutation = op.attributes["permutation"]
            inverse = [0] * len(permutation)
            for i, p in enumerate(permutation):
                inverse[p] = i
            return [layout.permute(tuple(inverse))]
    except (ValueError, AssertionError):
        return None  # the layout algebra cannot express the operand's layout
    row = lookup(op.name)
    if row is None or "elementwise" not in row.traits:
        return None
    shape = op.results[0].type.shape
    wants: list[object] = []  # a one-element operand every thread holds as it is
    for v in op.operands:
        if v.type.shape == shape:
            wants.append(layout)
        elif _single_element(v):
            wants.append(None)
        else:
            return None
    return wants


def _is_splat(op: Operation) -> bool:
    return splat_number(op.results[0]) is not None


def _single_element(v: Value) -> bool:
    return isinstance(v.type, T.TileType) and v.type.num_elements == 1


def _emit(anchor: Operation, root: Value, layout: LinearLayout,
          plan: list[tuple[Value, object]]) -> Value:
    """Copies of the planned ops before ``anchor``, with their results in the new layouts;
    the copy of ``root``."""
    copies: dict[Value, Value] = {}
    for value, new_layout in plan:
        op = defining_op(value)
        assert op is not None
        copy = make_op(op.name, [copies.get(v, v) for v in op.operands],
                       [dataclasses.replace(value.type, layout=new_layout)],
                       dict(op.attributes), [],
                       list(op.operand_segments) if op.operand_segments else None,
                       op.location)
        copy.source = op.source
        copy.results[0].name_hint = value.name_hint
        insert_before(anchor, copy)
        copies[value] = copy.results[0]
    return copies[root]


def _replace_all_uses(module: Module, old: Value, new: Value) -> None:
    for op in all_ops(module):
        if old in op.operands:
            op.operands = [new if v is old else v for v in op.operands]


def _erase_with_unused_sources(module: Module, replaced: list[Operation]) -> None:
    """Remove the replaced conversions, then the pure ops that computed their operands and
    that nothing uses any more (transitively)."""
    uses = collect_uses(module)
    work = list(replaced)
    while work:
        op = work.pop()
        if op.parent is None or any(uses.get(r) for r in op.results) or \
                op.regions or not is_pure(op):
            continue
        erase(op)
        for v in op.operands:
            users = uses.get(v, [])
            if op in users:
                users.remove(op)
            source = defining_op(v)
            if source is not None and not users:
                work.append(source)
