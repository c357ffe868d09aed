"""lower-mma: a warp-level matrix multiply-accumulate becomes fragment loads and mma.sync
instructions.  simt -> simt.

``warp_mma`` (distribute) holds one thread's accumulator registers, in the fragment
layout ``#mma<acc, m16n8, warps=[wm, wn]>``, with A and B in shared memory. Each warp
owns a block of 16 x 8 result tiles; for every K step of the instruction (16 for
f16/bf16, 32 for 8-bit types, 8 for tf32) the pass loads the warp's A fragments (one
``ldmatrix.x4`` per 16-row tile) and B fragments (``ldmatrix.x4.trans`` per pair of
8-column tiles from a row-major B; from a column-major B, as 8-bit and tf32 operands
are stored, ``ldmatrix.x4`` per pair, ``.x2`` for a single tile) and issues one
``mma_sync`` per tile. The accumulator never leaves the registers (an f16 accumulator is
widened to f32 around the loop and rounded once at the end).

The lanes' row addresses are written as layouts (``_fragment_addresses``): for lane l
the element starting the 16-byte row it hands to ldmatrix (PTX ISA, "ldmatrix": lanes
8i..8i+7 give the rows of matrix i), and, per register, the tile and K step of the
instruction; select-instructions turns them into addresses like any shared access.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import types as T
from ...ir.core import Module, Operation, Value, make_op
from ...ir.enums import RoundingMode
from ...ir.layouts import REGS, LinearLayout, coordinates, flat_index, log2
from ...ir.rewrite import all_ops, erase, insert_before, replace_uses
from ...passes.base import Pass, PassContext
from .shared_memory import element_bytes


@dataclass(frozen=True)
class LowerMma(Pass):
    """warp_mma -> ldmatrix fragment loads and mma_sync instructions."""

    name = "lower-mma"
    input = "simt"
    output = "simt"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        mapping: dict[Value, Value] = {}
        for op in list(all_ops(module)):
            if op.name == "warp_mma":
                mapping[op.results[0]] = expand(op)
                erase(op)
        replace_uses(module, mapping)
        return bool(mapping)


@dataclass
class Tiles:
    """Which accumulator registers make each 16 x 8 tile of a warp."""

    keys: list[tuple]           # (batch..., row tile, column tile), in first-seen order
    registers: dict[tuple, list[int]]  # tile -> its 4 registers (c0, c1, c2, c3)


def accumulator_tiles(layout: LinearLayout) -> Tiles:
    shape = layout.shape
    keys, registers = [], {}
    for r in range(layout.registers):
        c = coordinates(layout.register_part(r), shape)
        row, col = c[-2], c[-1]
        key = (*c[:-2], row // 16, col // 8)
        if key not in registers:
            keys.append(key)
            registers[key] = [0] * 4
        registers[key][2 * (row % 16 >= 8) + col % 2] = r
    return Tiles(keys, registers)


def _fragment_addresses(role: str, shape: tuple[int, ...], k: int, esize: int,
                        warps: tuple[int, int], column_major: bool) -> tuple[LinearLayout,
                                                                             int, bool]:
    """The address layout of the ldmatrix loads of operand ``role`` ("a": M x K, "b":
    K x N, both possibly batched), the matrices per instruction and whether they are
    transposed. Registers: K steps first, then the warp's tiles (pairs of column tiles
    for B), then the batch."""
    wm, wn = warps
    rows, cols = shape[-2], shape[-1]
    batch = shape[:-2]
    group = 16 // esize  # elements in a 16-byte row
    full = tuple(shape)

    def at(r: int, c: int) -> int:
        return 0 if r >= rows or c >= cols else flat_index((0,) * len(batch) + (r, c), full)

    if role == "a":
        tiles = rows // 16
        lanes = [(1, 0), (2, 0), (4, 0), (8, 0), (0, group)]
        steps = [(0, k << b) for b in range(log2(cols // k))]
        regs_t, warps_t = _split(tiles, wm)
        tile_regs = [(16 * t, 0) for t in regs_t]
        warp_bits = [(0, 0)] * log2(wn) + [(16 * t, 0) for t in warps_t]
        count, trans = 4, False
    else:
        tiles = cols // 8
        regs_t, warps_t = _split(tiles, wn)
        pair = bool(regs_t)  # two neighbouring column tiles per instruction
        if column_major:  # rows of 16 bytes along K: (k, n) = 8 n-rows x group k's
            lanes = [(0, 1), (0, 2), (0, 4), (group, 0), (0, 8) if pair else (0, 0)]
            trans = False
        else:  # row-major K x N: 8 k-rows x 8 columns, transposed
            lanes = [(1, 0), (2, 0), (4, 0), (8, 0), (0, 8) if pair else (0, 0)]
            trans = True
        steps = [(k << b, 0) for b in range(log2(rows // k))]
        tile_regs = [(0, 8 * t) for t in regs_t[1:]] if pair else []
        warp_bits = [(0, 8 * t) for t in warps_t] + [(0, 0)] * log2(wm)
        count = 4 if pair else 2
    register = [at(*rc) for rc in steps + tile_regs]
    for i, d in enumerate(batch):
        register += [flat_index(tuple(1 << b if j == i else 0 for j in range(len(batch)))
                                + (0, 0), full) for b in range(log2(d))]
    layout = LinearLayout(full, tuple(register), tuple(at(*rc) for rc in lanes),
                          tuple(at(*rc) for rc in warp_bits))
    return layout, count, trans


def _split(tiles: int, warps: int) -> tuple[list[int], list[int]]:
    from ...ir.layouts import _tile_bits

    return _tile_bits(tiles, warps)


def expand(op: Operation) -> Value:
    acc = op.operands[0]
    result_t: T.TileType = op.attributes["of"]
    layout: LinearLayout = result_t.layout
    lhs, rhs = op.attributes["lhs"], op.attributes["rhs"]
    k = op.attributes["k"]
    warps = tuple(op.attributes["warps"])
    instruction = op.attributes["instruction"]
    accumulate = T.I32 if ".s32." in instruction else T.F32
    tiles = accumulator_tiles(layout)
    widen = acc.type.element != accumulate
    if widen:
        acc = _emit(op, "ftof", [acc], T.TileType(acc.type.shape, accumulate, REGS),
                    rounding_mode=RoundingMode.nearest_even)
    current = {key: _emit(op, "pick", [acc], T.TileType((4,), accumulate, REGS),
                          registers=tuple(tiles.registers[key])) for key in tiles.keys}
    column_major = rhs.layout.order is not None
    a_layout, a_count, a_trans = _fragment_addresses(
        "a", lhs.shape, k, element_bytes(lhs.element), warps, False)
    b_layout, b_count, b_trans = _fragment_addresses(
        "b", rhs.shape, k, element_bytes(rhs.element), warps, column_major)
    steps = lhs.shape[-1] // k
    for s in range(steps):
        a_frag = _fragments(op, lhs, a_layout, a_count, a_trans, s, steps)
        b_frag = _fragments(op, rhs, b_layout, b_count, b_trans, s, steps)
        for key in tiles.keys:
            a = _pick(op, a_frag, _a_index(key, tiles, layout, a_count), 4)
            b = _pick(op, b_frag, _b_index(key, tiles, layout), 2)
            current[key] = _emit(op, "mma_sync", [a, b, current[key]],
                                 current[key].type, instruction=instruction)
    sources = [current[key] for key in tiles.keys]
    order = []
    for r in range(layout.registers):
        for t, key in enumerate(tiles.keys):
            if r in tiles.registers[key]:
                order.append(4 * t + tiles.registers[key].index(r))
    out = _emit(op, "pick", sources, T.TileType(acc.type.shape, accumulate, REGS),
                registers=tuple(order))
    if widen:
        out = _emit(op, "ftof", [out], op.results[0].type,
                    rounding_mode=RoundingMode.nearest_even)
    return out


def _fragments(op: Operation, buffer: T.TileType, addresses: LinearLayout, count: int,
               trans: bool, step: int, steps: int) -> Value:
    """The ldmatrix loads of one K step: every register of ``addresses`` whose K-step
    bits are ``step``."""
    step_bits = log2(steps)
    chosen = tuple(r for r in range(addresses.registers) if r & ((1 << step_bits) - 1) == step)
    attrs = {"buffer": buffer, "of": T.TileType(buffer.shape, buffer.element, addresses),
             "count": count, "instructions": chosen}
    if trans:
        attrs["trans"] = True
    return _emit(op, "ldmatrix", [], T.TileType((count * len(chosen),), T.I32, REGS), **attrs)


def _a_index(key: tuple, tiles: Tiles, layout: LinearLayout, count: int) -> int:
    """Which ldmatrix (of this K step) holds the A fragment of ``key``'s row tile."""
    rows = sorted({k[-2] for k in tiles.keys if k[:-2] == key[:-2]})
    batches = sorted({k[:-2] for k in tiles.keys})
    return (batches.index(key[:-2]) * len(rows) + rows.index(key[-2])) * count


def _b_index(key: tuple, tiles: Tiles, layout: LinearLayout) -> int:
    """Where the B fragment (2 registers) of ``key``'s column tile starts."""
    cols = sorted({k[-1] for k in tiles.keys if k[:-2] == key[:-2]})
    batches = sorted({k[:-2] for k in tiles.keys})
    return (batches.index(key[:-2]) * len(cols) + cols.index(key[-1])) * 2


def _pick(op: Operation, fragments: Value, first: int, count: int) -> Value:
    return _emit(op, "pick", [fragments], T.TileType((count,), T.I32, REGS),
                 registers=tuple(range(first, first + count)))


def _emit(anchor: Operation, name: str, operands: list[Value], t: T.Type, **attrs) -> Value:
    new = make_op(name, operands, [t], attrs)
    insert_before(anchor, new)
    return new.results[0]
