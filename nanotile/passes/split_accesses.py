"""split-accesses: a loaded tile that is only taken apart by ``extract``, and a stored
``cat``, become loads and stores of the parts.  tile -> tile.

``extract %t[e...]`` of a tile loaded from ``view[i...]`` is the load of a view of the
same tensor with tiles of the part's shape, at ``i * (tile / part) + e`` in each
dimension; a ``store_view_tko`` of ``cat %a, %b dim = k`` at ``view[i...]`` is two
stores of a view with half the tile along ``k``, at ``2 * i`` and ``2 * i + 1`` there
(the operands of a cat have equal shapes: every dimension of a tile is a power of two).
A store of a cat of cats splits again. The parts are then what later passes see: each
may become a strip loop (strip-mine) instead of one large tile moved whole and taken
apart in registers.

The same elements are read and written (an ``extract`` beyond its tile is undefined);
only the order of the accesses changes, which Tile IR leaves undefined between
token-ordered ops no token orders (spec, "Memory Model"). So the loads and stores are
weak, through partition views without a ``dim_map``, and nothing uses their tokens (the
parts take the token the whole took, if any).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Module, Operation, Value, make_op
from ..ir.rewrite import all_ops, collect_uses, defining_op, erase, erase_unused, insert_before, \
    make_splat, replace_uses, splat_value
from .base import Pass, PassContext
from .strips import is_unordered_view_access, resized_view


def splittable(op: Operation, uses: dict[Value, list[Operation]]) -> bool:
    """A view load or store that nothing orders (strips.is_unordered_view_access), its
    indices of one integer type."""
    indices = op.operand_groups()[1 if op.name == "load_view_tko" else 2]
    return is_unordered_view_access(op, uses) and len({index.type for index in indices}) == 1


def part_index(anchor: Operation, index: Value, ratio: int, offset: Value | int) -> Value:
    """``index * ratio + offset``, made before ``anchor`` (no op where one adds nothing)."""
    def emit(op: Operation) -> Value:
        return insert_before(anchor, op).results[0]

    if isinstance(offset, int):
        offset = emit(make_splat(offset, index.type))
    if splat_value(index) == 0:
        return offset
    if ratio != 1:
        index = emit(make_op("muli", [index, emit(make_splat(ratio, index.type))],
                             [index.type]))
    return index if splat_value(offset) == 0 else emit(make_op("addi", [index, offset],
                                                               [index.type]))


def split_load(load: Operation, extracts: list[Operation]) -> dict[Value, Value]:
    """Each extract of ``load``'s tile becomes a load of its part; returns what the
    extracts' results are now."""
    (view,), indices, token = load.operand_groups()
    tile, parts = view.type.tile_shape, {}
    for extract in extracts:
        shape = extract.results[0].type.shape
        where = [part_index(extract, index, whole // part, offset) for index, whole, part,
                 offset in zip(indices, tile, shape, extract.operands[1:])]
        part = make_op("load_view_tko", [resized_view(extract, view, shape), *where, *token],
                       [extract.results[0].type, load.results[1].type],
                       dict(load.attributes), operand_segments=[1, len(where), len(token)],
                       location=extract.location)
        part.source = extract.source
        parts[extract.results[0]] = insert_before(extract, part).results[0]
        erase(extract)
    erase(load)
    return parts


def split_store(store: Operation) -> list[Operation]:
    """A store of a cat becomes two stores of its halves; returns them."""
    cat = defining_op(store.operands[0])
    k = cat.attributes["dim"]
    _, (view,), indices, token = store.operand_groups()
    half = cat.operands[0].type.shape
    halves = resized_view(store, view, half)
    stores = []
    for position, value in enumerate(cat.operands):
        where = [part_index(store, index, 2, position) if d == k else index
                 for d, index in enumerate(indices)]
        part = make_op("store_view_tko", [value, halves, *where, *token],
                       [store.results[0].type], dict(store.attributes),
                       operand_segments=[1, 1, len(where), len(token)], location=store.location)
        part.source = store.source
        stores.append(insert_before(store, part))
    erase(store)
    return stores


def extracts_only(load: Operation, uses: dict[Value, list[Operation]]) -> list[Operation]:
    """The extracts taking ``load``'s tile apart, if they are all its tile's users."""
    users = uses.get(load.results[0], [])
    if users and all(user.name == "extract" and user.operands.count(load.results[0]) == 1
                     and user.operands[0] is load.results[0] for user in users):
        return users
    return []


def is_stored_cat(store: Operation, uses: dict[Value, list[Operation]]) -> bool:
    cat = defining_op(store.operands[0])
    return cat is not None and cat.name == "cat" and splittable(store, uses)


@dataclass(frozen=True)
class SplitAccesses(Pass):
    """Loads taken apart by extract, and stores of a cat, as accesses of the parts."""

    name = "split-accesses"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        uses, left, parts = collect_uses(module), [], {}
        loads = [op for op in all_ops(module) if op.name == "load_view_tko"]
        for load in loads:
            extracts = extracts_only(load, uses) if splittable(load, uses) else []
            if extracts:
                left.append(defining_op(load.operands[0]))
                parts |= split_load(load, extracts)
        replace_uses(module, parts)
        pending = [op for op in all_ops(module) if op.name == "store_view_tko"]
        while pending:  # the stores of a cat's halves are looked at again (a cat of cats)
            store = pending.pop()
            if is_stored_cat(store, uses):
                left += [defining_op(store.operands[0]), defining_op(store.operands[1])]
                pending += split_store(store)
        erase_unused(left, module)
        return bool(left)
