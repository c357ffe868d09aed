"""Which mmaf ops run on tcgen05 (sm_100a's tensor cores, accumulating in tensor memory).

``plan(op, warps)`` answers for one op: a ``Tcgen05Plan`` when the shapes and types fit
``tcgen05.mma.cta_group::1.kind::f16`` with both operands in shared memory and D in
tensor memory (TMEM), else None (the op keeps the shared mma.sync lowering, mma_plan.py).
assign-layouts{gpu=sm_100 mma=tcgen05} asks it first (Target.select_overrides
["plan_mma"]); the plan gives the accumulator its layout (``#tmem<acc, m128nN>``: the
registers tcgen05.ld.32x32b gives, layouts.tmem_accumulator) and A and B their shared
layouts (layouts.wgmma_operand: the canonical K-major swizzled layouts, which sm_100's
matrix descriptors describe as sm_90's do), which lower-tcgen05's descriptors describe.

What fits (PTX ISA, "tcgen05.mma", "Instruction descriptor", "Matrix Descriptors"):

- mmaf on f16 x f16 or bf16 x bf16 with an f32 accumulator, 2-D (no batch);
- a CTA of one warpgroup (4 warps: with M = 128 and cta_group::1, warp w reads TMEM lanes
  32 w .. 32 w + 31, rows 32 w .. of D) and 128 or 256 rows: one M = 128 instruction per
  128-row block, the second block's D in the N columns after the first's (the ISA's
  other M, 64 with cta_group::1 and 256 with cta_group::2, lay D out differently in
  TMEM; not planned);
- N a multiple of 16 from 16 to 256 (M = 128's rule), one instruction per K step;
- K a multiple of 16 whose row (K elements) is made of swizzle atoms: 32, 64 or 128 bytes,
  or a multiple of 128 (as wgmma's).

A and B are both read K-major (B transposed into shared memory, as tileiras' sm_100
matmul has it: instruction-descriptor bits 15 and 16 clear).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import types as T
from ...ir.core import Operation
from ...ir.layouts import (
    TMEM_M,
    WGMMA_SWIZZLE_BYTES,
    LinearLayout,
    SharedLayout,
    tmem_accumulator,
    wgmma_operand,
)

WARPS = 4          # one warpgroup: its warps reach the 128 TMEM lanes
MAX_N = 256        # tcgen05.mma with M = 128 (PTX ISA, "Valid shapes")
K_STEP = 16        # the instruction's K for 16-bit operands (kind::f16)

# Instruction descriptor of kind::f16 (PTX ISA, "Instruction descriptor format for
# .kind::f16"): bits 4-5 D's format (1: f32), 7-9 A's and 10-12 B's (0: f16, 1: bf16),
# 13/14 negate A/B, 15/16 A/B MN-major ("transpose"), 17-22 N >> 3, 24-28 M >> 4.
# (tileiras' sm_100 matmul_f16: 0x08200010 for M = N = 128, f16, K-major.)
FORMAT = {"f16": 0, "bf16": 1}


@dataclass(frozen=True)
class Tcgen05Plan:
    element: str   # f16 or bf16
    n: int         # the instruction's N (the tile's columns)
    m: int = TMEM_M  # the tile's rows: 128, or 256 (two instructions per K step)

    @property
    def instruction(self) -> str:
        return "tcgen05.mma.cta_group::1.kind::f16"

    @property
    def instruction_descriptor(self) -> int:
        return instruction_descriptor(self.element, TMEM_M, self.n)

    def accumulator(self, shape: tuple[int, ...]) -> LinearLayout:
        return tmem_accumulator(shape)

    def operand(self, i: int, t: T.TileType, source: object = None) -> SharedLayout:
        """The shared layout of operand ``i`` (0: A, 1: B), K-major."""
        return wgmma_operand(t.shape, 2, "ab"[i])


def instruction_descriptor(element: str, m: int, n: int) -> int:
    """The 32-bit instruction descriptor of a dense kind::f16 tcgen05.mma with f32 D and
    both operands K-major."""
    fmt = FORMAT[element]
    return (1 << 4) | (fmt << 7) | (fmt << 10) | ((n >> 3) << 17) | ((m >> 4) << 24)


def plan(op: Operation, warps: int) -> Tcgen05Plan | None:
    if op.name != "mmaf" or warps != WARPS:
        return None
    lt, rt, at = (v.type for v in op.operands[:3])
    if not all(isinstance(t, T.TileType) and t.rank == 2 for t in (lt, rt, at)):
        return None
    element = lt.element.name
    if element not in FORMAT or rt.element.name != element or at.element.name != "f32":
        return None
    m, k, n = lt.shape[0], lt.shape[1], rt.shape[1]
    if m not in (TMEM_M, 2 * TMEM_M) or n % 16 or not 16 <= n <= MAX_N:
        return None
    if k % K_STEP or not (2 * k in WGMMA_SWIZZLE_BYTES or 2 * k % WGMMA_SWIZZLE_BYTES[-1] == 0):
        return None
    return Tcgen05Plan(element, n, m)
