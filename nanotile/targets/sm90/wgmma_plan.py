"""Which mmaf ops run on wgmma (sm_90a's warpgroup MMA), and how warpgroups share them.

``plan(op, warps)`` answers for one op: a ``WgmmaPlan`` when the shapes and types fit
``wgmma.mma_async.sync.aligned.m64nNkK`` with both operands in shared memory, else None
(the op keeps the shared mma.sync lowering, mma_plan.py). assign-layouts{mma=wgmma} asks
it first (Target.select_overrides["plan_mma"]); the plan gives the accumulator its
layout (``#wgmma<acc, ...>``, held in registers across the K loop) and A and B their
shared layouts (layouts.wgmma_operand: rows of swizzle atoms), which the descriptors of
lower-wgmma describe.

What fits (PTX ISA, "wgmma.mma_async"):

- mmaf, 2-D (no batch), on (the instruction's K: 32 bytes of a row of each type)

      f16 x f16 or bf16 x bf16 -> f32 (or f16)     m64nNk16
      tf32 x tf32 -> f32                           m64nNk8
      e4m3/e5m2 x e4m3/e5m2 -> f32 (or f16)        m64nNk32

  (the instruction takes any mix of e4m3 and e5m2, and so does the plan, though Tile IR's
  mmaf verifies one element type for both); an f16 accumulator accumulated in f32 and
  rounded once, as on mma.sync; tf32 operands rounded to nearest in registers before
  they are stored (``round_tf32_operands``: the tensor cores truncate);
- a CTA of whole warpgroups (warps a multiple of 4), laid over the tile as a grid of
  gm x gn groups: each group's rows a multiple of 64, its columns a multiple of 8 (one
  instruction takes n = min(columns, 256) of them);
- K a multiple of the instruction's K whose row (K elements) is made of swizzle atoms:
  32, 64 or 128 bytes, or a multiple of 128.

A is read K-major (as it is). tf32 and f8 have no transposed forms (the ISA's imm-trans
operands are f16/bf16's): B is read K-major too, stored transposed from its registers.
An f16/bf16 B is read MN-major (as it is, rows along N: ``trans-b``)
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


# the PTX type of each operand element type wgmma takes, and its bytes
PTX_TYPES = {"f16": "f16", "bf16": "bf16", "tf32": "tf32", "f8E4M3FN": "e4m3",
             "f8E5M2": "e5m2"}
BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1}
K_BYTES = 32  # the instruction's K, in bytes of a row (k16 for f16, k8 tf32, k32 f8)


def instruction(n: int, a: str, b: str | None = None) -> str:
    """The wgmma opcode for operands of PTX types ``a`` and ``b`` (default: ``a``)."""
    b = b or a
    return f"wgmma.mma_async.sync.aligned.m64n{n}k{K_BYTES // BYTES[a]}.f32.{a}.{b}"


@dataclass(frozen=True)
class WgmmaPlan:
    element: str                 # A's PTX type: f16, bf16, tf32, e4m3 or e5m2
    warpgroups: tuple[int, int]  # (row-block groups, column-block groups)
    n: int                       # the instruction's N
    b_mn_major: bool = False     # B's rows may run along N (trans-b; f16/bf16 only)
    b_element: str | None = None  # B's PTX type when it differs from A's (f8)

    @property
    def element_bytes(self) -> int:
        return BYTES[self.element]

    @property
    def k(self) -> int:
        """The instruction's K."""
        return K_BYTES // self.element_bytes

    @property
    def instruction(self) -> str:
        return instruction(self.n, self.element, self.b_element)

    @property
    def round_tf32_operands(self) -> bool:
        """Whether assign-layouts rounds the operands to tf32 in registers (nearest even,
        the interpreter's mmaf) before they are stored: wgmma reads a tf32 as it lies in
        shared memory, ignoring its low 13 bits (truncation)."""
        return self.element == "tf32"

    def accumulator(self, shape: tuple[int, ...]) -> LinearLayout:
        return wgmma_accumulator(shape, self.warpgroups, self.n)

    def operand(self, i: int, t: T.TileType, source: object = None) -> SharedLayout:
        """The shared layout of operand ``i`` (0: A, 1: B) stored from registers in
        layout ``source`` (None: unknown)."""
        along_k = isinstance(source, LinearLayout) and source.register[:1] == \
            (flat_index((1, 0), t.shape),)
        return wgmma_operand(t.shape, self.element_bytes, "ab"[i],
                             mn_major=i == 1 and self.b_mn_major and not along_k)


def plan(op: Operation, warps: int) -> WgmmaPlan | None:
    if op.name != "mmaf" or warps % WARPGROUP:
        return None
    lt, rt, at = (v.type for v in op.operands[:3])
    if not all(isinstance(t, T.TileType) and t.rank == 2 for t in (lt, rt, at)):
        return None
    a, b = PTX_TYPES.get(lt.element.name), PTX_TYPES.get(rt.element.name)
    if a is None or b is None or at.element.name not in ("f32", "f16"):
        return None
    f8 = ("e4m3", "e5m2")
    if not (a == b or (a in f8 and b in f8)) or (a == "tf32" and at.element.name != "f32"):
        return None
    size = BYTES[a]
    m, k, n = lt.shape[0], lt.shape[1], rt.shape[1]
    row = size * k  # bytes of a K row
    if row % K_BYTES or not (row in WGMMA_SWIZZLE_BYTES or row % WGMMA_SWIZZLE_BYTES[-1] == 0):
        return None
    grid = warpgroup_grid(m, n, warps // WARPGROUP)
    if grid is None:
        return None
    columns = min(n // grid[1], WGMMA_MAX_N)
    if size != 2:  # tf32, f8: K-major B only
        return WgmmaPlan(a, grid, columns, False, b if b != a else None)
    atom = min(2 * n, WGMMA_SWIZZLE_BYTES[-1]) // 2  # B's row atom, in elements
    mn_major = 2 * n >= WGMMA_SWIZZLE_BYTES[0] and columns % atom == 0
    return WgmmaPlan(a, grid, columns, mn_major)


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
