"""vectorize-memory: loads and stores that may move several elements per instruction say
how many.  tile-layout -> tile-layout.

A thread whose registers 0..v-1 hold v consecutive elements of one dimension
(``LinearLayout.run_dim`` and ``contiguous_registers``; assign-layouts gives loads and
stores such a layout along the dimension contiguous in memory when it can,
contiguity.access_dim) may load or store them with one ``ld.global.v{v}``, if their
addresses are consecutive and the first is aligned to the whole vector, and if the mask
is the same for all v (contiguity.vector_width along that dimension, from the pointer
arithmetic and the kernel's ``div_by`` facts). The pass writes that v as the attribute
``nanotile.vector`` of ``load_ptr_tko`` / ``store_ptr_tko`` (absent: one element per
instruction); each group of v registers is then one access (distribute,
select-instructions).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import attrs as A
from ...ir import types as T
from ...ir.core import Module
from ...ir.layouts import LinearLayout
from ...ir.rewrite import all_ops
from ...passes.base import Pass, PassContext
from .contiguity import Contiguity, vector_width
from .shared_memory import element_bytes

VECTOR = "nanotile.vector"


@dataclass(frozen=True)
class VectorizeMemory(Pass):
    """Mark loads and stores of contiguous, aligned elements as vector accesses."""

    name = "vectorize-memory"
    input = "tile-layout"
    output = "tile-layout"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        info = Contiguity(ctx.facts)
        changed = False
        for op in all_ops(module):
            if op.name not in ("load_ptr_tko", "store_ptr_tko"):
                continue
            pointers = op.operands[0].type
            layout = pointers.layout
            if not isinstance(layout, LinearLayout) or pointers.num_elements == 1:
                continue
            size = element_bytes(pointers.element.pointee)
            dim = layout.run_dim()
            width = min(layout.contiguous_registers(dim), vector_width(info, op, size, dim=dim))
            if width > 1 and vector_of(op) != width:
                op.attributes[VECTOR] = A.IntegerAttr(width, T.I32)
                changed = True
        return changed


def vector_of(op) -> int:
    """The vector width vectorize-memory gave a load or store (1 if none)."""
    attr = op.attributes.get(VECTOR)
    return int(getattr(attr, "value", attr)) if attr is not None else 1
