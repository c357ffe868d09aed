"""lower-convert-layout: each conversion between register layouts takes the cheapest route
the layout algebra allows.  tile-layout -> tile-layout.

``convert_layout`` between two distributed layouts (assign-layouts and lower-reductions
write them) is classified by nanotile.ir.layouts.conversion:

- ``none``: the same layout: the op goes;
- ``registers``: every thread already holds what it needs: the op stays, and distribute
  turns it into a renaming of registers (no instruction);
- ``warp`` or ``shared``: data crosses threads: the op becomes a round trip through a
  shared buffer, ``convert_layout`` to ``#shared`` and back (swizzled for 2-D tiles, so
  that the column reads of a transposing conversion spread over the banks).

Conversions that already read or write ``#shared`` are left as they are.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...ir import types as T
from ...ir.core import Module, Operation, make_op
from ...ir.layouts import LinearLayout, conversion
from ...ir.rewrite import all_ops, erase, insert_before, replace_uses
from ...passes.base import Pass, PassContext
from .layout_rules import shared_layout


@dataclass(frozen=True)
class LowerConvertLayout(Pass):
    """Conversions between register layouts: none, a renaming, or via shared memory."""

    name = "lower-convert-layout"
    input = "tile-layout"
    output = "tile-layout"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        mapping = {}
        for op in list(all_ops(module)):
            if op.name != "convert_layout":
                continue
            src, dst = op.operands[0].type.layout, op.results[0].type.layout
            if not (isinstance(src, LinearLayout) and isinstance(dst, LinearLayout)):
                continue
            kind = conversion(src, dst)
            if kind == "none":
                mapping[op.results[0]] = op.operands[0]
                erase(op)
                changed = True
            elif kind in ("warp", "shared"):
                through_shared(op)
                changed = True
        replace_uses(module, mapping)
        return changed


def through_shared(op: Operation) -> None:
    """Make ``op`` (register layout A -> B) a store to a shared buffer and a load back."""
    source: T.TileType = op.operands[0].type
    staged = make_op("convert_layout", [op.operands[0]],
                     [dataclasses.replace(source, layout=shared_layout(
                         source, swizzled=source.rank >= 2))])
    insert_before(op, staged)
    op.operands[0] = staged.results[0]
