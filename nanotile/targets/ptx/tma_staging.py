"""Staging buffers for select-tma-loads{stage-operands}: which view loads feed an MMA
through one (an mmaf or mmai reading the tile directly, or through a reshape and an ftof),
the unswizzled box a copy into one uses and the layout it lands in (``staged_layout``,
which assign-layouts gives such a copy's result), and the move of the reshape and ftof
after the copies, so that an MMA's copies sit side by side (in flight together).
"""

from __future__ import annotations

from ...ir.core import Operation, Value
from ...ir.layouts import SharedLayout
from ...ir.rewrite import erase, insert_before

MAX_BOX = 256          # elements per box dimension (cuTensorMapEncodeTiled)
TMA_ALIGN = 128        # bytes: a copy's shared destination (PTX ISA, cp.async.bulk.tensor)


def staged_mma(tile: Value, uses) -> Operation | None:
    """The mmaf, mmai or mmaf_scaled that reads ``tile`` (2-D, or 3-D) as A or B,
    directly or through a reshape and an ftof, each the only use (a staged copy's reader:
    wgmma, tcgen05, mma.sync or the FMA loop, which all read their operands from shared
    memory); else None."""
    if tile.type.rank not in (2, 3):
        return None
    value = tile
    for _ in range(3):  # at most a reshape (a batch of one) and an ftof on the way
        users = uses.get(value, [])
        if len(users) != 1:
            return None
        if users[0].name in ("mmaf", "mmai", "mmaf_scaled"):
            return users[0] if value in users[0].operands[:2] else None
        if users[0].name not in ("ftof", "reshape"):
            return None
        value = users[0].results[0]
    return None


def sink_conversions(tile: Value, mma: Operation, uses) -> None:
    """The staged tile's reshape and ftof (pure, one use each) just before its mmaf, out
    of the way of the next operand's copy (so that the two copies sit side by side)."""
    chain = []
    while uses.get(tile) and uses[tile][0] is not mma:
        chain.append(uses[tile][0])
        tile = chain[-1].results[0]
    if any(o.parent is not mma.parent for o in chain):
        return
    for o in chain:
        erase(o)
        insert_before(mma, o)


def staged_layout(shape: tuple[int, ...], columns: int) -> SharedLayout:
    """A staging buffer: TMA boxes of ``columns`` columns, unswizzled, side by side (each
    box all the tile's rows, row-major), aligned as a copy's destination wants."""
    block = columns if len(shape) == 2 and columns < shape[-1] else None
    return SharedLayout(tuple(shape), align=TMA_ALIGN, block=block)


def staged_box(tile: tuple[int, ...], size: int) -> tuple[int, ...] | None:
    """An unswizzled box of up to 256 rows and columns cutting a 2-D tile evenly (a 3-D
    tile: the whole tile), its rows a multiple of 16 bytes; None if there is none."""
    box = tuple(min(n, MAX_BOX) for n in tile)
    if any(n % b for n, b in zip(tile, box)) or (box[-1] * size) % 16 or \
            (len(tile) == 3 and box != tuple(tile)):
        return None
    return box
