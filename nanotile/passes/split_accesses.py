"""split-accesses: a loaded tile that is only taken apart by ``extract``, and a stored
``cat`` or ``insert``, become loads and stores of the parts.  tile -> tile.

- A ``store_view_tko`` of ``cat %a, %b dim = k`` at ``view[i...]`` is two stores of a
  view with half the tile along ``k``, at ``2 * i`` and ``2 * i + 1`` there (the operands
  of a cat have equal shapes: every dimension of a tile is a power of two).
- A store of ``insert %part, %tile[e...]`` (constant ``e``) is a store of the part at
  ``i * (tile / part) + e``, and stores of extracts of ``%tile`` that cover the rest:
  along each dimension in turn, the aligned runs of part-sized blocks beside the part's
  (one run of each length 1, 2, 4, ...: a 128x128 tile around a 64x32 part at (1, 2) is
  rows 0-63, then in rows 64-127 columns 96-127 and 0-63).
- The stores made are looked at again (a cat of cats splits again). Then an ``extract
  %t[e...]`` of a tile loaded from ``view[i...]``, where extracts are the tile's only
  users, is the load of a view of the same tensor with tiles of the part's shape, at
  ``i * (tile / part) + e`` in each dimension.

Each part may then become a strip loop (strip-mine), not a large tile in registers.

The same elements are read and written (an ``extract`` beyond its tile is undefined);
only the order of the accesses changes, which Tile IR leaves undefined between
token-ordered ops no token orders (spec, "Memory Model"). So the loads and stores are
weak, through partition views without a ``dim_map``, and nothing uses their tokens (the
parts take the token the whole took, if any).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..ir.core import Module, Operation, Value, make_op
from ..ir.rewrite import all_ops, collect_uses, defining_op, erase, erase_unused, insert_before, \
    make_splat, replace_uses, splat_number, splat_value
from ..ir.types import TileType
from .base import Pass, PassContext
from .strips import INDEX, is_unordered_view_access, resized_view


def splittable(op: Operation, uses: dict[Value, list[Operation]]) -> bool:
    """A view load or store that nothing orders (strips.is_unordered_view_access), its
    indices of one integer type."""
    indices = op.operand_groups()[1 if op.name == "load_view_tko" else 2]
    return is_unordered_view_access(op, uses) and len({index.type for index in indices}) == 1


def part_index(anchor: Operation, index: Value, ratio: int, offset: Value | int) -> Value:
    """``index * ratio + offset``, made before ``anchor`` (no op where one adds nothing)."""
    def emit(op: Operation) -> Value:
        return insert_before(anchor, op).results[0]

    if splat_value(index) == 0:
        return offset if isinstance(offset, Value) else emit(make_splat(offset, index.type))
    if ratio != 1:
        index = emit(make_op("muli", [index, emit(make_splat(ratio, index.type))],
                             [index.type]))
    if (offset if isinstance(offset, int) else splat_value(offset)) == 0:
        return index
    if isinstance(offset, int):
        offset = emit(make_splat(offset, index.type))
    return emit(make_op("addi", [index, offset], [index.type]))


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


def store_part(store: Operation, value: Value, at: list[Value | int]) -> Operation:
    """A store, before ``store``, of ``value``: the part of ``store``'s tile at block
    ``at`` (in units of the part's shape)."""
    _, (view,), indices, token = store.operand_groups()
    shape = value.type.shape
    where = [part_index(store, index, whole // part, offset) for index, whole, part, offset
             in zip(indices, view.type.tile_shape, shape, at)]
    part = make_op("store_view_tko", [value, resized_view(store, view, shape), *where, *token],
                   [store.results[0].type], dict(store.attributes),
                   operand_segments=[1, 1, len(where), len(token)], location=store.location)
    part.source = store.source
    return insert_before(store, part)


def split_cat_store(store: Operation) -> list[Operation]:
    """A store of a cat becomes two stores of its halves; returns them."""
    cat = defining_op(store.operands[0])
    k, rank = cat.attributes["dim"], len(cat.operands[0].type.shape)
    stores = [store_part(store, value, [position if d == k else 0 for d in range(rank)])
              for position, value in enumerate(cat.operands)]
    erase(store)
    return stores


def buddies(blocks: int, at: int) -> list[tuple[int, int]]:
    """Aligned runs of blocks, (first, length), that with block ``at`` cover ``blocks``
    blocks (a power of two): at each length 1, 2, 4, ... the run beside the one that
    holds ``at``."""
    runs, length = [], 1
    while length < blocks:
        runs.append((((at // length) ^ 1) * length, length))
        length *= 2
    return runs


def pieces_around(whole: tuple[int, ...], part: tuple[int, ...],
                  at: list[int]) -> list[tuple[tuple[int, ...], list[int]]]:
    """Tiles (shape, block index in units of the shape) that cover a tile of shape
    ``whole`` but for its part of shape ``part`` at block ``at``: along each dimension k
    in turn, within the part's extent in the dimensions before k, the runs of blocks
    beside the part's (buddies)."""
    pieces = []
    for k in range(len(whole)):
        for first, length in buddies(whole[k] // part[k], at[k]):
            shape = (*part[:k], length * part[k], *whole[k + 1:])
            pieces.append((shape, [*at[:k], first // length, *[0] * (len(whole) - k - 1)]))
    return pieces


def split_insert_store(store: Operation) -> list[Operation]:
    """A store of an insert becomes stores of the inserted part and of the pieces of the
    destination tile around it (extracts); returns them."""
    insert = defining_op(store.operands[0])
    part, whole = insert.operands[:2]
    at = [splat_number(index) for index in insert.operands[2:]]
    stores = []
    for shape, index in pieces_around(whole.type.shape, part.type.shape, at):
        indices = [insert_before(store, make_splat(i, INDEX)).results[0] for i in index]
        piece = make_op("extract", [whole, *indices], [TileType(shape, whole.type.element)],
                        location=insert.location)
        stores.append(store_part(store, insert_before(store, piece).results[0], index))
    stores.append(store_part(store, part, at))
    erase(store)
    return stores


def extracts_only(load: Operation, uses: dict[Value, list[Operation]]) -> list[Operation]:
    """The extracts taking ``load``'s tile apart, if they are all its tile's users."""
    users = uses.get(load.results[0], [])
    if users and all(user.name == "extract" and user.operands.count(load.results[0]) == 1
                     and user.operands[0] is load.results[0] for user in users):
        return users
    return []


def stored_split(store: Operation, uses: dict[Value, list[Operation]]) -> Callable | None:
    """How a store of a cat, or of an insert at constant indices, splits; None where it
    does not."""
    stored = defining_op(store.operands[0])
    if stored is None or not splittable(store, uses):
        return None
    if stored.name == "cat":
        return split_cat_store
    at = [splat_number(index) for index in stored.operands[2:]]
    if stored.name == "insert" and all(
            isinstance(i, int) and 0 <= i < whole // part for i, whole, part in
            zip(at, stored.operands[1].type.shape, stored.operands[0].type.shape)):
        return split_insert_store
    return None


@dataclass(frozen=True)
class SplitAccesses(Pass):
    """Loads taken apart by extract, stores of a cat or an insert: accesses of the parts."""

    name = "split-accesses"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        uses, left = collect_uses(module), []
        pending = [op for op in all_ops(module) if op.name == "store_view_tko"]
        while pending:  # the stores of the parts are looked at again (a cat of cats)
            store = pending.pop()
            split = stored_split(store, uses)
            if split is not None:
                left += [defining_op(store.operands[0]), defining_op(store.operands[1])]
                pending += split(store)
        erase_unused(left, module)
        uses, parts, views = collect_uses(module), {}, []
        for load in [op for op in all_ops(module) if op.name == "load_view_tko"]:
            extracts = extracts_only(load, uses) if splittable(load, uses) else []
            if extracts:  # the view and the extracts' indices may be left unused
                views += [op for op in map(defining_op, load.operands[:1] + [
                    index for extract in extracts for index in extract.operands[1:]]) if op]
                parts |= split_load(load, extracts)
        replace_uses(module, parts)
        erase_unused(views, module)
        return bool(left or views)
