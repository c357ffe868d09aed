"""simplify-grid-queries: one grid query per kernel, and facts about their uses.  tile -> tile.

- ``get_tile_block_id`` and ``get_num_tile_blocks`` give the same values everywhere in a
  kernel: each kernel keeps one of each, at the top of its body; the others are merged
  into it (so loops and branches no longer repeat them).
- Comparisons that the grid decides are folded: ``bid < num`` (same axis) is true,
  ``bid >= num`` is false, and ``bid >= 0`` / ``bid < 0`` (signed) are true / false.
  The facts ``bounded<0, ?>`` (block ids) and ``bounded<1, ?>`` (grid sizes) are
  recorded for later passes.
- ``get_index_space_shape`` of a partition view of a static tensor whose sizes are
  multiples of the tile becomes constants; ``get_tensor_shape`` of a view made in the
  kernel becomes the shape it was made with.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.attrs import BoundedAttr
from ..ir.core import Module, Operation, Value
from ..ir.enums import ComparisonPredicate as P
from ..ir.enums import Signedness
from ..ir.rewrite import defining_op, erase, insert_before, make_splat, replace_uses, splat_number
from ..ir.types import PartitionViewType
from .base import Pass, PassContext

_QUERIES = ("get_tile_block_id", "get_num_tile_blocks")


def merge_queries(item: Operation, mapping: dict[Value, Value]) -> bool:
    """Keep one query of each kind at the top of ``item``'s body. True if anything moved."""
    body = item.regions[0].block
    changed = False
    position = 0
    for name in _QUERIES:
        found = [op for op in item.walk() if op.name == name]
        if not found:
            continue
        keep = found[0]
        for other in found[1:]:
            mapping.update(zip(other.results, keep.results))
            erase(other)
            changed = True
        if keep.parent is not body or body.ops.index(keep) != position:
            erase(keep)
            keep.parent = body
            body.ops.insert(position, keep)
            changed = True
        position += 1
    return changed


def _axis(v: Value, name: str) -> int | None:
    op = defining_op(v)
    return v.index if op is not None and op.name == name else None


def decide_comparison(op: Operation) -> bool | None:
    """The value of a cmpi that the grid decides, or None."""
    lhs, rhs = op.operands
    predicate = op.attributes["comparison_predicate"]
    bid_l, bid_r = _axis(lhs, _QUERIES[0]), _axis(rhs, _QUERIES[0])
    num_l, num_r = _axis(lhs, _QUERIES[1]), _axis(rhs, _QUERIES[1])
    if bid_l is not None and bid_l == num_r:  # bid ? num
        return {P.less_than: True, P.less_than_or_equal: True, P.greater_than_or_equal: False,
                P.greater_than: False, P.equal: False, P.not_equal: True}[predicate]
    if num_l is not None and num_l == bid_r:  # num ? bid
        return {P.greater_than: True, P.greater_than_or_equal: True, P.less_than: False,
                P.less_than_or_equal: False, P.equal: False, P.not_equal: True}[predicate]
    zero = splat_number(rhs)
    signed = op.attributes.get("signedness") == Signedness.signed
    if bid_l is not None and zero is not None and int(zero) == 0 and signed:
        return {P.greater_than_or_equal: True, P.less_than: False}.get(predicate)
    return None


def static_index_space(op: Operation) -> list[int] | None:
    """Index-space sizes of a static, evenly divided partition view, else None."""
    view = op.operands[0].type
    if not isinstance(view, PartitionViewType) or view.dim_map is not None:
        return None
    shape = view.tensor_view.shape
    if any(d is None for d in shape) or len(shape) != len(view.tile_shape):
        return None
    if any(d % t for d, t in zip(shape, view.tile_shape)):
        return None
    return [d // t for d, t in zip(shape, view.tile_shape)]


def made_shape(op: Operation) -> list[Value] | None:
    """The dynamic shape operands of the make_tensor_view a get_tensor_shape asks about."""
    maker = defining_op(op.operands[0])
    if maker is None or maker.name != "make_tensor_view" or maker.operand_segments is None:
        return None
    shape = maker.operand_groups()[1]
    if len(shape) != len(op.results) or any(a.type != r.type for a, r in
                                             zip(shape, op.results)):
        return None
    return shape


def simplify_use(op: Operation, mapping: dict[Value, Value]) -> bool:
    """Fold one query use into constants or known values. True if ``op`` was replaced."""
    if op.name == "cmpi":
        truth = decide_comparison(op)
        values = None if truth is None else [truth]
    elif op.name == "get_index_space_shape":
        values = static_index_space(op)
    elif op.name == "get_tensor_shape":
        shape = made_shape(op)
        if shape is not None:
            mapping.update(zip(op.results, shape))
            erase(op)
            return True
        values = None
    else:
        return False
    if values is None:
        return False
    for result, value in zip(op.results, values):
        constant = insert_before(op, make_splat(value, result.type))
        mapping[result] = constant.results[0]
    erase(op)
    return True


@dataclass(frozen=True)
class SimplifyGridQueries(Pass):
    """One block-id/grid-size query per kernel; fold what the grid and views decide."""

    name = "simplify-grid-queries"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        mapping: dict[Value, Value] = {}
        changed = False
        for item in module.entries():
            changed |= merge_queries(item, mapping)
            replace_uses(module, mapping)
            for op in [op for op in item.walk() if op is not item]:
                changed |= simplify_use(op, mapping)
            for op in item.regions[0].block.ops[:2]:
                if op.name in _QUERIES:
                    lower = 0 if op.name == _QUERIES[0] else 1
                    for result in op.results:
                        ctx.add_fact(result, BoundedAttr(lower, None))
        replace_uses(module, mapping)
        return changed
