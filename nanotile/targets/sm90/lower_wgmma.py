"""lower-wgmma: a warpgroup MMA becomes descriptors, wgmma.mma_async and the fences and
waits around it.  simt -> simt.

``warpgroup_mma`` (distribute, for an accumulator in a ``#wgmma<acc, m64nNk16,
warpgroups=[gm, gn]>`` layout) holds one thread's accumulator registers, with A (M x K)
and B (K x N) in shared memory in ``wgmma_operand`` layouts: rows of swizzle atoms (W =
32, 64 or 128 bytes), along K for A, along K (transposed) or N (``trans_b``) for B. Its
warpgroup owns a block of M/gm rows and N/gn columns, cut into 64-row blocks b and
N-column blocks c; for each (b, c), on the accumulator registers of that instruction
(consecutive in the layout), the pass issues one ``wgmma_mma_async`` per K step s of k
(all of one block's steps before the next block's: with a large accumulator, one
block's registers are live at a time, the others may spill), with two descriptors
(``Operand``), each starting at its matrix's first element in the layout: A's at
(64 b, k s), B's at (k s, N c), plus the first element of the warpgroup's block per grid
index. The instruction's k is 32 bytes of a row: 16 f16/bf16, 8 tf32, 32 f8 elements
(m64nNk16, k8, k32; tf32 and f8 operands are K-major, and their instructions have no
transpose operands). A K step inside a K-major atom is a plain 32-byte offset: the
hardware applies the swizzle to the addresses it derives.

Ordering (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"): the
operands were written to shared memory by ordinary stores (the generic proxy) and wgmma
reads them through the async proxy, so each writer runs ``fence_proxy_async`` before the
barrier that publishes its writes (inserted before the nearest barrier preceding the
op in its block, or with a barrier of its own if there is none), unless both operands
were copied by TMA (``tma_copy``: the async proxy too, and its mbarrier wait publishes); ``wgmma_fence`` comes
first: it hands the accumulator's registers to the wgmma (a copy the instructions then
accumulate into in place), since other instructions wrote them (the K loop's copies);
``wgmma_commit`` and ``wgmma_wait 0`` come last, so the accumulator is complete when
anything reads it and the operands' buffers are free for the next writes.

An f16 accumulator is widened to f32 before and rounded once after, as lower-mma does
(the instructions accumulate in f32).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import types as T
from ...ir.core import Module, Operation, Value, make_op
from ...ir.enums import RoundingMode
from ...ir.layouts import REGS, WGMMA_M, flat_index, wgmma_params
from ...ir.rewrite import all_ops, erase, insert_before, replace_uses
from ...passes.base import Pass, PassContext
from ..ptx.shared_memory import element_bytes
from .wgmma_plan import K_BYTES, PTX_TYPES
from .wgmma_plan import instruction as wgmma_instruction

LEADING_BYTES = 16   # LBO where the layout has none to give (K-major, swizzled): tileiras'


@dataclass(frozen=True)
class LowerWgmma(Pass):
    """warpgroup_mma -> descriptors, wgmma_mma_async, fences, commit and wait."""

    name = "lower-wgmma"
    input = "simt"
    output = "simt"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        mapping: dict[Value, Value] = {}
        copied = [o.attributes["buffer"] for o in all_ops(module) if o.name == "tma_copy"]
        for op in list(all_ops(module)):
            if op.name == "warpgroup_mma":
                if not (op.attributes["lhs"] in copied and op.attributes["rhs"] in copied):
                    fence_operand_writes(op)
                mapping[op.results[0]] = expand(op)
                erase(op)
        replace_uses(module, mapping)
        return bool(mapping)


def fence_operand_writes(op: Operation) -> None:
    """fence_proxy_async before the barrier that publishes the operands' writes."""
    block = op.parent
    at = block.ops.index(op)
    barrier = next((o for o in reversed(block.ops[:at]) if o.name == "barrier"), None)
    if barrier is None:
        barrier = _emit(op, "barrier", [], None)
    _emit(barrier, "fence_proxy_async", [], None)


