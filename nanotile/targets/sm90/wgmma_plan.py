"""Which mmaf ops run on wgmma (sm_90a's warpgroup MMA), and how warpgroups share them.

``plan(op, warps)`` answers for one op: a ``WgmmaPlan`` when the shapes and types fit
``wgmma.mma_async.sync.aligned.m64nNk16`` with both operands in shared memory, else None
(the op keeps the shared mma.sync lowering, mma_plan.py). assign-layouts{mma=wgmma} asks
it first (Target.select_overrides["plan_mma"]); the plan gives the accumulator its
layout (``#wgmma<acc, ...>``, held in registers across the K loop) and A and B their
shared layouts (layouts.wgmma_operand: rows of swizzle atoms), which the descriptors of
lower-wgmma describe.

What fits (PTX ISA, "wgmma.mma_async"):

- mmaf on f16 x f16 or bf16 x bf16 with an f32 accumulator (or f16: accumulated in f32
  and rounded once, as on mma.sync), 2-D (no batch);
- a CTA of whole warpgroups (warps a multiple of 4), laid over the tile as a grid of
  gm x gn groups: each group's rows a multiple of 64, its columns a multiple of 8 (one
  instruction takes n = min(columns, 256) of them);
- K a multiple of 16 whose row (K elements) is made of swizzle atoms: 32, 64 or 128
  bytes, or a multiple of 128.

A is read K-major (as it is). B is read MN-major (as it is, rows along N: ``trans-b``)
where each instruction's columns are whole swizzle atoms, unless the registers it comes
from run along K (a thread holding a column piece: then K-major, each thread's registers
again contiguous in shared memory); either way it is stored in runs, not transposed
element by element.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import types as T
from ...ir.core import Operation
from ...ir.layouts import (
    WGMMA_M,
    WGMMA_MAX_N,
    WGMMA_SWIZZLE_BYTES,
    LinearLayout,
    SharedLayout,
    flat_index,
    wgmma_accumulator,
    wgmma_operand,
)

WARPGROUP = 4  # warps


@dataclass(frozen=True)
class WgmmaPlan:
    element: str                 # f16 or bf16
    warpgroups: tuple[int, int]  # (row-block groups, column-block groups)
    n: int                       # the instruction's N
    b_mn_major: bool = False     # B's rows may run along N (trans-b)

    @property
    def instruction(self) -> str:
        e = self.element
        return f"wgmma.mma_async.sync.aligned.m64n{self.n}k16.f32.{e}.{e}"

    def accumulator(self, shape: tuple[int, ...]) -> LinearLayout:
        return wgmma_accumulator(shape, self.warpgroups, self.n)

    def operand(self, i: int, t: T.TileType, source: object = None) -> SharedLayout:
        """The shared layout of operand ``i`` (0: A, 1: B) stored from registers in
        layout ``source`` (None: unknown)."""
        along_k = isinstance(source, LinearLayout) and source.register[:1] == \
            (flat_index((1, 0), t.shape),)
        return wgmma_operand(t.shape, 2, "ab"[i],
                             mn_major=i == 1 and self.b_mn_major and not along_k)


def plan(op: Operation, warps: int) -> WgmmaPlan | None:
    if op.name != "mmaf" or warps % WARPGROUP:
        return None
    lt, rt, at = (v.type for v in op.operands[:3])
    if not all(isinstance(t, T.TileType) and t.rank == 2 for t in (lt, rt, at)):
        return None
    element = lt.element.name
    if element not in ("f16", "bf16") or rt.element.name != element or \
            at.element.name not in ("f32", "f16"):
        return None
    m, k, n = lt.shape[0], lt.shape[1], rt.shape[1]
    if k % 16 or not (2 * k in WGMMA_SWIZZLE_BYTES or 2 * k % WGMMA_SWIZZLE_BYTES[-1] == 0):
        return None
    grid = warpgroup_grid(m, n, warps // WARPGROUP)
    if grid is None:
        return None
    columns = min(n // grid[1], WGMMA_MAX_N)
    atom = min(2 * n, WGMMA_SWIZZLE_BYTES[-1]) // 2  # B's row atom, in elements
    mn_major = 2 * n >= WGMMA_SWIZZLE_BYTES[0] and columns % atom == 0
    return WgmmaPlan(element, grid, columns, mn_major)


def warpgroup_grid(m: int, n: int, groups: int) -> tuple[int, int] | None:
    """(gm, gn): every group busy, splitting rows first (each group then reads its own
    rows of A and all of B, as tileiras' consumer warpgroups do), columns for the rest;
    None when the groups cannot all get 64-row, 8-column blocks."""
    gm = 1
    while gm < groups and m % (2 * gm * WGMMA_M) == 0:
        gm *= 2
    gn = groups // gm
    if m % (gm * WGMMA_M) or n % (8 * gn):
        return None
    return gm, gn
