"""nanotile's TMA ops (tma_load, tma_store: internal, written by select-tma-loads and
select-tma-stores, and readable again from a dump): the ``tensor`` attribute must
describe a tensor map the kernel can have (nanotile.ir.tensor_maps) for a 1-D, 2-D or
3-D tile (3-D: a staged MMA operand, select-tma-loads): base an argument that is a
pointer to the tile's element type, shape and strides arguments of integer type or
constants, as many as the tile has dimensions (the last stride 1) or more (leading
dimensions of 1 the tile drops: a batch of one copied as a 2-D tile, their boxes 1),
boxes that cut the tile evenly (each dimension 1..256, rows a multiple of 16 bytes) and a
swizzle of 0, 32, 64 or 128 bytes; one i32 coordinate per dimension of the map. A
``transposed`` map copies a 2-D tile whose dimensions are its own reversed; an
``unsigned`` map holds integers, and a reduction's map is unsigned exactly for and, or and
xor."""

from __future__ import annotations

from nanotile.ir.core import Operation
from nanotile.ir.rewrite import parent_op
from nanotile.ir.types import I32, PointerType, TileType

from .engine import fail, rule


@rule("tma_load")
def _tma_load(op: Operation) -> None:
    _check(op, op.results[0].type if op.results else None, op.operands)


@rule("tma_store")
def _tma_store(op: Operation) -> None:
    # imported here: only kernels after select-tma-* have these ops (CLI start-up)
    from nanotile.ir.tensor_maps import REDUCTIONS, UNSIGNED_REDUCTIONS, TensorMapSpec

    _check(op, op.operands[0].type if op.operands else None, op.operands[1:])
    reduction = op.attributes.get("reduction")
    if reduction is not None:
        element = op.operands[0].type.element.name
        if element not in REDUCTIONS.get(str(reduction), {}):
            raise fail(f"'reduction' must be one of {', '.join(REDUCTIONS)} with an element "
                       f"type it takes (TMA reduces "
                       + "; ".join(f"{m}: {', '.join(t)}" for m, t in REDUCTIONS.items())
                       + f"), not '{reduction}' of {element}")
        unsigned = str(reduction) in UNSIGNED_REDUCTIONS
        if TensorMapSpec.parse(str(op.attributes["tensor"])).unsigned != unsigned:
            raise fail(f"the map of a '{reduction}' reduction must "
                       f"{'' if unsigned else 'not '}be unsigned (TMA reduces and, or and "
                       f"xor through maps of unsigned integers, min and max as the map's "
                       f"type says)")


def _check(op: Operation, tile, coordinates) -> None:
    from nanotile.ir.tensor_maps import ELEMENT_BYTES, TensorMapSpec

    try:
        spec = TensorMapSpec.parse(str(op.attributes.get("tensor", "")))
    except ValueError:
        raise fail("'map' must describe a tensor map: ELEMENT base=aN shape=[...] "
                   "strides=[...] box=[...] swizzle=N") from None
    if not isinstance(tile, TileType) or tile.rank not in (1, 2, 3) or \
            tile.element.name != spec.element or spec.element not in ELEMENT_BYTES:
        raise fail(f"the tile must be a 1-D, 2-D or 3-D tile of the map's element type "
                   f"'{spec.element}'")
    if spec.unsigned and not spec.element.startswith("i"):
        raise fail(f"only a map of integers may be unsigned, not one of '{spec.element}'")
    rank = len(spec.box)
    if not (len(spec.shape) == len(spec.strides) == len(coordinates) == rank >= tile.rank):
        raise fail(f"the map's shape, strides, box and the coordinates must have {rank} "
                   f"entries, one per dimension of the tile (or more)")
    if any(b != 1 for b in spec.box[:rank - tile.rank]):
        raise fail("the map's dimensions before the tile's must have boxes of 1")
    if spec.strides[-1].argument is not None or spec.strides[-1].constant != 1:
        raise fail("the map's innermost stride must be 1")
    if any(not (isinstance(c.type, TileType) and c.type.rank == 0 and c.type.element == I32)
           for c in coordinates):
        raise fail("the coordinates must be tile<i32>")
    arguments = _entry_arguments(op)
    base = arguments[spec.base].type if spec.base < len(arguments) else None
    if not (isinstance(base, TileType) and isinstance(base.element, PointerType)
            and base.element.pointee == tile.element):
        raise fail(f"the map's base a{spec.base} must be an argument pointing to "
                   f"{tile.element}")
    for dim in (*spec.shape, *spec.strides):
        if dim.argument is not None:
            t = arguments[dim.argument].type if dim.argument < len(arguments) else None
            if not (isinstance(t, TileType) and t.num_elements == 1 and
                    getattr(t.element, "is_int", False)):
                raise fail(f"the map's size a{dim.argument} must be an integer argument")
    size = ELEMENT_BYTES[spec.element]
    seen = tile.shape[::-1] if spec.transposed else tile.shape  # the map's view of it
    if spec.transposed and tile.rank != 2:
        raise fail("only a 2-D tile may be copied through a transposed map")
    if any(not 0 < b <= 256 or n % b for b, n in zip(spec.box[rank - tile.rank:], seen)) or \
            (spec.box[-1] * size) % 16 or spec.swizzle not in (0, 32, 64, 128):
        raise fail("the map's box must cut the tile evenly (each dimension 1..256, rows "
                   "of a multiple of 16 bytes) and its swizzle be 0, 32, 64 or 128 bytes")


def _entry_arguments(op: Operation) -> list:
    entry = op
    while parent_op(entry) is not None:
        entry = parent_op(entry)
    return list(entry.regions[0].block.arguments) if entry.regions else []
