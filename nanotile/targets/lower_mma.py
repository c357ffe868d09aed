"""mmaf / mmai on the tensor cores: warp-level ``mma.sync`` tiles over shared-memory operands.

Input: an ``mmaf``/``mmai`` op whose lhs (M x K, or B x M x K) and rhs (K x N / B x K x N)
are already in the CTA's shared buffer, row-major at known byte offsets (lower_shared
writes them there, one element per ``esize`` bytes: 2 for f16/bf16/f8, 4 for i8), and whose
accumulator is a tile in registers. Output: the PTX that computes the result tile into
registers (its ordinary distributed layout), through the PTX ISA's warp-level MMA:

    mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32   (mmaf)
    mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32                 (mmaf)
    mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2}.{e4m3,e5m2}.f32 (mmaf, PTX ISA 8.4: sm_100)
    mma.sync.aligned.m16n8k32.row.col.s32.{s8,u8}.{s8,u8}.s32         (mmai)

``mma_sync(lw, op, base, lhs_offset, rhs_offset, acc)`` returns False (emitting nothing)
when the op does not fit these forms (M % 16, N % 8, K % 8, 16 or 32, other element types,
an f64 result...): the caller then runs its FMA loop.

The result is cut into 16 x 8 tiles; warps form a ``wm x wn`` grid (wm divides the
16-row tiles, wn the 8-column tiles) and each warp owns a block of tiles, computed in
chunks of at most 32 tiles (128 accumulator registers). C and D pass through a scratch
area after the operands, f32/s32 row-major: the whole result at once, or bands of rows
(each a run of whole slots of the blocked layout) so that the CTA's buffer fits a static
48 KB array, else half of the 227 KB an SM has, else 227 KB. Per band, per chunk:

1. C: every thread writes its accumulator slots of the band, ``bar.sync``; each lane
   reads its C fragment (rows g and g+8, columns 2t, 2t+1 with g = lane / 4,
   t = lane % 4) as two ``ld.shared.v2``.
2. For every K step: the A fragments (rows of a 16 x 16 block) with
   ``ldmatrix.sync.aligned.m8n8.x4.shared.b16`` (lane l gives the address of row
   l % 8 + 8 (l / 8 % 2), column 8 (l / 16) of the block), the B fragments of two 8-column
   tiles with ``ldmatrix...x4.trans`` on the row-major K x N operand (the transpose gives
   each lane the (k = 2t, 2t+1; n = g) pairs "col" B needs). 8-bit operands (i8 stored as
   4-byte elements, f8 as 2-byte ones) are gathered with vector or scalar ``ld.shared``
   and their low bytes packed with ``prmt``; tf32 operands (f32 in shared memory) are
   loaded one by one and rounded with ``cvt.rn.tf32.f32``. Then one ``mma.sync`` per
   tile.
3. D goes back where C was (each tile belongs to one warp, which read its C before), then
   ``bar.sync`` and every thread reads its result slots row-major; a final ``bar.sync``
   frees the buffer.

Numerics: products of f16/bf16 are exact and mma.sync adds them in f32 (rounding per
K step in its own order); the interpreter rounds one float64 sum. Results agree to a few
f32 ulps of the row's magnitude, as the FMA loop did. An f16 accumulator is widened to
f32 and the result rounded once to f16 (not the f16-accumulating mma, which rounds
every K step). Integer results are exact (two's complement wrap, like the interpreter).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import types as T
from ..ir.core import Operation
from ..ir.enums import Signedness
from .layout import TileRegs
from .lower import Lowering

_CHUNK_TILES = 32  # 16x8 tiles a warp keeps in registers at once (4 accumulators each)


@dataclass
class _Plan:
    batch: int
    m: int
    n: int
    k: int
    kstep: int
    esize: int           # bytes per operand element in shared memory
    instr: str
    integer: bool
    wm: int              # warps along the 16-row tiles
    wn: int              # warps along the 8-column tiles

    @property
    def sm(self) -> int:  # row tiles per warp
        return self.m // 16 // self.wm

    @property
    def sn(self) -> int:  # column tiles per warp
        return self.n // 8 // self.wn


def _shape(t: T.Type) -> tuple[int, ...]:
    return tuple(t.shape) if isinstance(t, T.TileType) else ()


_F8 = {"f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}


def plan(op: Operation, threads: int, ptx_version: str = "8.0") -> _Plan | None:
    """How ``op`` maps onto mma.sync for a CTA of ``threads`` threads, or None. 8-bit
    float operands need PTX ISA 8.4 (the sm_100 target's 8.6; not sm_90's 8.0)."""
    lt, rt, at = (v.type for v in op.operands)
    if not all(isinstance(t, T.TileType) for t in (lt, rt, at)):
        return None
    le, re_, ae = lt.element.name, rt.element.name, at.element.name
    if op.name == "mmaf" and le == re_ and le in ("f16", "bf16") and ae in ("f32", "f16"):
        kstep, esize, integer = 16, 2, False
        instr = f"mma.sync.aligned.m16n8k16.row.col.f32.{le}.{le}.f32"
    elif op.name == "mmaf" and le == re_ == "tf32" and ae == "f32":
        kstep, esize, integer = 8, 4, False
        instr = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
    elif op.name == "mmaf" and le in _F8 and re_ in _F8 and ae in ("f32", "f16"):
        if tuple(map(int, ptx_version.split("."))) < (8, 4):
            return None
        kstep, esize, integer = 32, 2, False
        instr = f"mma.sync.aligned.m16n8k32.row.col.f32.{_F8[le]}.{_F8[re_]}.f32"
    elif op.name == "mmai":
        if le != "i8" or re_ != "i8" or ae != "i32":
            return None
        kstep, esize, integer = 32, 4, True
        sa = "u8" if op.attributes.get("signedness_lhs") == Signedness.unsigned else "s8"
        sb = "u8" if op.attributes.get("signedness_rhs") == Signedness.unsigned else "s8"
        instr = f"mma.sync.aligned.m16n8k32.row.col.s32.{sa}.{sb}.s32"
    else:
        return None
    ls, rs = _shape(lt), _shape(rt)
    batch = ls[0] if len(ls) == 3 else 1
    m, k = ls[-2:]
    n = rs[-1]
    if m % 16 or n % 8 or k % kstep or threads % 32:
        return None
    wm, wn = _warp_grid(m // 16, n // 8, threads // 32)
    return _Plan(batch, m, n, k, kstep, esize, instr, integer, wm, wn)


def _warp_grid(rows: int, cols: int, warps: int) -> tuple[int, int]:
    """(wm, wn): wm divides the row tiles, wn the column tiles, as many warps as possible,
    then the fewest fragment loads per K step (row tiles + column tiles / 2 per warp)."""
    best = None
    for wm in range(1, warps + 1):
        for wn in range(1, warps // wm + 1):
            if rows % wm or cols % wn:
                continue
            key = (-(wm * wn), rows // wm + cols // wn / 2)
            if best is None or key < best[0]:
                best = (key, (wm, wn))
    assert best is not None
    return best[1]


def _stages(p: _Plan, threads: int, scratch: int) -> tuple[int, int] | None:
    """(rows per stage, stages) for staging C/D: the whole result at once, or bands of
    whole 16-row tiles of one batch (a band's elements are whole slots of the blocked
    layout, so each thread writes and reads a contiguous run of its slots). The first
    choice that keeps the buffer within a static array (48 KB), else within half of the
    227 KB an SM has (two CTAs per SM), else within 227 KB."""
    from .ptx.builder import MAX_SHARED, STATIC_SHARED_LIMIT

    total = p.batch * p.m
    for limit in (STATIC_SHARED_LIMIT, MAX_SHARED // 2, MAX_SHARED):
        if scratch + total * p.n * 4 <= limit:
            return total, 1
        for rows in range(p.m - 16, 0, -16):
            if p.m % rows == 0 and rows * p.n % threads == 0 and \
                    scratch + rows * p.n * 4 <= limit:
                return rows, total // rows
    return None


def mma_sync(lw: Lowering, op: Operation, base: str, lhs_offset: int, rhs_offset: int,
             acc: TileRegs, scratch_offset: int | None = None) -> bool:
    """Lower ``op`` with mma.sync if it fits (see the module docstring); False otherwise.

    ``base`` is a b32 register holding the shared address of the buffer (``__nt_smem``),
    the operands lie row-major at ``base + lhs_offset`` / ``base + rhs_offset`` and are
    visible to every thread (a ``bar.sync`` came after their stores); ``acc`` is the
    accumulator tile in registers. The C/D staging area starts at ``scratch_offset``
    (default: after the rhs). Sets ``lw.values`` for the result."""
    from .lower_shared import esize as smem_esize

    p = plan(op, lw.threads, lw.target.ptx_version)
    if p is None or lhs_offset % 16 or rhs_offset % 16:
        return False
    lhs_t, rhs_t = op.operands[0].type, op.operands[1].type
    if smem_esize(lhs_t.element) != p.esize or smem_esize(rhs_t.element) != p.esize:
        return False
    if acc.layout.kind not in ("blocked", "replicated"):  # a splat answers every slot
        return False
    fn = lw.fn
    if scratch_offset is None:
        scratch_offset = (rhs_offset + p.batch * p.k * p.n * p.esize + 15) // 16 * 16
    staging = _stages(p, lw.threads, scratch_offset)
    if staging is None:
        return False
    rows, count = staging
    if count > 1:  # bands: each stage is one sub-problem of ``rows`` rows
        sub = _Plan(1, rows, p.n, p.k, p.kstep, p.esize, p.instr, p.integer,
                    *_warp_grid(rows // 16, p.n // 8, lw.threads // 32))
    else:
        sub = p
    cls, ty = ("b32", "b32") if p.integer else ("f32", "f32")
    fn.comment(f"{op.name}: {p.batch}x{p.m}x{p.n}x{p.k} with {p.instr.split('.')[3]}, "
               f"{count} stage(s) of {rows} rows, warps {sub.wm}x{sub.wn}")
    fn.need_shared(scratch_offset + (rows if count > 1 else p.batch * p.m) * p.n * 4)
    out = lw.new_tile(op.results[0].type)
    slots_per = rows * p.n // lw.threads if count > 1 else out.layout.slots
    widen = not p.integer and acc.element.name != "f32"
    lanes = _lane_addresses(lw, sub, base)
    mine = fn.reg("b32")  # this thread's element of slot k is 4 * T * k bytes further
    fn.emit(f"mad.lo.s32 {mine}, {lw.tid}, 4, {base}")
    for stage in range(count):
        # 1. C: this stage's accumulator elements, as f32 (or s32), row-major at scratch
        k0 = stage * slots_per
        ks = range(k0, min(k0 + slots_per, out.layout.slots))
        for k in ks:
            src = lw.slot(acc, k)
            if widen:
                r = fn.reg("f32")
                fn.emit(f"cvt.f32.{acc.element.name} {r}, {src}")
                src = r
            at = scratch_offset + 4 * lw.threads * (k - k0)
            fn.emit(f"st.shared.{ty} [{mine}+{at}], {src}",
                    lw.valid(out.layout, k) if count == 1 else None)
        fn.emit("bar.sync 0")
        # 2. per warp: its 16x8 tiles
        if count > 1:
            b, r0 = divmod(stage * rows, p.m)
            problems = [(lhs_offset + (b * p.m + r0) * p.k * p.esize,
                         rhs_offset + b * p.k * p.n * p.esize, scratch_offset)]
        else:
            problems = [(lhs_offset + b * p.m * p.k * p.esize,
                         rhs_offset + b * p.k * p.n * p.esize,
                         scratch_offset + b * p.m * p.n * 4) for b in range(p.batch)]
        _warp_tiles(lw, sub, lanes, problems, cls)
        # 3. every thread reads its result slots of the stage
        fn.emit("bar.sync 0")
        for k in ks:
            reg = out.regs[k]
            valid = lw.valid(out.layout, k) if count == 1 else None
            at = scratch_offset + 4 * lw.threads * (k - k0)
            if p.integer or out.element.name == "f32":
                fn.emit(f"ld.shared.{ty} {reg}, [{mine}+{at}]", valid)
            else:
                f = fn.reg("f32")
                fn.emit(f"ld.shared.f32 {f}, [{mine}+{at}]", valid)
                fn.emit(f"cvt.rn.{out.element.name}.f32 {reg}, {f}")
        fn.emit("bar.sync 0")
    lw.values[op.results[0]] = out
    return True


def try_mma_sync(lw: Lowering, op: Operation, lhs, rhs, acc: TileRegs) -> bool:
    """The hook for operands that already live in shared memory as ``#shared`` values
    (``lhs``/``rhs`` with ``.offset``, the byte offset of their row-major image in
    ``__nt_smem``, written and published with ``bar.sync`` by the caller). The C/D
    staging area goes after every byte in use so far (the operands and
    ``lw.fn.shared_bytes``), so it overlaps no live buffer."""
    from .lower_shared import esize as smem_esize
    from .lower_shared import smem_base

    if plan(op, lw.threads, lw.target.ptx_version) is None:
        return False
    ends = [lw.fn.shared_bytes]
    for v, x in zip(op.operands[:2], (lhs, rhs)):
        n = 1
        for d in v.type.shape:
            n *= d
        ends.append(x.offset + n * smem_esize(v.type.element))
    scratch = (max(ends) + 15) // 16 * 16
    return mma_sync(lw, op, smem_base(lw), lhs.offset, rhs.offset, acc, scratch)


@dataclass
class _Lanes:
    a: str          # byte address (in __nt_smem's window) of this lane's A row, tile (0, 0)
    b: str
    c: str
    idle: str | None  # predicate: this warp has no tile (outside the wm x wn grid)


def _lane_addresses(lw: Lowering, p: _Plan, base: str) -> _Lanes:
    """Per-lane addresses, relative to the first tile of the warp's block, of its A and B
    fragment rows (ldmatrix row addresses, or the 8-bit gathers' first element) and of its
    C/D elements (row g, column 2t), without the sub-problem's byte offsets."""
    fn = lw.fn
    tid = lw.tid
    lane, warp = fn.reg("b32"), fn.reg("b32")
    fn.emit(f"and.b32 {lane}, {tid}, 31")
    fn.emit(f"shr.u32 {warp}, {tid}, 5")
    idle = None
    if p.wm * p.wn < lw.threads // 32:
        idle = fn.reg("pred")
        fn.emit(f"setp.ge.u32 {idle}, {warp}, {p.wm * p.wn}")
    wi, wj = fn.reg("b32"), fn.reg("b32")   # the warp's row-block and column-block
    fn.emit(f"div.u32 {wi}, {warp}, {p.wn}")
    fn.emit(f"rem.u32 {wj}, {warp}, {p.wn}")
    g, t = fn.reg("b32"), fn.reg("b32")
    fn.emit(f"shr.u32 {g}, {lane}, 2")
    fn.emit(f"and.b32 {t}, {lane}, 3")
    row0, col0 = fn.reg("b32"), fn.reg("b32")  # first row / column of the warp's block
    fn.emit(f"mul.lo.s32 {row0}, {wi}, {p.sm * 16}")
    fn.emit(f"mul.lo.s32 {col0}, {wj}, {p.sn * 8}")
    es = p.esize
    a_lane, b_lane, c_lane = fn.reg("b32"), fn.reg("b32"), fn.reg("b32")
    if p.kstep == 16:
        # ldmatrix: row (lane % 8) + 8 * (lane / 8 % 2), column 8 * (lane / 16) of a 16x16 block
        r8, hi = fn.reg("b32"), fn.reg("b32")
        fn.emit(f"and.b32 {r8}, {lane}, 15")      # = lane % 8 + 8 * (lane / 8 % 2)
        fn.emit(f"shr.u32 {hi}, {lane}, 4")
        fn.emit(f"add.s32 {a_lane}, {row0}, {r8}")
        fn.emit(f"mul.lo.s32 {a_lane}, {a_lane}, {p.k}")
        fn.emit(f"mad.lo.s32 {a_lane}, {hi}, 8, {a_lane}")
        fn.emit(f"mad.lo.s32 {a_lane}, {a_lane}, {es}, {base}")
        fn.emit(f"mad.lo.s32 {b_lane}, {hi}, 8, {col0}")
        fn.emit(f"mad.lo.s32 {b_lane}, {r8}, {p.n}, {b_lane}")
        fn.emit(f"mad.lo.s32 {b_lane}, {b_lane}, {es}, {base}")
    elif p.kstep == 8:
        # tf32: A rows g (+8), columns t (+4); B rows t (+4), column g
        fn.emit(f"add.s32 {a_lane}, {row0}, {g}")
        fn.emit(f"mad.lo.s32 {a_lane}, {a_lane}, {p.k}, {t}")
        fn.emit(f"mad.lo.s32 {a_lane}, {a_lane}, {es}, {base}")
        fn.emit(f"mad.lo.s32 {b_lane}, {t}, {p.n}, {col0}")
        fn.emit(f"add.s32 {b_lane}, {b_lane}, {g}")
        fn.emit(f"mad.lo.s32 {b_lane}, {b_lane}, {es}, {base}")
    else:
        # 8-bit: A row g (+8), columns 4t..4t+3 (+16); B rows 4t..4t+3 (+16), column g
        fn.emit(f"add.s32 {a_lane}, {row0}, {g}")
        fn.emit(f"mul.lo.s32 {a_lane}, {a_lane}, {p.k}")
        fn.emit(f"mad.lo.s32 {a_lane}, {t}, 4, {a_lane}")
        fn.emit(f"mad.lo.s32 {a_lane}, {a_lane}, {es}, {base}")
        fn.emit(f"mul.lo.s32 {b_lane}, {t}, {4 * p.n}")
        fn.emit(f"add.s32 {b_lane}, {b_lane}, {col0}")
        fn.emit(f"add.s32 {b_lane}, {b_lane}, {g}")
        fn.emit(f"mad.lo.s32 {b_lane}, {b_lane}, {es}, {base}")
    fn.emit(f"add.s32 {c_lane}, {row0}, {g}")
    fn.emit(f"mul.lo.s32 {c_lane}, {c_lane}, {p.n}")
    fn.emit(f"add.s32 {c_lane}, {c_lane}, {col0}")
    fn.emit(f"mad.lo.s32 {c_lane}, {t}, 2, {c_lane}")
    fn.emit(f"mad.lo.s32 {c_lane}, {c_lane}, 4, {base}")
    return _Lanes(a_lane, b_lane, c_lane, idle)


def _warp_tiles(lw: Lowering, p: _Plan, lanes: _Lanes, problems: list[tuple[int, int, int]],
                cls: str) -> None:
    """The warp's tiles of each sub-problem (byte offsets of its A, B and C/D), in chunks."""
    fn = lw.fn
    skip = None
    if lanes.idle is not None:
        skip = fn.label("mma_idle")
        fn.emit(f"bra.uni {skip}", lanes.idle)
    cm = min(p.sm, 8)
    cn = min(p.sn, max(2, _CHUNK_TILES // cm))
    for a_b, b_b, c_b in problems:
        for m0 in range(0, p.sm, cm):
            for n0 in range(0, p.sn, cn):
                ms = range(m0, min(p.sm, m0 + cm))
                ns = range(n0, min(p.sn, n0 + cn))
                _chunk(lw, p, ms, ns, lanes.a, lanes.b, lanes.c, a_b, b_b, c_b, cls)
    if skip is not None:
        fn.place(skip)


def _chunk(lw: Lowering, p: _Plan, ms: range, ns: range, a_lane: str, b_lane: str,
           c_lane: str, a_b: int, b_b: int, c_b: int, cls: str) -> None:
    """Tiles (ms x ns) of the warp: C in, the K loop, D out."""
    fn = lw.fn
    es, ty = p.esize, ("s32" if p.integer else "f32")
    accs: dict[tuple[int, int], list[str]] = {}
    for i in ms:
        for j in ns:
            regs = [fn.reg(cls) for _ in range(4)]
            off = c_b + (i * 16 * p.n + j * 8) * 4
            fn.emit(f"ld.shared.v2.{ty} {{{regs[0]}, {regs[1]}}}, [{c_lane}+{off}]")
            fn.emit(f"ld.shared.v2.{ty} {{{regs[2]}, {regs[3]}}}, [{c_lane}+{off + 8 * p.n * 4}]")
            accs[i, j] = regs
    steps = p.k // p.kstep
    unroll = steps <= 4
    if unroll:
        for s in range(steps):
            _kstep(lw, p, ms, ns, a_lane, b_lane, a_b + s * p.kstep * es,
                   b_b + s * p.kstep * p.n * es, accs)
    else:
        a_k, b_k = fn.reg("b32"), fn.reg("b32")
        fn.emit(f"mov.u32 {a_k}, {a_lane}")
        fn.emit(f"mov.u32 {b_k}, {b_lane}")
        end = fn.reg("b32")
        fn.emit(f"add.s32 {end}, {a_lane}, {p.k * es}")
        loop = fn.label("mma_k")
        fn.place(loop)
        _kstep(lw, p, ms, ns, a_k, b_k, a_b, b_b, accs)
        fn.emit(f"add.s32 {a_k}, {a_k}, {p.kstep * es}")
        fn.emit(f"add.s32 {b_k}, {b_k}, {p.kstep * p.n * es}")
        more = fn.reg("pred")
        fn.emit(f"setp.lt.u32 {more}, {a_k}, {end}")
        fn.emit(f"bra {loop}", more)
    for (i, j), regs in accs.items():
        off = c_b + (i * 16 * p.n + j * 8) * 4
        fn.emit(f"st.shared.v2.{ty} [{c_lane}+{off}], {{{regs[0]}, {regs[1]}}}")
        fn.emit(f"st.shared.v2.{ty} [{c_lane}+{off + 8 * p.n * 4}], {{{regs[2]}, {regs[3]}}}")


def _kstep(lw: Lowering, p: _Plan, ms: range, ns: range, a_addr: str, b_addr: str,
           a_off: int, b_off: int, accs: dict) -> None:
    """One K step: load the fragments at the given byte offsets, one mma.sync per tile."""
    fn = lw.fn
    es = p.esize
    afr: dict[int, list[str]] = {}
    bfr: dict[int, list[str]] = {}
    for i in ms:
        off = a_off + i * 16 * p.k * es
        if p.kstep == 16:
            regs = [fn.reg("b32") for _ in range(4)]
            fn.emit(f"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{', '.join(regs)}}}, "
                    f"[{a_addr}+{off}]")
        elif p.kstep == 8:  # rows g, g+8, g, g+8; columns t, t, t+4, t+4
            regs = [_tf32(lw, f"[{a_addr}+{off + ((h % 2) * 8 * p.k + (h // 2) * 4) * es}]")
                    for h in range(4)]
        else:
            regs = []
            for h in range(4):  # rows g, g+8, g, g+8; columns +0, +0, +16, +16
                o = off + ((h % 2) * 8 * p.k + (h // 2) * 16) * es
                regs.append(_pack_bytes(lw, es, [f"[{a_addr}+{o + es * e}]" for e in range(4)],
                                        vector=True))
        afr[i] = regs
    js = list(ns)
    if p.kstep == 16:
        while js:
            pair = js[:2]
            js = js[2:]
            off = b_off + pair[0] * 8 * es
            regs = [fn.reg("b32") for _ in range(2 * len(pair))]
            shape = "x4" if len(pair) == 2 else "x2"
            fn.emit(f"ldmatrix.sync.aligned.m8n8.{shape}.trans.shared.b16 "
                    f"{{{', '.join(regs)}}}, [{b_addr}+{off}]")
            for q, j in enumerate(pair):
                bfr[j] = regs[2 * q:2 * q + 2]
    elif p.kstep == 8:
        for j in js:  # rows t, t+4; column g of the tile
            bfr[j] = [_tf32(lw, f"[{b_addr}+{b_off + (h * 4 * p.n + j * 8) * es}]")
                      for h in range(2)]
    else:
        for j in js:
            regs = []
            for h in range(2):  # rows 4t..4t+3 (+16), column g of the tile
                o = b_off + (h * 16 * p.n + j * 8) * es
                regs.append(_pack_bytes(lw, es, [f"[{b_addr}+{o + e * p.n * es}]"
                                                 for e in range(4)]))
            bfr[j] = regs
    for i in ms:
        for j in ns:
            d = accs[i, j]
            fn.emit(f"{p.instr} {{{', '.join(d)}}}, {{{', '.join(afr[i])}}}, "
                    f"{{{', '.join(bfr[j])}}}, {{{', '.join(d)}}}")


def _tf32(lw: Lowering, addr: str) -> str:
    """A tf32 operand register: the f32 at ``addr`` rounded to nearest even (the
    interpreter's rounding of tf32 operands)."""
    f, out = lw.fn.reg("f32"), lw.fn.reg("b32")
    lw.fn.emit(f"ld.shared.f32 {f}, {addr}")
    lw.fn.emit(f"cvt.rn.tf32.f32 {out}, {f}")
    return out


def _pack_bytes(lw: Lowering, es: int, addrs: list[str], vector: bool = False) -> str:
    """A b32 register holding the low bytes of four shared elements of ``es`` bytes (i8
    as 4 bytes, f8 as 2; the first element in the lowest byte): one vector load when they
    are consecutive, else four loads; then prmt."""
    fn = lw.fn
    if vector and es == 2:  # 4 x 16 bits = two words: bytes 0 and 2 of each
        xs = [fn.reg("b32") for _ in range(2)]
        out = fn.reg("b32")
        fn.emit(f"ld.shared.v2.b32 {{{', '.join(xs)}}}, {addrs[0]}")
        fn.emit(f"prmt.b32 {out}, {xs[0]}, {xs[1]}, 0x6420")
        return out
    xs = [fn.reg("b32") for _ in range(4)]
    if vector:
        fn.emit(f"ld.shared.v4.b32 {{{', '.join(xs)}}}, {addrs[0]}")
    else:
        for x, a in zip(xs, addrs):
            fn.emit(f"ld.shared.{'u16' if es == 2 else 'b32'} {x}, {a}")
    lo, hi, out = fn.reg("b32"), fn.reg("b32"), fn.reg("b32")
    fn.emit(f"prmt.b32 {lo}, {xs[0]}, {xs[1]}, 0x0040")
    fn.emit(f"prmt.b32 {hi}, {xs[2]}, {xs[3]}, 0x0040")
    fn.emit(f"prmt.b32 {out}, {lo}, {hi}, 0x5410")
    return out
