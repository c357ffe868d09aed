"""lower-reductions: a reduce that crosses threads becomes steps that each stay within one
kind of hardware index.  tile-layout -> tile-layout.

The spec lets a reduce combine a line's elements (and identities) in any order, so a
reduce along a dimension spread over registers, lanes and warps (layout_rules
.reduction_strategy "split": any number of operands, e.g. argmax's value and index,
with a body layout_rules.splittable accepts) is rewritten with ops the layout
algebra makes free and reduces that distribute lowers directly; every step reduces all
the operands together with the original body:

1. ``reshape`` splits the dimension into one dimension of size 2 per index bit and
   ``permute`` gathers them by what holds them, then ``reshape`` joins each group:
   [..., registers, lanes, warps] (reshape and permute relabel a linear layout: no data
   moves);
2. ``reduce`` over the register part: a fold in each thread's registers;
3. ``reduce`` over the lane part: a butterfly of warp shuffles (every lane ends with the
   warp's value);
4. ``convert_layout`` puts the warp part into registers (through shared memory,
   lower-convert-layout), and a last in-thread ``reduce`` combines the warps' partials.

The results are the original reduce's (a ``convert_layout`` each if the final layout
differs). Only the warps' partials go through shared memory. Reduces already within one
thread's registers, scans, and bodies ``splittable`` refuses (their operands go through
shared memory: assign-layouts) are left as they are. The interpreter runs the output: it
folds the same values in another order, which the spec allows (float results may move by
rounding, which the oracles accept for float reductions: passes/semantics.py
``float_reduction_feeds_output``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...ir import types as T
from ...ir.core import Module, Operation, Value, make_op
from ...ir.layouts import LinearLayout, dim_offsets, log2
from ...ir.rewrite import all_ops, clone_region, erase, insert_before, replace_uses
from ...passes.base import Pass, PassContext
from .layout_rules import reduction_strategy

_ORDER = ("register", "lane", "warp")


@dataclass(frozen=True)
class LowerReductions(Pass):
    """Split a reduce across threads into register, lane and warp steps."""

    name = "lower-reductions"
    input = "tile-layout"
    output = "tile-layout"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        mapping: dict[Value, Value] = {}
        for op in list(all_ops(module)):
            if op.name != "reduce":
                continue
            layout = op.operands[0].type.layout
            if not isinstance(layout, LinearLayout) or \
                    reduction_strategy(op, layout) != "split":
                continue
            if any(v.type.layout != layout for v in op.operands[1:]):
                continue  # assign-layouts gives all operands the first one's layout
            kinds = bit_kinds(layout, op.attributes["dim"])
            if kinds is None or all(k == "register" for k in kinds):
                continue
            mapping.update(zip(op.results, split(op, kinds)))
            erase(op)
        replace_uses(module, mapping)
        return bool(mapping)


def bit_kinds(layout: LinearLayout, dim: int) -> list[str] | None:
    """For each bit of ``dim`` (lowest first), whether a register, lane or warp basis
    holds it; None when some basis is not a single bit of one dimension (the split needs
    each bit to belong to one input)."""
    offset = dim_offsets(layout.shape)[dim]
    bits = log2(layout.shape[dim])
    mask = ((1 << bits) - 1) << offset
    kinds: list[str | None] = [None] * bits
    for kind, bases in zip(_ORDER, (layout.register, layout.lane, layout.warp)):
        for b in bases:
            if not b & mask:
                continue
            if b & (b - 1) or b & ~mask:
                return None
            kinds[(b >> offset).bit_length() - 1] = kind
    if any(k is None for k in kinds):
        return None
    return kinds  # type: ignore[return-value]


def split(op: Operation, kinds: list[str]) -> list[Value]:
    """The steps of the module docstring, inserted before ``op``, applied to all its
    operands together (each step is one reduce of them all, with ``op``'s body); returns
    the results."""
    xs = list(op.operands)
    t: T.TileType = xs[0].type
    dim, layout = op.attributes["dim"], t.layout
    shape = t.shape
    rank = len(shape)
    bits = len(kinds)
    # 1. one dimension per bit (row-major: the highest bit first), grouped by kind
    split_shape = shape[:dim] + (2,) * bits + shape[dim + 1:]
    xs = [_shape_op(op, "reshape", x, split_shape, layout.reshape(split_shape)) for x in xs]
    others = [i for i in range(len(split_shape)) if not dim <= i < dim + bits]
    bit_dim = {b: dim + bits - 1 - b for b in range(bits)}  # bit -> its dimension
    groups = {k: [bit_dim[b] for b in reversed(range(bits)) if kinds[b] == k]
              for k in _ORDER}
    order = others + [d for k in _ORDER for d in groups[k]]
    permuted = tuple(split_shape[d] for d in order)
    xs = [_shape_op(op, "permute", x, permuted, x.type.layout.permute(tuple(order)),
                    permutation=tuple(order)) for x in xs]
    sizes = [1 << len(groups[k]) for k in _ORDER if groups[k]]
    joined = tuple(shape[i] for i in range(rank) if i != dim) + tuple(sizes)
    xs = [_shape_op(op, "reshape", x, joined, x.type.layout.reshape(joined)) for x in xs]
    # 2-4. registers, then lanes, then warps: each group, once reduced, leaves the next
    # one at the same position (just after the other dimensions)
    outer = rank - 1
    for kind in (k for k in _ORDER if groups[k]):
        if kind == "warp":
            xs = [_convert(op, x, _warps_to_registers(x.type.layout, outer)) for x in xs]
        xs = _reduce(op, xs, outer)
    results = []
    for x, want in zip(xs, (r.type for r in op.results)):
        if x.type != want:
            x = _convert(op, x, want.layout)
        results.append(x)
    return results


def _shape_op(op: Operation, name: str, x: Value, shape: tuple[int, ...],
              layout: LinearLayout, **attrs) -> Value:
    new = make_op(name, [x], [T.TileType(shape, x.type.element, layout)], attrs)
    insert_before(op, new)
    return new.results[0]


def _convert(op: Operation, x: Value, layout: LinearLayout) -> Value:
    new = make_op("convert_layout", [x], [dataclasses.replace(x.type, layout=layout)])
    insert_before(op, new)
    return new.results[0]


def _reduce(op: Operation, xs: list[Value], dim: int) -> list[Value]:
    """``reduce`` of ``xs`` (all of one shape and layout) along ``dim`` with ``op``'s
    body and identities."""
    shape = xs[0].type.shape[:dim] + xs[0].type.shape[dim + 1:]
    layout = xs[0].type.layout.slice(dim)
    results = [T.TileType(shape, x.type.element, layout) for x in xs]
    new = make_op("reduce", xs, results, {"dim": dim,
                                          "identities": op.attributes["identities"]},
                  [clone_region(op.regions[0])], operand_segments=op.operand_segments)
    insert_before(op, new)
    return list(new.results)


def _warps_to_registers(layout: LinearLayout, dim: int) -> LinearLayout:
    """``layout`` with the warp bases along ``dim`` turned into register bases (those
    warps then hold copies): the layout the last step reduces in registers."""
    mask = (layout.shape[dim] - 1) << dim_offsets(layout.shape)[dim]
    moved = tuple(b for b in layout.warp if b & mask)
    warps = tuple(0 if b & mask else b for b in layout.warp)
    return LinearLayout(layout.shape, layout.register + moved, layout.lane, warps)
