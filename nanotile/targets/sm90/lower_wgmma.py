"""lower-wgmma: a warpgroup MMA becomes descriptors, wgmma.mma_async and the fences and
waits around it.  simt -> simt.

``warpgroup_mma`` (distribute, for an accumulator in a ``#wgmma<acc, m64nNk16,
warpgroups=[gm, gn]>`` layout) holds one thread's accumulator registers, with A (M x K)
and B (K x N) in shared memory in ``wgmma_operand`` layouts: K-major, each row of K
elements one swizzle atom of W = 2K bytes (32, 64 or 128). Its warpgroup owns a block of
M/gm rows and N/gn columns, cut into 64-row blocks b and N-column blocks c; for every K
step s of 16 the pass issues one ``wgmma_mma_async`` per (b, c), on the accumulator
registers of that instruction (consecutive in the layout) and two descriptors:

- A: the block's first row, ``64 b`` rows of W bytes, plus ``32 s`` bytes (16 elements
  along the row: the hardware applies the swizzle to the address, so a K step inside an
  atom is a plain offset), plus ``M/gm * W`` bytes per warpgroup row index;
- B (stored N rows of K): ``N c`` rows plus ``32 s`` bytes, plus ``N/gn * W`` bytes per
  warpgroup column index.

Ordering (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"): the
operands were written to shared memory by ordinary stores (the generic proxy) and wgmma
reads them through the async proxy, so each writer runs ``fence_proxy_async`` before the
barrier that publishes its writes (inserted before the nearest barrier preceding the
op in its block, or with a barrier of its own if there is none); ``wgmma_fence`` comes
first: it hands the accumulator's registers to the wgmma (a copy the instructions then
accumulate into in place), since other instructions wrote them (the K loop's copies);
``wgmma_commit`` and ``wgmma_wait 0`` come last, so the accumulator is complete when
anything reads it and the operands' buffers are free for the next writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import types as T
from ...ir.core import Module, Operation, Value, make_op
from ...ir.layouts import REGS, WGMMA_M, wgmma_params
from ...ir.rewrite import all_ops, erase, insert_before, replace_uses
from ...passes.base import Pass, PassContext

K_STEP = 16          # the instruction's K (16-bit operands)
K_STEP_BYTES = 32


@dataclass(frozen=True)
class LowerWgmma(Pass):
    """warpgroup_mma -> descriptors, wgmma_mma_async, fences, commit and wait."""

    name = "lower-wgmma"
    input = "simt"
    output = "simt"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        mapping: dict[Value, Value] = {}
        for op in list(all_ops(module)):
            if op.name == "warpgroup_mma":
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
    rows, width = m // gm, lhs.shape[1] * 2       # a warpgroup's rows; an atom's bytes
    group_cols = cols // gn
    row_blocks, col_blocks = range(rows // WGMMA_M), range(group_cols // n)
    blocks = [(b, c) for b in row_blocks for c in col_blocks]
    half = n // 2
    piece_t = T.TileType((half,), T.F32, REGS)
    fenced = _emit(op, "wgmma_fence", [acc], acc.type)
    pieces = {bc: _emit(op, "pick", [fenced], piece_t,
                        registers=tuple(range(i * half, (i + 1) * half)))
              for i, bc in enumerate(blocks)}
    grid = (gm, gn)
    for s in range(lhs.shape[1] // K_STEP):
        a = [_descriptor(op, lhs, WGMMA_M * b * width + K_STEP_BYTES * s, grid,
                         (rows * width if gm > 1 else 0, 0)) for b in row_blocks]
        bd = [_descriptor(op, rhs, n * c * width + K_STEP_BYTES * s, grid,
                          (0, group_cols * width if gn > 1 else 0)) for c in col_blocks]
        for b, c in blocks:
            pieces[b, c] = _emit(op, "wgmma_mma_async", [pieces[b, c], a[b], bd[c]], piece_t,
                                 instruction=instruction(n, lhs.element.name))
    _emit(op, "wgmma_commit", [], None)
    _emit(op, "wgmma_wait", [], None, pending=0)
    return _emit(op, "pick", [pieces[bc] for bc in blocks], acc.type,
                 registers=tuple(range(len(blocks) * half)))


def instruction(n: int, element: str) -> str:
    return f"wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{element}.{element}"


def _descriptor(anchor: Operation, buffer: T.TileType, offset: int, grid, steps) -> Value:
    return _emit(anchor, "wgmma_descriptor", [], T.TileType((), T.I64, REGS), buffer=buffer,
                 offset=offset, grid=tuple(grid), steps=tuple(steps))


def _emit(anchor: Operation, name: str, operands: list[Value], t: T.Type | None, **attrs):
    new = make_op(name, operands, [t] if t is not None else [], attrs)
    new.source, new.location = anchor.source, anchor.location
    insert_before(anchor, new)
    return new.results[0] if t is not None else new
