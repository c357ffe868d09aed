"""select-tma-stores{gpu}: a matmul's result stored through a view leaves by TMA.
tile-opt -> tile-opt.

A wgmma accumulator is spread over the warpgroup's registers in fragment rows, so an
ordinary store writes it element by element, each with its address and bounds check.
tileiras writes matmul epilogues to shared memory instead and copies them out with TMA
(``cp.async.bulk.tensor`` shared -> global, which skips elements outside the tensor).
This pass turns such a ``store_view_tko`` into ``tma_store``: the value (which
assign-layouts then converts to the boxes' shared layout, nanotile.ir.layouts
.tma_box_layout), the tile's first element and the tensor map's description.

A store qualifies when:

- its value is an mmaf's result, or a conversion (ftof) of one, or a loop's result
  that an mmaf makes: an epilogue, where the tile is large and already distributed
  across the CTA (elsewhere a shared-memory round trip would cost more than it saves);
- its view is one select-tma-loads could read (a 2-D partition of an f16/bf16/f32
  tensor view of the kernel's arguments, 16-byte aligned base and row stride), with
  boxes of one swizzle atom of columns and all rows (at most 256);
- the tile takes at most 64 KB (it is staged in shared memory whole);
- its optimization hints do not say ``allow_tma = false`` (select_tma_loads.tma_allowed);
- its token is the kernel's first, or none, and nothing uses the token it returns (the
  copy is waited for before the kernel goes on, but later memory ops are not ordered
  after it through the async proxy).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import types as T
from ...ir.core import Module, Operation, Value, make_op
from ...ir.layouts import tma_box_layout
from ...ir.rewrite import erase, insert_before
from ...passes.base import Pass, PassContext
from .select_tma_loads import (
    TMA_ELEMENTS,
    first_element,
    is_i32_index,
    tensor_map,
    tma_allowed,
)


# The largest tile the epilogue stages in shared memory at once (bytes): 128x128 f32.
# The whole tile goes through one buffer, beside whatever else the kernel keeps there
# (a 256x256 f32 accumulator would need 256 KB, more than a CTA has).
MAX_BUFFER = 64 * 1024


@dataclass(frozen=True)
class SelectTmaStores(Pass):
    """Stores of a matmul's result through a view -> tma_store (TMA out of shared memory)."""

    name = "select-tma-stores"
    input = "tile-opt"
    output = "tile-opt"
    gpu: str = "sm_90"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        for entry in module.entries():
            used = {v for op in entry.walk() for v in op.operands}
            for op in list(entry.walk()):
                if op.name == "store_view_tko" and tma_allowed(op, self.gpu):
                    changed |= _select(op, entry, used, ctx)
        return changed


def _select(op: Operation, entry: Operation, used: set[Value], ctx: PassContext) -> bool:
    value, view = op.operands[0], op.operands[1]
    token = op.operands[-1] if isinstance(op.operands[-1].type, T.TokenType) else None
    if op.results[0] in used or not _from_mmaf(value):
        return False
    if token is not None and not (isinstance(token.owner, Operation) and
                                  token.owner.name == "make_token"):
        return False
    t = value.type
    element = t.element.name if isinstance(t, T.TileType) else None
    if element not in TMA_ELEMENTS or t.rank != 2:
        return False
    if t.num_elements * TMA_ELEMENTS[element] > MAX_BUFFER:
        return False
    try:
        layout = tma_box_layout(t.shape, TMA_ELEMENTS[element])
    except ValueError:
        return False
    spec = tensor_map(view, entry, layout, ctx)
    if spec is None or spec.element != element:
        return False
    indices = op.operands[2:2 + len(spec.shape)]
    if any(not is_i32_index(v) for v in indices):
        return False
    coordinates = first_element(op, indices, view.type.tile_shape)
    store = make_op("tma_store", [value, *coordinates], [], {"tensor": spec.text()})
    store.operand_segments = [1, len(coordinates)]
    store.source, store.location = op.source, op.location
    insert_before(op, store)
    erase(op)
    return True


def _from_mmaf(v: Value) -> bool:
    """``v`` is an mmaf's result, through ftof and the loop that carries it."""
    owner = v.owner
    while isinstance(owner, Operation) and owner.name == "ftof":
        v = owner.operands[0]
        owner = v.owner
    if not isinstance(owner, Operation):
        return False
    if owner.name == "mmaf":
        return True
    if owner.name == "for":
        body = owner.regions[0].blocks[0]
        index = owner.results.index(v)
        yielded = body.ops[-1].operands[index]
        return isinstance(yielded.owner, Operation) and yielded.owner.name == "mmaf"
    return False
