"""Which mmaf and mmaf_scaled ops run on tcgen05 (sm_100a's tensor cores, accumulating in
tensor memory).

``plan(op, warps)`` answers for one op: a ``Tcgen05Plan`` when the shapes and types fit
``tcgen05.mma.cta_group::1.kind::{f16,tf32,f8f6f4,mxf8f6f4}`` with both operands in
shared memory and D in tensor memory (TMEM), else None (the op keeps the shared mma.sync
lowering, mma_plan.py, or mmaf_scaled its FMA loop).
assign-layouts{gpu=sm_100 mma=tcgen05} asks it first (Target.select_overrides
["plan_mma"]); the plan gives the accumulator its layout (``#tmem<acc, m128nN>``: the
registers tcgen05.ld.32x32b gives, layouts.tmem_accumulator) and A and B their shared
layouts (layouts.wgmma_operand: the canonical K-major swizzled layouts, which sm_100's
matrix descriptors describe as sm_90's do), which lower-tcgen05's descriptors describe.

What fits (PTX ISA, "tcgen05.mma", "Instruction descriptor", "Matrix Descriptors"):

- mmaf with an f32 accumulator, 2-D (no batch), on (the instruction's K: 32 bytes of a
  row of each type, as wgmma's)

      f16 x f16 or bf16 x bf16      kind::f16      K 16
      tf32 x tf32                   kind::tf32     K 8
      e4m3/e5m2 x e4m3/e5m2         kind::f8f6f4   K 32 (any mix of the two)

  and mmai of i8 (s8 or u8, either operand) into an i32 accumulator: kind::i8, K 32, D
  s32 (tileiras' sm_100 SASS: UTCIMMA for a 128 x 128 x 64 mmai);

  tf32 operands rounded to nearest in registers before they are stored
  (``round_tf32_operands``: the tensor cores ignore the low 13 bits, as sm_90's wgmma);
- a CTA of one warpgroup (4 warps: with M = 128 and cta_group::1, warp w reads TMEM lanes
  32 w .. 32 w + 31, rows 32 w .. of D) and 128 or 256 rows: one M = 128 instruction per
  128-row block, the second block's D in the N columns after the first's; or 64 rows
  (not block-scaled): one M = 64 instruction, D in the first 16 lanes of each warp's
  quarter (layouts.tmem_accumulator; M = 256 with cta_group::2 is not planned);
- N a multiple of 16 from 16 to 256 (M = 128's rule), one instruction per K step;
- K a multiple of the instruction's K whose row (K elements) is made of swizzle atoms: 32,
  64 or 128 bytes, or a multiple of 128 (as wgmma's).

and mmaf_scaled (block-scaled, kind::mxf8f6f4.block_scale.scale_vec::1X: PTX ISA, "Block
Scaling") on e4m3/e5m2 data with f8E8M0FNU scales, one per 32 elements along K, the
same shapes; the scales stay in row-major shared memory (``operand`` 3 and 4), from
where distribute gathers each thread's scale words and lower-tcgen05 stores them to
tensor memory (lower_tcgen05.py). f4E2M1FN data (kind::
mxf4) and f8E4M3FN scales are not planned (the FMA loop).

A is read K-major. B is read K-major (transposed into shared memory, instruction-
descriptor bit 16 clear) when it is stored from registers, and MN-major (its rows along N,
as they lie in global memory: bit 16 set) when a TMA copy lands it (``TMA_COPY``, from
select-tma-loads and assign-layouts), as tileiras' sm_100 f8 batched matmul reads it
and its matmul_f16_tma (UTMALDG, no transposition in shared memory); f16, bf16 and f8
(tf32 keeps its K-major B).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import types as T
from ...ir.core import Operation
from ..ptx.select_tma_loads import TMA_COPY
from ...ir.layouts import (
    TMEM_HALF_M,
    TMEM_M,
    WGMMA_SWIZZLE_BYTES,
    LinearLayout,
    SharedLayout,
    tmem_accumulator,
    wgmma_operand,
)

WARPS = 4          # one warpgroup: its warps reach the 128 TMEM lanes
MAX_N = 256        # tcgen05.mma with M = 128 (PTX ISA, "Valid shapes")
K_BYTES = 32       # the instruction's K, in bytes of a row (16 f16, 8 tf32, 32 f8)

# Instruction descriptor of kind::f16/tf32/f8f6f4 (PTX ISA, "Instruction descriptor
# format for .kind::tf32, .kind::f16, .kind::f8f6f4 and .kind::i8"): bits 4-5 D's format
# (1: f32), 7-9 A's and 10-12 B's (below), 13/14 negate A/B, 15/16 A/B MN-major
# ("transpose"), 17-22 N >> 3, 24-28 M >> 4. (tileiras' sm_100 matmul_f16: 0x08200010
# for M = N = 128, f16, K-major.) kind::i8: D S32 (2), A and B S8 (1) or U8 (0).
# element type -> (kind, its A/B format in the descriptor, bytes)
KINDS = {"f16": ("f16", 0, 2), "bf16": ("f16", 1, 2), "tf32": ("tf32", 2, 4),
         "f8E4M3FN": ("f8f6f4", 0, 1), "f8E5M2": ("f8f6f4", 1, 1), "i8": ("i8", 1, 1)}
D_FORMATS = {"f32": 1, "i32": 2}  # the accumulator's type -> its descriptor format
UNSIGNED_I8 = 0                   # kind::i8's A/B format for u8


SCALE_BLOCK = 32     # mxf8f6f4's scale_vec::1X: one scale per 32 elements along K
SCALED_KIND = "mxf8f6f4"
UE8M0 = 1 << 23      # block-scaled descriptor bit 23: the scales are UE8M0
B_MN_MAJOR = 1 << 16  # both descriptors' bit 16: B's rows run along N ("transpose B")
# B of these types is read MN-major when a TMA copy lands it (select_tma_loads.TMA_COPY):
# tileiras' sm_100 f16 and f8 matmuls copy B so
MN_MAJOR_COPIES = frozenset({"f16", "bf16", "f8E4M3FN", "f8E5M2"})


@dataclass(frozen=True)
class Tcgen05Plan:
    element: str   # A's element type (KINDS)
    n: int         # the instruction's N (the tile's columns)
    m: int = TMEM_M  # the tile's rows: 128, or 256 (two instructions per K step)
    b_element: str | None = None  # B's element type when it differs from A's (f8)
    scaled: bool = False  # mmaf_scaled: kind::mxf8f6f4.block_scale

    @property
    def kind(self) -> str:
        return SCALED_KIND if self.scaled else KINDS[self.element][0]

    @property
    def instruction(self) -> str:
        return instruction(self.element, self.scaled)

    @property
    def instruction_descriptor(self) -> int:
        return instruction_descriptor(self.element, min(self.m, TMEM_M), self.n,
                                      self.b_element)

    @property
    def round_tf32_operands(self) -> bool:
        """Whether assign-layouts rounds the operands to tf32 in registers (nearest even,
        the interpreter's mmaf) before they are stored: the MMA reads a tf32 as it lies in
        shared memory, ignoring its low 13 bits (truncation)."""
        return self.element == "tf32"

    def accumulator(self, shape: tuple[int, ...]) -> LinearLayout:
        return tmem_accumulator(shape)

    def operand(self, i: int, t: T.TileType, source: object = None) -> SharedLayout:
        """The shared layout of operand ``i``: A (0) K-major; B (1) MN-major when a TMA
        copy lands it (``source``: TMA_COPY, or the MN-major layout such a copy gave it)
        and its type allows, else K-major; the scales of mmaf_scaled (3, 4) row-major."""
        if i > 2:
            return SharedLayout(tuple(t.shape))
        size = KINDS[t.element.name][2]
        if i == 1 and t.element.name in MN_MAJOR_COPIES and _atoms(t.shape[1] * size):
            copied = wgmma_operand(t.shape, size, "b", mn_major=True)
            if source in (TMA_COPY, copied):
                return copied
        return wgmma_operand(t.shape, size, "ab"[i])


def instruction(element: str, scaled: bool = False) -> str:
    if scaled:
        return f"tcgen05.mma.cta_group::1.kind::{SCALED_KIND}.block_scale.scale_vec::1X"
    return f"tcgen05.mma.cta_group::1.kind::{KINDS[element][0]}"


def k_step(element: str) -> int:
    """The instruction's K for operands of ``element``."""
    return K_BYTES // KINDS[element][2]


def instruction_descriptor(element: str, m: int, n: int, b_element: str | None = None,
                           b_mn_major: bool = False,
                           unsigned: tuple[bool, bool] = (False, False)) -> int:
    """The 32-bit instruction descriptor of a dense tcgen05.mma (kind by ``element``) with
    f32 D (s32 for kind::i8, whose A and B are u8 where ``unsigned`` says so), A K-major
    and B K-major or (``b_mn_major``) MN-major."""
    a, b = KINDS[element][1], KINDS[b_element or element][1]
    if element == "i8":
        a, b = (UNSIGNED_I8 if u else f for u, f in zip(unsigned, (a, b)))
    d = D_FORMATS["i32" if element == "i8" else "f32"]
    return (d << 4) | (a << 7) | (b << 10) | (B_MN_MAJOR if b_mn_major else 0) | \
        ((n >> 3) << 17) | ((m >> 4) << 24)


def block_scaled_descriptor(element: str, m: int, n: int, a_id: int, b_id: int,
                            b_element: str | None = None, b_mn_major: bool = False) -> int:
    """The 32-bit instruction descriptor of kind::mxf8f6f4.block_scale (PTX ISA,
    "Instruction descriptor format for .kind::mxf8f6f4, .kind::mxf4 and .kind::mxf4nvf4";
    CUTLASS's InstrDescriptorBlockScaled): bits 4-5 the byte of B's scale words (SFB_ID),
    7-9 / 10-12 A's / B's format, 17-22 N >> 3, 23 UE8M0 scales, 24-28 M >> 4, 29-30 the
    byte of A's scale words (SFA_ID); A K-major, B K-major or (``b_mn_major``, bit 16)
    MN-major, D f32 (implied)."""
    a, b = KINDS[element][1], KINDS[b_element or element][1]
    return (b_id << 4) | (a << 7) | (b << 10) | (B_MN_MAJOR if b_mn_major else 0) | \
        ((n >> 3) << 17) | UE8M0 | ((m >> 4) << 24) | (a_id << 29)


def plan(op: Operation, warps: int) -> Tcgen05Plan | None:
    if op.name not in ("mmaf", "mmai", "mmaf_scaled") or warps != WARPS:
        return None
    lt, rt, at = (v.type for v in op.operands[:3])
    if not all(isinstance(t, T.TileType) and t.rank == 2 for t in (lt, rt, at)):
        return None
    element, b_element = lt.element.name, rt.element.name
    if element not in KINDS or b_element not in KINDS or \
            at.element.name != ("i32" if op.name == "mmai" else "f32") or \
            (op.name == "mmai") != (element == "i8"):
        return None
    scaled = op.name == "mmaf_scaled"
    if scaled and not _scales_fit(op):
        return None
    mixed = b_element != element
    if KINDS[b_element][0] != KINDS[element][0] or (mixed and KINDS[element][0] != "f8f6f4"):
        return None  # one kind for both; only f8f6f4 mixes types (e4m3 x e5m2)
    m, k, n = lt.shape[0], lt.shape[1], rt.shape[1]
    if m not in (TMEM_M, 2 * TMEM_M) + (() if scaled else (TMEM_HALF_M,)) or n % 16 or \
            not 16 <= n <= MAX_N:
        return None
    row = KINDS[element][2] * k  # bytes of a K row
    if row % K_BYTES or not _atoms(row):
        return None
    return Tcgen05Plan(element, n, m, b_element if b_element != element else None, scaled)


def _atoms(row: int) -> bool:
    """Whether a shared row of ``row`` bytes is made of swizzle atoms (wgmma_operand)."""
    return row in WGMMA_SWIZZLE_BYTES or row % WGMMA_SWIZZLE_BYTES[-1] == 0


def _scales_fit(op: Operation) -> bool:
    """mmaf_scaled's data is e4m3/e5m2, its scales f8E8M0FNU, one per 32 elements along
    K (scale_vec::1X)."""
    lt, sa, sb = op.operands[0].type, op.operands[3].type, op.operands[4].type
    if KINDS[lt.element.name][0] != "f8f6f4" or \
            {sa.element.name, sb.element.name} != {"f8E8M0FNU"}:
        return False
    return lt.shape[1] == SCALE_BLOCK * sa.shape[1]
