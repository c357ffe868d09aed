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
- the tile takes at most 64 KB (it is staged in shared memory whole; 128 KB for an
  atomic view's reduction, below);
- its optimization hints do not say ``allow_tma = false`` (select_tma_loads.tma_allowed);
- its token is the kernel's first, or none, and nothing uses the token it returns (the
  copy is waited for before the kernel goes on, but later memory ops are not ordered
  after it through the async proxy).

An ``atomic_red_view_tko`` leaves by TMA too, as a ``tma_store`` with its mode as
``reduction`` (``cp.reduce.async.bulk.tensor``: each element combined with the tensor's
atomically; tileiras 13.4 compiles the atomic views of cutile-tests so, UTMAREDG in its
SASS), whatever computed the value, when it is relaxed (at block or device scope: the
copy's reductions are atomic at device scope, not for the system), its mode and element
type are in nanotile.ir.tensor_maps.REDUCTIONS, and the view, the tile and the tokens
qualify as above. The map of a bitwise reduction (and, or, xor) is ``unsigned``, as the
hardware needs (tensor_maps.UNSIGNED_REDUCTIONS).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...ir import types as T
from ...ir.core import Module, Operation, Value, make_op
from ...ir.enums import MemoryOrderingSemantics, MemoryScope
from ...ir.tensor_maps import REDUCTIONS, UNSIGNED_REDUCTIONS
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
# An atomic view's reduction stages up to 128x128 i64: tileiras 13.4 reduces that tile
# through one 128 KB buffer too (its SASS: 8 UTMAREDG, 132,160 bytes of shared memory);
# its atomics alone would be 16,384 instructions.
MAX_REDUCTION_BUFFER = 128 * 1024


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
                if not tma_allowed(op, self.gpu):
                    continue
                if op.name == "store_view_tko" and _from_mmaf(op.operands[0]):
                    changed |= _select(op, op.operands[0], op.operands[1], entry, used, ctx,
                                       TMA_ELEMENTS)
                elif op.name == "atomic_red_view_tko" and _reducible(op):
                    mode = op.attributes["mode"].text
                    changed |= _select(op, op.operands[-2] if _has_token(op) else
                                       op.operands[-1], op.operands[0], entry, used, ctx,
                                       REDUCTIONS[mode], mode)
        return changed


def _has_token(op: Operation) -> bool:
    return isinstance(op.operands[-1].type, T.TokenType)


def _reducible(op: Operation) -> bool:
    """An atomic_red_view_tko TMA can reduce (see the module docstring)."""
    attributes = op.attributes
    return attributes["memory_ordering_semantics"] == MemoryOrderingSemantics.relaxed and \
        attributes["memory_scope"] != MemoryScope.sys and \
        attributes["mode"].text in REDUCTIONS


def _select(op: Operation, value: Value, view: Value, entry: Operation, used: set[Value],
            ctx: PassContext, elements: dict[str, int], reduction: str | None = None
            ) -> bool:
    """``op`` (a store or an atomic reduction of ``value`` through ``view``) as a
    tma_store, if the view, the tile and the tokens qualify."""
    token = op.operands[-1] if _has_token(op) else None
    if op.results[0] in used:
        return False
    if token is not None and not (isinstance(token.owner, Operation) and
                                  token.owner.name == "make_token"):
        return False
    t = value.type
    element = t.element.name if isinstance(t, T.TileType) else None
    if element not in elements or t.rank != 2:
        return False
    if t.num_elements * elements[element] > (MAX_REDUCTION_BUFFER if reduction else
                                             MAX_BUFFER):
        return False
    try:
        layout = tma_box_layout(t.shape, elements[element])
    except ValueError:
        return False
    spec = tensor_map(view, entry, layout, ctx, elements)
    if spec is None or spec.element != element:
        return False
    indices = op.operands[1:1 + len(spec.shape)] if reduction else \
        op.operands[2:2 + len(spec.shape)]
    if any(not is_i32_index(v) for v in indices):
        return False
    coordinates = first_element(op, indices, view.type.tile_shape)
    if reduction in UNSIGNED_REDUCTIONS:
        spec = replace(spec, unsigned=True)
    attributes = {"tensor": spec.text()}
    if reduction is not None:
        attributes["reduction"] = reduction
    store = make_op("tma_store", [value, *coordinates], [], attributes)
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
