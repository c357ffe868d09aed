"""Which warp-level MMA instruction an mmaf/mmai uses, and how warps share its tiles.

``plan(op, warps, ptx_version)`` answers for one op: the mma.sync form (PTX ISA
"Warp-level matrix multiply-accumulate instructions") that takes its element types, the
instruction's K, and the grid of warps over the 16 x 8 result tiles; None when no form
fits (other types, an f64 result, shapes that are not multiples of the tile), in which
case the back end runs an FMA loop over operands in shared memory. assign-layouts gives
the accumulator the fragment layout (``#mma<acc, ...>``), distribute loads the operand
fragments from shared memory and issues the instructions.

    f16/bf16 x f16/bf16 -> f32 (f16 accumulators widen)  m16n8k16
    tf32 x tf32 -> f32                                    m16n8k8
    e4m3/e5m2 x e4m3/e5m2 -> f32 (PTX ISA 8.4: sm_100)    m16n8k32
    s8/u8 x s8/u8 -> s32                                  m16n8k32
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...ir import types as T
from ...ir.core import Operation, make_op
from ...ir.enums import RoundingMode, Signedness
from ...ir.layouts import LinearLayout, SharedLayout, mma_layout
from ...ir.rewrite import insert_before
from .layout_rules import column_major, shared_layout

_F8 = {"f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}


@dataclass(frozen=True)
class MmaPlan:
    instruction: str      # the full mma.sync opcode
    k: int                # the instruction's K
    warps: tuple[int, int]  # (row-tile warps, column-tile warps)
    integer: bool

    def accumulator(self, shape: tuple[int, ...]) -> LinearLayout:
        return mma_layout("acc", shape, self.warps)

    def fragment(self, role: str, shape: tuple[int, ...]) -> LinearLayout:
        return mma_layout(role, shape, self.warps, self.k)

    def operand(self, i: int, t: T.TileType, source: object = None) -> SharedLayout:
        """The shared layout of operand ``i`` (0: A, 1: B): swizzled for ldmatrix; a B of
        8-bit or tf32 elements K fastest (ldmatrix reads its fragments as rows)."""
        order = column_major(t.rank) if i == 1 and self.k != 16 else None
        return shared_layout(t, swizzled=True, order=order)


def plan(op: Operation, warps: int, ptx_version: str = "8.0") -> MmaPlan | None:
    lt, rt, at = (v.type for v in op.operands[:3])
    if not all(isinstance(t, T.TileType) and t.rank in (2, 3) for t in (lt, rt, at)):
        return None
    le, re_, ae = lt.element.name, rt.element.name, at.element.name
    if op.name == "mmaf" and le == re_ and le in ("f16", "bf16") and ae in ("f32", "f16"):
        k, instr = 16, f"mma.sync.aligned.m16n8k16.row.col.f32.{le}.{le}.f32"
    elif op.name == "mmaf" and le == re_ == "tf32" and ae == "f32":
        k, instr = 8, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
    elif op.name == "mmaf" and le in _F8 and re_ in _F8 and ae in ("f32", "f16"):
        if tuple(map(int, ptx_version.split("."))) < (8, 4):
            return None
        k, instr = 32, f"mma.sync.aligned.m16n8k32.row.col.f32.{_F8[le]}.{_F8[re_]}.f32"
    elif op.name == "mmai" and le == re_ == "i8" and ae == "i32":
        sa = "u8" if op.attributes.get("signedness_lhs") == Signedness.unsigned else "s8"
        sb = "u8" if op.attributes.get("signedness_rhs") == Signedness.unsigned else "s8"
        k, instr = 32, f"mma.sync.aligned.m16n8k32.row.col.s32.{sa}.{sb}.s32"
    else:
        return None
    m, kk, n = lt.shape[-2], lt.shape[-1], rt.shape[-1]
    if m % 16 or n % 8 or kk % k:
        return None
    grid = warp_grid(m // 16, n // 8, warps)
    return MmaPlan(instr, k, grid, op.name == "mmai")


def warp_grid(rows: int, cols: int, warps: int) -> tuple[int, int]:
    """(wm, wn), powers of two: wm divides the row tiles, wn the column tiles, as many
    warps busy as possible, then the fewest fragment loads per K step (each warp loads
    its row tiles of A and column tiles of B)."""
    best = None
    wm = 1
    while wm <= warps:
        wn = 1
        while wm * wn <= warps:
            if rows % wm == 0 and cols % wn == 0:
                key = (-(wm * wn), rows // wm + cols // wn / 2)
                if best is None or key < best[0]:
                    best = (key, (wm, wn))
            wn *= 2
        wm *= 2
    assert best is not None
    return best[1]


def round_tf32_operands(op: Operation, target_plan) -> None:
    """A target's plan that reads tf32 operands as they lie in shared memory (sm_90's
    wgmma: the tensor cores ignore an operand's low 13 bits; its plan says
    ``round_tf32_operands``) gets them rounded to nearest even first, as the interpreter's
    mmaf (and mma.sync's selection) rounds them: ftof to f32 and back to tf32, a
    cvt.rn.tf32.f32 per element before the store to shared memory, inserted before
    ``op``. An operand made by ftof (which rounds: f32 -> tf32 as cuTile's matmul
    converts) or a constant is a tf32 value already."""
    if target_plan is None or not getattr(target_plan, "round_tf32_operands", False):
        return
    for i, v in enumerate(op.operands[:2]):
        owner = v.owner
        if v.type.element.name != "tf32" or (
                isinstance(owner, Operation) and owner.name in ("ftof", "constant")):
            continue
        wide = make_op("ftof", [v], [dataclasses.replace(v.type, element=T.F32)],
                       {"rounding_mode": RoundingMode.nearest_even})
        narrow = make_op("ftof", [wide.results[0]], [v.type],
                         {"rounding_mode": RoundingMode.nearest_even})
        for new in (wide, narrow):
            new.source, new.location = op.source, op.location
            insert_before(op, new)
        op.operands[i] = narrow.results[0]
