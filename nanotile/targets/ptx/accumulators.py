"""Which values of an entry hold an mma's accumulator, in the accumulator's layout.

assign-layouts keeps an mma's accumulator in the layout the mma computes it in (the
mma.sync fragments, or the FMA loop's blocked layout) across the K loop, and stores it
from there, as tileiras stores matmul_f16 from its fragments: converting a 256 x 256 f32
accumulator to another layout would need the whole tile, 256 KB, in shared memory, more
than a CTA has. A value holds an accumulator when it is

- an mma's result;
- a for's result that every continue of its body gives such a value (the K loop);
- a reshape of one (the layout algebra reshapes the layout), or an elementwise op of one
  (an epilogue's conversion, bias or activation), which computes in the same layout.
"""

from __future__ import annotations

from ...ir import types as T
from ...ir.core import Block, Operation, Value
from ...ir.layouts import LinearLayout
from ...ir.optable import lookup
from ...ir.rewrite import loop_terminators


def accumulator_values(body: Block, layouts: dict[Value, object],
                       mmas: set[Operation]) -> dict[Value, LinearLayout]:
    """The accumulator values of ``body`` (nested blocks included) and their layouts;
    ``layouts`` holds the layout of each mma's result, ``mmas`` the mma ops."""
    found: dict[Value, LinearLayout] = {}

    def visit(block: Block) -> None:
        for op in block.ops:
            for region in op.regions:
                for inner in region.blocks:
                    visit(inner)
            if op in mmas:
                found[op.results[0]] = layouts[op.results[0]]
            elif op.name == "for":
                _carried(op, found)
            elif op.name == "reshape" and op.operands[0] in found:
                found[op.results[0]] = found[op.operands[0]].reshape(op.results[0].type.shape)
            elif "elementwise" in getattr(lookup(op.name), "traits", ()):
                _elementwise(op, found)

    visit(body)
    return found


def _carried(loop: Operation, found: dict[Value, LinearLayout]) -> None:
    continues = loop_terminators(loop.regions[0].blocks[0], "continue")
    for i, result in enumerate(loop.results):
        layouts = {found.get(term.operands[i]) for term in continues}
        if continues and len(layouts) == 1 and None not in layouts:
            found[result] = layouts.pop()


def _elementwise(op: Operation, found: dict[Value, LinearLayout]) -> None:
    if len(op.results) != 1 or not isinstance(op.results[0].type, T.TileType):
        return
    for v in op.operands:
        layout = found.get(v)
        if layout is not None and layout.shape == op.results[0].type.shape:
            found[op.results[0]] = layout
            return
