"""Tensor-core instructions: ldmatrix/stmatrix, mma.sync (m16n8k8/k16/k32), wgmma
(sm_90a, operands from shared-memory descriptors or registers) and tcgen05 (sm_100a:
tensor-memory alloc, ld/st, mma kind::f16, commit). They sit together because they all
load, store or multiply matrix fragments in the tensor cores' layouts: mma.sync and wgmma
share the fragment helpers (``_frag_a``, ``_unpack``), wgmma and tcgen05 the
shared-memory matrix descriptors (``decode_desc``, ``load_operand``)."""

from __future__ import annotations

import numpy as np

from nanotile.ptxemu.async_check import AsyncHazard, _Wgmma, byte_span, raw_load, wgmma_retire
from nanotile.ptxemu.errors import MemoryFault
from nanotile.ptxemu.fpmath import DTYPES, UINT, type_size
from nanotile.ptxemu.machine import LANES
from nanotile.ptxemu.memory import SHARED_WINDOW
from nanotile.ptxemu.ops_async import _mbar_addr, _mbar_arrive, group_count
from nanotile.ptxemu.ops_common import F64, C, _first_active, _items, handler_registry
from nanotile.ptxemu.tensor_core_sums import fp8_mma_sync, tensor_core_dot
from nanotile.ptxemu.ptx_parser import Addr, Imm, Reg, Vec


HANDLERS: dict = {}
op = handler_registry(HANDLERS)


# ---------------------------------------------------------------- matrix ops

@op("ldmatrix", "stmatrix")
def _ldmatrix(c: C):
    if not c.has("m8n8") or c.type() != "b16":
        raise c.unsupported()
    nmat = 4 if c.has("x4") else 2 if c.has("x2") else 1
    trans = c.has("trans")
    is_ld = c.base == "ldmatrix"
    regs = _items(c.ops[0] if is_ld else c.ops[1])
    space, af = c.mem_addr(c.ops[1] if is_ld else c.ops[0], c.space())
    if len(regs) != nmat:
        raise c.error(f"expected {nmat} registers")
    sets = [c.dst(r, "b32") for r in regs] if is_ld else None
    gets = None if is_ld else [c.src(r, "b32") for r in regs]
    g = LANES // 4
    t2 = (LANES % 4) * 2

    def matrices_addresses(w, m):
        a = af(w)
        if space == "generic":
            a = a - np.uint64(SHARED_WINDOW)
        return a

    def ldm(w, m):
        a = matrices_addresses(w, m)
        sh = w.cta.shared
        for i in range(nmat):
            rows = a[8 * i:8 * i + 8]
            # mat[r, col] for an 8x8 b16 matrix whose row r starts at rows[r]
            mat = np.stack([sh.load(rows + np.uint64(2 * col), 2) for col in range(8)], axis=1)
            if trans:
                mat = mat.T
            lo = mat[g, t2].astype(np.uint32)
            hi = mat[g, t2 + 1].astype(np.uint32)
            sets[i](w, m, lo | (hi << np.uint32(16)))

    def stm(w, m):
        a = matrices_addresses(w, m)
        sh = w.cta.shared
        for i in range(nmat):
            v = gets[i](w)
            mat = np.zeros((8, 8), np.uint16)
            mat[g, t2] = (v & np.uint32(0xFFFF)).astype(np.uint16)
            mat[g, t2 + 1] = (v >> np.uint32(16)).astype(np.uint16)
            if trans:
                mat = mat.T
            rows = a[8 * i:8 * i + 8]
            for col in range(8):
                sh.store(rows + np.uint64(2 * col), 2, mat[:, col])
    return ldm if is_ld else stm


