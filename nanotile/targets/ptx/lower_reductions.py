"""lower-reductions: a reduce that crosses threads becomes steps that each stay within one
kind of hardware index.  tile-layout -> tile-layout.

A reduce whose combiner may be reordered (layout_rules.reorderable: one integer op, or a
float op rounding to nearest) along a dimension spread over registers, lanes and warps
(layout_rules.reduction_strategy "split") is rewritten with ops the layout algebra
makes free and reduces that distribute lowers directly:

1. ``reshape`` splits the dimension into one dimension of size 2 per index bit and
   ``permute`` gathers them by what holds them, then ``reshape`` joins each group:
   [..., registers, lanes, warps] (reshape and permute relabel a linear layout: no data
   moves);
2. ``reduce`` over the register part: a fold in each thread's registers;
3. ``reduce`` over the lane part: a butterfly of warp shuffles (every lane ends with the
   warp's value);
4. ``convert_layout`` puts the warp part into registers (through shared memory,
   lower-convert-layout), and a last in-thread ``reduce`` combines the warps' partials.

The result is the original reduce's (a ``convert_layout`` if the final layout differs).
Reduces already within one thread's registers, scans, and combiners whose order matters
(their operands go through shared memory: assign-layouts) are left as they are. The
interpreter runs the output: it folds the same values in another order, which the
combiners allow.
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
            kinds = bit_kinds(layout, op.attributes["dim"])
            if kinds is None or all(k == "register" for k in kinds):
                continue
            mapping[op.results[0]] = split(op, kinds)
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


def split(op: Operation, kinds: list[str]) -> Value:
    """The steps of the module docstring, inserted before ``op``; returns the result."""
    x = op.operands[0]
    t: T.TileType = x.type
    dim, layout = op.attributes["dim"], t.layout
    shape = t.shape
    rank = len(shape)
    bits = len(kinds)
    # 1. one dimension per bit (row-major: the highest bit first), grouped by kind
    split_shape = shape[:dim] + (2,) * bits + shape[dim + 1:]
    x = _shape_op(op, "reshape", x, split_shape, layout.reshape(split_shape))
    others = [i for i in range(len(split_shape)) if not dim <= i < dim + bits]
    bit_dim = {b: dim + bits - 1 - b for b in range(bits)}  # bit -> its dimension
    groups = {k: [bit_dim[b] for b in reversed(range(bits)) if kinds[b] == k]
              for k in _ORDER}
    order = others + [d for k in _ORDER for d in groups[k]]
    permuted = tuple(split_shape[d] for d in order)
    x = _shape_op(op, "permute", x, permuted, x.type.layout.permute(tuple(order)),
                  permutation=tuple(order))
    sizes = [1 << len(groups[k]) for k in _ORDER if groups[k]]
    joined = tuple(shape[i] for i in range(rank) if i != dim) + tuple(sizes)
    x = _shape_op(op, "reshape", x, joined, x.type.layout.reshape(joined))
    # 2-4. registers, then lanes, then warps: each group, once reduced, leaves the next
    # one at the same position (just after the other dimensions)
    outer = rank - 1
    for kind in (k for k in _ORDER if groups[k]):
        if kind == "warp":
            x = _convert(op, x, _warps_to_registers(x.type.layout, outer))
        x = _reduce(op, x, outer)
    want = op.results[0].type
    if x.type != want:
        x = _convert(op, x, want.layout)
    return x


def _shape_op(op: Operation, name: str, x: Value, shape: tuple[int, ...],
              layout: LinearLayout, **attrs) -> Value:
    new = make_op(name, [x], [T.TileType(shape, x.type.element, layout)], attrs)
    insert_before(op, new)
    return new.results[0]


def _convert(op: Operation, x: Value, layout: LinearLayout) -> Value:
    new = make_op("convert_layout", [x], [dataclasses.replace(x.type, layout=layout)])
    insert_before(op, new)
    return new.results[0]


def _reduce(op: Operation, x: Value, dim: int) -> Value:
    """``reduce`` of ``x`` along ``dim`` with ``op``'s combiner and identity."""
    shape = x.type.shape[:dim] + x.type.shape[dim + 1:]
    result = T.TileType(shape, x.type.element, x.type.layout.slice(dim))
    new = make_op("reduce", [x], [result], {"dim": dim,
                                           "identities": op.attributes["identities"]},
                  [clone_region(op.regions[0])], operand_segments=op.operand_segments)
    insert_before(op, new)
    return new.results[0]


def _warps_to_registers(layout: LinearLayout, dim: int) -> LinearLayout:
    """``layout`` with the warp bases along ``dim`` turned into register bases (those
    warps then hold copies): the layout the last step reduces in registers."""
    mask = (layout.shape[dim] - 1) << dim_offsets(layout.shape)[dim]
    moved = tuple(b for b in layout.warp if b & mask)
    warps = tuple(0 if b & mask else b for b in layout.warp)
    return LinearLayout(layout.shape, layout.register + moved, layout.lane, warps)