def expand(op: Operation) -> Value:
    acc = op.operands[0]
    result_t: T.TileType = op.attributes["of"]
    lhs, rhs = op.attributes["lhs"], op.attributes["rhs"]
    params = wgmma_params(result_t.layout)
    assert params is not None, result_t
    n, (gm, gn) = params
    m, cols = result_t.shape
    rows, group_cols = m // gm, cols // gn        # a warpgroup's block
    row_blocks, col_blocks = range(rows // WGMMA_M), range(group_cols // n)
    blocks = [(b, c) for b in row_blocks for c in col_blocks]
    half = n // 2
    piece_t = T.TileType((half,), T.F32, REGS)
    wide_t = T.TileType(acc.type.shape, T.F32, REGS)
    if acc.type.element != T.F32:  # an f16 accumulator: accumulated in f32, rounded once
        acc = _emit(op, "ftof", [acc], wide_t, rounding_mode=RoundingMode.nearest_even)
    fenced = _emit(op, "wgmma_fence", [acc], wide_t)
    pieces = {bc: _emit(op, "pick", [fenced], piece_t,
                        registers=tuple(range(i * half, (i + 1) * half)))
              for i, bc in enumerate(blocks)}
    a_of = Operand(lhs, "a", (rows if gm > 1 else 0, 0), (gm, gn))
    b_of = Operand(rhs, "b", (0, group_cols if gn > 1 else 0), (gm, gn))
    trans_b = {"trans_b": True} if b_of.mn_major else {}
    k_step = K_BYTES // a_of.size
    opcode = wgmma_instruction(n, PTX_TYPES[lhs.element.name], PTX_TYPES[rhs.element.name])
    for b, c in blocks:  # all K steps of one block, then the next: one block's registers
        for s in range(lhs.shape[1] // k_step):  # at a time (the others may spill)
            a = a_of.descriptor(op, (WGMMA_M * b, k_step * s))
            bd = b_of.descriptor(op, (k_step * s, n * c))
            pieces[b, c] = _emit(op, "wgmma_mma_async", [pieces[b, c], a, bd], piece_t,
                                 instruction=opcode, **trans_b)
    _emit(op, "wgmma_commit", [], None)
    _emit(op, "wgmma_wait", [], None, pending=0)
    out = _emit(op, "pick", [pieces[bc] for bc in blocks], wide_t,
                registers=tuple(range(len(blocks) * half)))
    if op.results[0].type.element != T.F32:
        out = _emit(op, "ftof", [out], op.results[0].type,
                    rounding_mode=RoundingMode.nearest_even)
    return out


class Operand:
    """The descriptors of operand ``role`` (a placed wgmma_operand layout), read off its
    layout: a matrix starts at the byte offset of its first element (a row 0 mod 8, and
    a K step inside an atom, are not swizzled: the hardware swizzles the addresses it
    derives from the start); SBO is the bytes from one 8-row group to the next, LBO
    (MN-major B only) from one swizzle atom to the next along N; a warpgroup adds the
    offset of its block's first element, ``group`` = (rows, columns) per grid index."""

    def __init__(self, buffer: T.TileType, role: str, group: tuple[int, int],
                 grid: tuple[int, int]) -> None:
        layout = buffer.layout
        self.buffer, self.grid = buffer, grid
        self.size = element_bytes(buffer.element)
        self.mn_major = role == "b" and layout.order is None
        fastest = layout.order[0] if layout.order is not None else 1
        atom = layout.block or buffer.shape[fastest]
        self.width = atom * self.size
        self.stride = self.at((8, 0) if fastest == 1 else (0, 8))
        self.leading = self.at((0, atom)) if self.mn_major and layout.block \
            else LEADING_BYTES
        self.steps = (self.at((group[0], 0)), self.at((0, group[1])))

    def at(self, rc: tuple[int, int]) -> int:
        """Bytes from the buffer's start to element (row, column)."""
        return self.size * self.buffer.layout.element_offset(flat_index(rc, self.buffer.shape))

    def descriptor(self, anchor: Operation, first: tuple[int, int]) -> Value:
        return _emit(anchor, "wgmma_descriptor", [], T.TileType((), T.I64, REGS),
                     buffer=self.buffer, offset=self.at(first), leading=self.leading,
                     stride=self.stride, swizzle=self.width, grid=self.grid,
                     steps=self.steps)


def _emit(anchor: Operation, name: str, operands: list[Value], t: T.Type | None, **attrs):
    new = make_op(name, operands, [t] if t is not None else [], attrs)
    new.source, new.location = anchor.source, anchor.location
    insert_before(anchor, new)
    return new.results[0] if t is not None else new