def _frag_a(k: int, esize: int, e: int):
    """(row, col) of element e of a lane's A fragment (g = lane>>2, t = lane&3), PTX ISA
    'Matrix Fragments for mma.m16n8k*'."""
    g, t = LANES // 4, LANES % 4
    if esize == 4:                                                    # tf32, k8
        return g + 8 * (e % 2), t + 4 * (e // 2)
    if esize == 2 and k == 16:
        return g + 8 * ((e // 2) % 2), 2 * t + e % 2 + 8 * (e // 4)
    if esize == 2 and k == 8:
        return g + 8 * (e // 2), 2 * t + e % 2
    return g + 8 * ((e // 4) % 2), 4 * t + e % 4 + 16 * (e // 8)      # 8-bit, k32


def _frag_b(k: int, esize: int, e: int):
    """(k, n) of element e of a lane's B fragment."""
    g, t = LANES // 4, LANES % 4
    if esize == 4:                                                    # tf32, k8
        return t + 4 * e, g
    if esize == 2 and k == 16:
        return 2 * t + e % 2 + 8 * (e // 2), g
    if esize == 2 and k == 8:
        return 2 * t + e, g
    return 4 * t + e % 4 + 16 * (e // 4), g                           # 8-bit, k32


def _frag_c(e: int):
    g, t = LANES // 4, LANES % 4
    return g + 8 * (e // 2), 2 * t + e % 2


_MMA_SHAPES = {"m16n8k16": 16, "m16n8k8": 8, "m16n8k32": 32}
_MMA_INPUTS = {16: ("f16", "bf16"), 8: ("f16", "bf16", "tf32"), 32: ("e4m3", "e5m2", "s8", "u8")}


def _unpack(v: np.ndarray, esize: int, et) -> list[np.ndarray]:
    """The elements packed in b32 registers v, lowest bits first, as float64."""
    per = 4 // esize
    mask = (1 << (8 * esize)) - 1 if esize < 4 else 0xFFFFE000  # tf32: low 13 bits unused
    out = []
    for j in range(per):
        bits = (v >> np.uint32(8 * esize * j)) & np.uint32(mask)
        out.append(bits.astype(UINT[esize]).view(et).astype(F64))
    return out


@op("mma")
def _mma(c: C):
    shape = next((x for x in c.mods if x in _MMA_SHAPES), None)
    if shape is None or not c.has("row") or not c.has("col") or len(c.types) != 4:
        raise c.unsupported("only mma.sync m16n8k8/k16/k32 .row.col")
    k = _MMA_SHAPES[shape]
    dtn, atn, btn, ctn = c.types
    if atn not in _MMA_INPUTS[k] or btn not in _MMA_INPUTS[k] or dtn != ctn:
        raise c.unsupported(f"{atn}/{btn} inputs for {shape}")
    integer = atn in ("s8", "u8")
    if (integer and dtn != "s32") or (not integer and dtn not in ("f32", "f16")) or \
            (dtn == "f16" and atn != "f16") or (integer != (btn in ("s8", "u8"))):
        raise c.unsupported(f"{dtn} accumulators with {atn} inputs")
    if c.has("satfinite"):
        raise c.unsupported(".satfinite")
    esize = type_size(atn)
    na, nb = 16 * k // (32 * 4 // esize), 8 * k // (32 * 4 // esize)
    packed_acc = dtn == "f16"
    nc = 2 if packed_acc else 4
    dregs, aregs, bregs, cregs = (_items(o) for o in c.ops[:4])
    if (len(dregs), len(aregs), len(bregs), len(cregs)) != (nc, na, nb, nc):
        raise c.error(f"mma.{shape} with {atn} takes {{{nc}}}, {{{na}}}, {{{nb}}}, {{{nc}}} "
                      "registers")
    acc_t = "b32" if packed_acc else dtn
    sds = [c.dst(r, acc_t) for r in dregs]
    ga = [c.src(r, "b32") for r in aregs]
    gb = [c.src(r, "b32") for r in bregs]
    gc = [c.src(r, acc_t) for r in cregs]
    ea, eb = DTYPES[atn], DTYPES[btn]
    a_pos = [_frag_a(k, esize, e) for e in range(na * 4 // esize)]
    b_pos = [_frag_b(k, esize, e) for e in range(nb * 4 // esize)]
    c_pos = [_frag_c(e) for e in range(4)]

    def mma(w, m):
        A = np.zeros((16, k))
        B = np.zeros((k, 8))
        C_ = np.zeros((16, 8))
        a_el = [x for g in ga for x in _unpack(g(w), esize, ea)]
        for (r, col), v in zip(a_pos, a_el):
            A[r, col] = v
        b_el = [x for g in gb for x in _unpack(g(w), esize, eb)]
        for (kk, n), v in zip(b_pos, b_el):
            B[kk, n] = v
        if packed_acc:
            c_el = [x for g in gc for x in _unpack(g(w), 2, DTYPES["f16"])]
        else:
            c_el = [g(w).astype(F64) for g in gc]
        for (r, col), v in zip(c_pos, c_el):
            C_[r, col] = v
        # the tensor cores' fused, truncating sums (tensor_core_sums.py)
        if integer or packed_acc:
            D = A @ B + C_
        elif atn in ("e4m3", "e5m2"):
            D = fp8_mma_sync(A[:, None, :], B.T[None, :, :], C_).astype(F64)
        else:
            D = tensor_core_dot(A[:, None, :], B.T[None, :, :], C_, atn).astype(F64)
        outs = [D[r, col] for r, col in c_pos]
        if integer:
            res = [np.array(o, dtype=np.int64).astype(np.int32) for o in outs]
            for s, o in zip(sds, res):
                s(w, m, o)
        elif packed_acc:
            h = [o.astype(np.float16).view(np.uint16).astype(np.uint32) for o in outs]
            for j, s in enumerate(sds):
                s(w, m, h[2 * j] | (h[2 * j + 1] << np.uint32(16)))
        else:
            for s, o in zip(sds, outs):
                s(w, m, o.astype(np.float32))
    return mma


# ---------------------------------------------------------------- wgmma (sm_90a)

_WGMMA_K = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32}  # 32 bytes of a row

_SWIZZLE_BYTES = {1: 128, 2: 64, 3: 32}           # sm_90 descriptor bits 62-63
_SWIZZLE_BYTES_SM100 = {0: 0, 2: 128, 4: 64, 6: 32}  # sm_100 descriptor bits 61-63


def decode_desc(desc: int, sm100: bool = False) -> tuple[int, int, int, int]:
    """(start, LBO, SBO, swizzle width in bytes or 0) of a shared-memory matrix descriptor."""
    start = (desc & 0x3FFF) << 4
    lbo = ((desc >> 16) & 0x3FFF) << 4
    sbo = ((desc >> 32) & 0x3FFF) << 4
    if sm100:
        mode = (desc >> 61) & 7
        if mode not in _SWIZZLE_BYTES_SM100:
            raise MemoryFault(f"matrix descriptor layout type {mode} is not emulated")
        return start, lbo, sbo, _SWIZZLE_BYTES_SM100[mode]
    mode = (desc >> 62) & 3
    return start, lbo, sbo, _SWIZZLE_BYTES.get(mode, 0)


def _swizzled(addr: np.ndarray, width: int) -> np.ndarray:
    mask = {128: 7, 64: 3, 32: 1}[width]
    return addr ^ (((addr >> 7) & mask) << 4)


def kmajor_addresses(d: tuple[int, int, int, int], rows: np.ndarray, ks: np.ndarray,
                     esize: int = 2) -> np.ndarray:
    """Shared addresses of the ``esize``-byte elements (rows[i], ks[j]) of a K-major
    operand."""
    start, lbo, sbo, width = d
    r = rows[:, None].astype(np.int64)
    k = ks[None, :].astype(np.int64)
    if width == 0:
        # core matrices of 8 rows x 16 bytes: LBO steps along K, SBO along M/N
        core = 16 // esize
        return start + (r // 8) * sbo + (r % 8) * 16 + (k // core) * lbo + (k % core) * esize
    per_row = width // esize
    addr = start + (r // 8) * sbo + (r % 8) * width + (k // per_row) * lbo + \
        (k % per_row) * esize
    return _swizzled(addr, width)


def mnmajor_addresses(d: tuple[int, int, int, int], mns: np.ndarray, ks: np.ndarray,
                      esize: int = 2) -> np.ndarray:
    """Shared addresses of the ``esize``-byte elements (mns[i], ks[j]) of an MN-major
    operand: the MN dimension is contiguous within a swizzle atom (width bytes), 8 K-rows
    form an atom (SBO steps over 8 K-rows, LBO over atoms along MN). wgmma reads 16-bit
    operands so (its callers check), tcgen05 8-bit ones too."""
    start, lbo, sbo, width = d
    if width == 0:
        raise MemoryFault("MN-major matrix operands without swizzle are not emulated")
    if esize not in (1, 2):
        raise MemoryFault("MN-major matrix operands are 8- or 16-bit only")
    per_row = width // esize
    mn = mns[:, None].astype(np.int64)
    k = ks[None, :].astype(np.int64)
    addr = start + (mn // per_row) * lbo + (k // 8) * sbo + (k % 8) * width + \
        (mn % per_row) * esize
    return _swizzled(addr, width)


def _decode(bits: np.ndarray, esize: int, et) -> np.ndarray:
    """Elements of ``esize`` bytes (unsigned bits) as float64; tf32 (4 bytes) ignores
    the low 13 bits, as mma.sync does."""
    if esize == 4:
        bits = bits.astype(np.uint32) & np.uint32(0xFFFFE000)
    return bits.astype(UINT[esize]).view(et).astype(F64)


def load_operand(sh, desc: int, mn_major: bool, mns: np.ndarray, et, sm100: bool,
                 spans: list | None = None, esize: int = 2) -> np.ndarray:
    """The (len(mns), 32 / esize) operand tile (32 bytes of each row: 16 f16/bf16, 8 tf32,
    32 f8 elements) a descriptor points to, as float64. It is read through the async
    proxy (no generic-proxy checks); ``spans`` collects the shared bytes read, for
    async_check."""
    layout = mnmajor_addresses if mn_major else kmajor_addresses
    k = 32 // esize
    addr = layout(decode_desc(desc, sm100), mns, np.arange(k), esize).ravel().astype(np.uint64)
    vals = _decode(raw_load(sh, addr, esize), esize, et)
    if spans is not None:
        spans.append(byte_span(addr, esize))
    return vals.reshape(len(mns), k)


@op("wgmma")
def _wgmma(c: C):
    sub = c.mods[0] if c.mods else ""
    if sub in ("fence", "commit_group", "wait_group"):
        return _wgmma_sync(c, sub)
    if sub != "mma_async":
        raise c.unsupported()
    shape = next((x for x in c.mods if x.startswith("m64n")), None)
    if shape is None or "k" not in shape or len(c.types) != 3:
        raise c.unsupported("only m64nNkK with f16/bf16, tf32 or e4m3/e5m2 inputs")
    dtn, atn, btn = c.types
    n, k = (int(x) for x in shape[4:].split("k"))
    if atn not in _WGMMA_K or k != _WGMMA_K[atn] or dtn != "f32" or \
            not (atn == btn or {atn, btn} <= {"e4m3", "e5m2"}):
        raise c.unsupported(f"{shape} {dtn}.{atn}.{btn}: only m64nNk16 f16/bf16, m64nNk8 "
                            "tf32 and m64nNk32 e4m3/e5m2 -> f32")
    esize = type_size(atn)
    transposable = esize == 2       # imm-trans-a/b: f16/bf16's only
    dregs = _items(c.ops[0])
    if len(dregs) != n // 2:
        raise c.error(f"m64n{n} takes {n // 2} accumulator registers")
    a_regs = isinstance(c.ops[1], Vec)          # RS form: A fragment in registers
    if a_regs:
        if len(c.ops[1].items) != 4:
            raise c.error("wgmma with A in registers takes 4 registers for A")
        ga_regs = [c.src(r, "b32", checked=False) for r in c.ops[1].items]
        a_indices = [c.reg(r) for r in c.ops[1].items]
        ga = None       # the warp's 16 rows as mma.sync's A fragment of the same K
        a_pos = [_frag_a(k, esize, e) for e in range(16 // esize)]
    else:
        ga = c.src(c.ops[1], "b64")
    gb = c.src(c.ops[2], "b64")
    gscale = c.src(c.ops[3], "pred")
    imms = [o.value if isinstance(o, Imm) else None for o in c.ops[4:]]
    wanted = 2 + (0 if not transposable else 1 if a_regs else 2)
    if len(imms) != wanted or None in imms:
        raise c.unsupported(f"wgmma.{shape}.{atn} takes {wanted} immediate scale/transpose "
                            "operands")
    imms += [0] * (4 - len(imms))
    if a_regs and transposable:
        imms = imms[:2] + [0] + imms[2:3]
    sa, sb, trans_a, trans_b = imms
    gets = [c.src(r, "f32", checked=False) for r in dregs]
    sets = [c.dst(r, "f32", checked=False) for r in dregs]
    d_indices = [c.reg(r) for r in dregs]
    et, etb = DTYPES[atn], DTYPES[btn]
    g = LANES // 4
    t = LANES % 4
    ns = np.arange(n)
    # register j of a lane holds D[row, col] of the warp's 16-row slice
    rows_of = np.array([g + 8 * ((j // 2) % 2) for j in range(n // 2)])
    cols_of = np.array([8 * (j // 4) + 2 * t + (j % 2) for j in range(n // 2)])

    def mma_async(w, m):
        lane0 = _first_active(m)
        db = int(gb(w)[lane0])
        sh = w.cta.shared
        hazards = w.cta.hazards
        accumulate = bool(gscale(w)[lane0])
        if hazards is not None:
            state = _wgmma_inputs_checked(w, hazards, d_indices if accumulate else [],
                                          a_indices if a_regs else [])
        spans = []
        if a_regs:      # the warp's 16 rows, laid out like mma.m16n8kK's A fragment
            A = np.zeros((16, k))
            elems = [x for g_ in ga_regs for x in _unpack(g_(w), esize, et)]
            for (r, col), v in zip(a_pos, elems):
                A[r, col] = v
        else:
            rows = 16 * (w.wid % 4) + np.arange(16)
            A = load_operand(sh, int(ga(w)[lane0]), bool(trans_a), rows, et, sm100=False,
                             spans=spans, esize=esize)
        B = load_operand(sh, db, bool(trans_b), ns, etb, sm100=False, spans=spans,
                         esize=esize)
        if accumulate:
            if hazards is not None:     # a wgmma in flight on the same registers chains
                acc = np.stack([_pending_or_register(w, state, i) for i in d_indices])
                acc = acc.view(np.float32).astype(F64)
            else:
                acc = np.stack([gg(w) for gg in gets]).astype(F64)   # (n/2, 32)
        else:
            acc = np.zeros(rows_of.shape)
        # register j of each lane: row rows_of[j] of A times column cols_of[j] of B, plus
        # its accumulator, summed as the tensor cores do (tensor_core_sums.py)
        out = tensor_core_dot((sa * A)[rows_of], (sb * B)[cols_of], acc, atn, btn)
        if hazards is None:
            for j, s in enumerate(sets):
                s(w, m, out[j])
            return
        # the results land in the registers when wgmma.wait_group retires this wgmma
        span = np.concatenate(spans)
        hazards.async_read(span, "wgmma.mma_async")
        mma = _Wgmma({i: out[j].view(np.uint32) for j, i in enumerate(d_indices)},
                     hazards.lock(span))
        state.wgmma_open.append(mma)
        for i in d_indices:
            state.pending[i] = id(mma)
    return mma_async


def _wgmma_inputs_checked(w, hazards, accumulators: list[int], a_registers: list[int]):
    """A wgmma reads its accumulator (when it accumulates) and register A: a wgmma.fence
    must have run since another instruction last wrote them; A must not be in flight."""
    state = hazards.warp(w.wid)
    if not state.fenced:
        raise AsyncHazard("wgmma.mma_async without a wgmma.fence before it in this warp")
    regs = w.cta.launch.kernel.reg_index
    names = {i: n for n, i in regs.items()}
    for i in accumulators + a_registers:
        if i in state.unfenced:
            raise AsyncHazard(f"wgmma.mma_async reads {names[i]}, written after the last "
                              "wgmma.fence (missing wgmma.fence)")
    for i in a_registers:
        if i in state.pending:
            raise AsyncHazard(f"wgmma.mma_async reads A from {names[i]}, which a wgmma in "
                              "flight writes (missing wgmma.wait_group)")
    return state


def _pending_or_register(w, state, i: int) -> np.ndarray:
    """Register ``i``'s bits as the next wgmma sees them: an in-flight wgmma's result."""
    owner = state.pending.get(i)
    if owner is None:
        return w.R[i].view(np.uint32)
    for mma in [*state.wgmma_open, *(m for g in state.wgmma_groups for m in g)]:
        if id(mma) == owner:
            return mma.registers[i]
    return w.R[i].view(np.uint32)


def _wgmma_sync(c: C, sub: str):
    """wgmma.fence / commit_group / wait_group N: only the checking (async_check) sees
    them; without it the emulated wgmma completed when issued."""
    keep = group_count(c) if sub == "wait_group" else 0

    def sync(w, m):
        hazards = w.cta.hazards
        if hazards is None:
            return
        state = hazards.warp(w.wid)
        if sub == "fence":
            state.fenced = True
            state.unfenced.clear()
        elif sub == "commit_group":
            state.wgmma_groups.append(state.wgmma_open)
            state.wgmma_open = []
        else:
            wgmma_retire(w, state, keep)
    return sync


# ---------------------------------------------------------------- tcgen05 (sm_100a)

def _tmem(w) -> np.ndarray:
    cta = w.cta
    if cta.tmem is None:
        cta.tmem = np.zeros((128, 512), np.uint32)
    return cta.tmem


@op("tcgen05")
def _tcgen05(c: C):
    sub = c.mods[0] if c.mods else ""
    if c.has("cta_group::2"):
        raise c.unsupported("cta_group::2")
    if sub.startswith(("fence", "wait")) or sub in ("relinquish_alloc_permit", "dealloc"):
        return lambda w, m: None
    if sub == "alloc":
        dst = c.mem_addr(c.ops[0], c.space())[1]
        gn = c.src(c.ops[1], "u32")

        def alloc(w, m):
            lane = _first_active(m)
            ncols = int(gn(w)[lane])
            _tmem(w)
            col = w.cta.tmem_next
            if col + ncols > 512:
                raise MemoryFault(f"tcgen05.alloc of {ncols} columns: tensor memory is full")
            w.cta.tmem_next = col + ncols
            a = np.array([int(dst(w)[lane])], np.uint64)
            w.cta.shared.store(a, 4, np.array([col], np.uint32))
        return alloc
    if sub in ("ld", "st"):
        return _tcgen05_ldst(c, sub == "ld")
    if sub == "mma":
        return _tcgen05_mma(c)
    if sub == "commit":
        if not c.has("mbarrier::arrive::one") or c.has("multicast::cluster"):
            raise c.unsupported()
        af = _mbar_addr(c, c.ops[0])

        def commit(w, m):       # the emulated mma already completed: arrive now
            for a in af(w)[m]:
                phase = _mbar_arrive(w, int(a))
                if w.cta.hazards is not None:   # its results count from this phase on
                    w.cta.hazards.tcgen05_commit(w.wid, int(a), phase)
        return commit
    raise c.unsupported()


def _tcgen05_ldst(c: C, is_ld: bool):
    shape = next((x for x in c.mods if x in ("32x32b", "16x32bx2")), None)
    rep = next((int(x[1:]) for x in c.mods if x[:1] == "x" and x[1:].isdigit()), 1)
    if shape is None or c.has("pack::16b", "unpack::16b"):
        raise c.unsupported("only the 32x32b and 16x32bx2 shapes")
    regs = _items(c.ops[0] if is_ld else c.ops[-1])  # st: [taddr], (split,) {regs}
    taddr_op = c.ops[1] if is_ld else c.ops[0]
    if not isinstance(taddr_op, Addr):
        raise c.error("expected a tensor-memory address [taddr]")
    gaddr = c.src(Reg(taddr_op.base), "b32")
    off = taddr_op.offset
    split = 0
    if shape == "16x32bx2":
        rest = c.ops[2:] if is_ld else c.ops[1:-1]
        split_op = (c.ops[2] if is_ld else c.ops[1]) if rest else None
        if not isinstance(split_op, Imm):
            raise c.error("16x32bx2 needs an immediate half-split offset")
        split = split_op.value
    if len(regs) != rep:
        raise c.error(f"expected {rep} registers")
    lane_in = LANES % 16 if shape == "16x32bx2" else LANES
    col_in = np.where(LANES >= 16, split, 0) if shape == "16x32bx2" else np.zeros(32, np.int64)
    sets = [c.dst(r, "b32") for r in regs] if is_ld else None
    gets = None if is_ld else [c.src(r, "b32") for r in regs]

    def ldst(w, m):
        tm = _tmem(w)
        t = int(gaddr(w)[_first_active(m)]) + off
        lanes = (t >> 16) + lane_in
        cols = (t & 0xFFFF) + col_in
        if lanes.max() >= 128 or cols.max() + rep > 512:
            raise MemoryFault(f"tensor-memory access out of range at 0x{t:x}")
        if w.cta.hazards is not None:
            w.cta.hazards.tmem_access(np.unique(lanes[m]), np.arange(cols.min(),
                                                                     cols.max() + rep),
                                      "tcgen05.ld" if is_ld else "tcgen05.st")
        for j in range(rep):
            if is_ld:
                sets[j](w, m, tm[lanes, cols + j])
            else:
                v = gets[j](w)
                tm[lanes[m], (cols + j)[m]] = v[m]
    return ldst


# tcgen05.mma's kinds: the PTX type of each A/B format of the instruction descriptor
# (PTX ISA, "Instruction descriptor format for .kind::tf32, .kind::f16, .kind::f8f6f4";
# kind::mxf8f6f4 is block-scaled, its descriptor laid out otherwise: _block_scales)
_TCGEN05_FORMATS = {"kind::f16": {0: "f16", 1: "bf16"}, "kind::tf32": {2: "tf32"},
                    "kind::f8f6f4": {0: "e4m3", 1: "e5m2"},
                    "kind::mxf8f6f4": {0: "e4m3", 1: "e5m2"},
                    "kind::i8": {0: "u8", 1: "s8"}}
# the D format each dense kind accumulates in (bits 4-5): f32 (1), kind::i8's s32 (2)
_TCGEN05_D_FORMAT = {"kind::i8": 2}
_TMEM_QUARTERS = 4


def _scale_factors(tm: np.ndarray, address: int, count: int, byte: int,
                   what: str) -> np.ndarray:
    """The UE8M0 scales of ``count`` rows of A (or columns of B) for scale_vec::1X (PTX
    ISA, "Block Scaling", scale factor A/B layouts): row r's is byte ``byte`` (SFA_ID /
    SFB_ID) of lane r % 32, column r / 32 from ``address``, duplicated in all four lane
    quarters (a quarter that differs is a fault: the ISA asks for the duplicates)."""
    lane0, column0 = address >> 16, address & 0xFFFF
    rows = np.arange(count)
    columns = column0 + rows // 32
    if lane0 or columns.max() >= tm.shape[1]:
        raise MemoryFault(f"{what} scale factors at tensor-memory address 0x{address:x}: "
                          "lane 0 and columns in range expected")
    copies = [(tm[32 * q + rows % 32, columns] >> (8 * byte)) & 0xFF
              for q in range(_TMEM_QUARTERS)]
    if any(not np.array_equal(c, copies[0]) for c in copies[1:]):
        raise MemoryFault(f"{what} scale factors at tensor-memory address 0x{address:x} "
                          "are not duplicated in all four lane quarters")
    exponents = copies[0].astype(np.int64)
    return np.where(exponents == 0xFF, np.nan, np.ldexp(1.0, exponents - 127))


def _block_scaled_fields(idesc: int) -> tuple[int, int, int, int]:
    """(M, N, SFA_ID, SFB_ID) of a kind::mxf8f6f4 descriptor (CUTLASS's
    InstrDescriptorBlockScaled): SFB_ID bits 4-5, N 17-22, UE8M0 bit 23, M 24-28, SFA_ID
    29-30."""
    if not (idesc >> 23) & 1 or idesc & 0b1111:
        raise MemoryFault(f"tcgen05.mma.kind::mxf8f6f4 instruction descriptor 0x{idesc:x}: "
                          "only dense MMA with UE8M0 scales is emulated")
    return (((idesc >> 24) & 0x1F) << 4, ((idesc >> 17) & 0x3F) << 3, (idesc >> 29) & 3,
            (idesc >> 4) & 3)


def _d_lanes(m: int) -> np.ndarray:
    """The TMEM lane of each row of D (cta_group::1, PTX ISA "Data path layout
    organization"): M = 128, row i in lane i; M = 64 (layout F), the first 16 lanes of
    each warp's quarter, row i in lane 32 (i / 16) + i % 16."""
    rows = np.arange(m)
    return rows if m == 128 else 32 * (rows // 16) + rows % 16


def _tcgen05_format(kind: str, idesc: int, shift: int) -> str:
    fmt = (idesc >> shift) & 7
    if fmt not in _TCGEN05_FORMATS[kind]:
        raise MemoryFault(f"tcgen05.mma.{kind} instruction descriptor 0x{idesc:x}: operand "
                          f"format {fmt} is not emulated")
    return _TCGEN05_FORMATS[kind][fmt]


def _tcgen05_mma(c: C):
    kind = next((x for x in c.mods if x.startswith("kind::")), None)
    scaled = kind == "kind::mxf8f6f4"
    if kind not in _TCGEN05_FORMATS or c.has("ws", "sp") or scaled != c.has("block_scale") \
            or (scaled and c.has("scale_vec::2X", "scale_vec::4X", "block16")):
        raise c.unsupported("only kind::f16, kind::tf32, kind::f8f6f4, kind::i8 and "
                            "kind::mxf8f6f4.block_scale.scale_vec::1X, dense")
    d_op = c.ops[0]
    if not isinstance(d_op, Addr) or isinstance(c.ops[1], Addr):
        raise c.unsupported("A from tensor memory")
    gd = c.src(Reg(d_op.base), "b32")
    d_off = d_op.offset                 # [taddr+imm]: columns further along
    ga, gb = c.src(c.ops[1], "b64"), c.src(c.ops[2], "b64")
    gi = c.src(c.ops[3], "b32")
    rest = c.ops[4:]
    scale_gets = []
    if scaled:
        if len(rest) < 3 or not all(isinstance(x, Addr) for x in rest[:2]):
            raise c.error("block-scaled tcgen05.mma takes [scale_A], [scale_B] tensor-memory "
                          "addresses after the instruction descriptor")
        scale_gets = [(c.src(Reg(x.base), "b32"), x.offset) for x in rest[:2]]
        rest = rest[2:]
    mask_gets = [c.src(x, "b32") for x in _items(rest[0])] if rest and isinstance(rest[0], Vec) \
        else []
    ge = c.src(rest[-1], "pred")

    def mma(w, m):
        lane = _first_active(m)
        idesc = int(gi(w)[lane])
        if any(int(g(w)[lane]) for g in mask_gets):
            raise MemoryFault("tcgen05.mma with disabled output lanes is not emulated")
        if scaled:
            M, N, a_id, b_id = _block_scaled_fields(idesc)
        elif (idesc >> 4) & 3 != _TCGEN05_D_FORMAT.get(kind, 1) or idesc & 0b1111:
            raise MemoryFault(f"tcgen05.mma instruction descriptor 0x{idesc:x}: only dense "
                              "f32 accumulation (s32 for kind::i8, no saturation) is "
                              "emulated")
        else:
            M, N = ((idesc >> 24) & 0x1F) << 4, ((idesc >> 17) & 0x3F) << 3
        if M not in (64, 128):
            raise MemoryFault(f"tcgen05.mma with M={M}: only M=64 and M=128 are emulated")
        a_type, b_type = _tcgen05_format(kind, idesc, 7), _tcgen05_format(kind, idesc, 10)
        esize = type_size(a_type)   # both: one kind, one size
        sh = w.cta.shared
        spans: list = []
        A = load_operand(sh, int(ga(w)[lane]), bool((idesc >> 15) & 1), np.arange(M),
                         DTYPES[a_type], True, spans, esize)
        B = load_operand(sh, int(gb(w)[lane]), bool((idesc >> 16) & 1), np.arange(N),
                         DTYPES[b_type], True, spans, esize)
        if (idesc >> 13) & 1:
            A = -A
        if (idesc >> 14) & 1:
            B = -B
        tm = _tmem(w)
        if scaled:  # (A scale_A) (B scale_B): each row of A, column of B times its scale
            (g_sa, off_a), (g_sb, off_b) = scale_gets
            A = A * _scale_factors(tm, int(g_sa(w)[lane]) + off_a, M, a_id, "A")[:, None]
            B = B * _scale_factors(tm, int(g_sb(w)[lane]) + off_b, N, b_id, "B")[:, None]
        D = A @ B.T
        t = int(gd(w)[lane]) + d_off
        l0, c0 = t >> 16, t & 0xFFFF
        lanes = l0 + _d_lanes(M)
        where = np.ix_(lanes, np.arange(c0, c0 + N))
        cells = tm[where]
        if kind == "kind::i8":  # exact (|A B| < 2^53 for one K step), wrapping to s32
            total = D.astype(np.int64)
            if bool(ge(w)[lane]):
                total = total + cells.view(np.int32).astype(np.int64)
            tm[where] = total.astype(np.uint32)
        else:
            if bool(ge(w)[lane]):
                D = D + cells.view(np.float32).astype(F64)
            tm[where] = D.astype(np.float32).view(np.uint32)
        if w.cta.hazards is not None:   # complete when committed and waited for
            w.cta.hazards.tcgen05_issue(w.wid, np.concatenate(spans), lanes,
                                        slice(c0, c0 + N))
    return mma
