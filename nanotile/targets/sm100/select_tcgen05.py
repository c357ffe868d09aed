"""sm_100a's own instruction selection for the tcgen05 ops lower-tcgen05 writes, as PTX
(the forms ptxas -arch=sm_100a accepts: ../shared/reference/ptx-examples/
06_tcgen05_sm100a.ptx, and tileiras' sm_100 matmul).

    tmem_alloc          warp 0: tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32
                        [slot], C; tcgen05.relinquish_alloc_permit; thread 0 initialises
                        the mbarrier; fence::before_thread_sync, bar.sync 0,
                        fence::after_thread_sync; every thread: ld.shared.b32 base, [slot]
    tmem_dealloc        warp 0: tcgen05.dealloc.cta_group::1.sync.aligned.b32 base, C
    tmem_store          tcgen05.st.sync.aligned.32x32b.xN.b32 [row address], {regs};
                        tcgen05.wait::st.sync.aligned
    tmem_load           tcgen05.ld.sync.aligned.32x32b.xN.b32 {regs}, [row address];
                        tcgen05.wait::ld.sync.aligned (with ``split``, an M = 64 tile:
                        the .16x32bx2 forms, the split an immediate after the address)
    tcgen05_descriptor  the 64-bit shared-memory matrix descriptor (below)
    tcgen05_mma         thread 0: tcgen05.mma.cta_group::1.kind::K [d], da, db, idesc, 1
                        (K: the op's kind, f16, tf32, f8f6f4 or i8); block-scaled (kind
                        mxf8f6f4, scale columns given): tcgen05.mma.cta_group::1.kind::
                        mxf8f6f4.block_scale.scale_vec::1X [d], da, db, idesc, [sa], [sb], 1
    tcgen05_commit_wait thread 0: tcgen05.commit.cta_group::1.mbarrier::arrive::one.
                        shared::cluster.b64 [bar]; every thread arrives and waits on bar,
                        then tcgen05.fence::after_thread_sync
    tcgen05_barrier     tcgen05.fence::before_thread_sync; bar.sync 0;
                        tcgen05.fence::after_thread_sync
    fence_proxy_async   fence.proxy.async.shared::cta

It fills the ``op`` hook of instruction selection (target.SELECT_HOOKS).

A TMEM address is (lane << 16) | column (PTX ISA, "Tensor Memory Addressing"); warp w
reads and writes lanes 32 (w % 4) .. + 31 (its rows of D), so its row address adds
(32 (w % 4)) << 16, and a column offset is added to the low half. tcgen05.ld/st take at
most 128 registers (.x128); wider rows take several.

The descriptor (PTX ISA, tcgen05 "Shared memory descriptor"): bits 0-13 the matrix's
shared address >> 4, 16-29 the leading-dimension byte offset >> 4, 32-45 the stride byte
offset >> 4, 46-48 the fixed value 0b001, 49-51 the base offset (0: the layouts are
aligned to their swizzle's period), 61-63 the swizzle (0 none, 2: 128 bytes, 4: 64, 6:
32). tileiras' matmul_f16 on sm_100 (64-byte rows): 0x8000402000010000 | address.

The mbarrier (8 bytes after the kernel's shared buffer) expects every thread's arrival
plus the commit's: its phase completes when every thread has arrived and the MMAs
committed before it are done; each thread waits on the state its own arrival returned
(as select_tma's copies do), so no phase bit is tracked across loops.
"""

from __future__ import annotations

from ...ir.core import Operation
from ..ptx.select_instructions import Selection, Unsupported
from ..ptx.select_memory import descriptor_start, matrix_descriptor, smem

SWIZZLE_MODE = {128: 2, 64: 4, 32: 6}
DESCRIPTOR_VERSION = 1 << 46
MAX_REPEAT = 128  # tcgen05.ld/st .32x32b: .x1 .. .x128


def descriptor_bits(op: Operation) -> int:
    """The descriptor's bits other than the start address."""
    width = op.attributes["swizzle"]
    if width not in SWIZZLE_MODE:
        raise Unsupported(f"a tcgen05 swizzle of {width} bytes")
    return ((op.attributes["leading"] >> 4) << 16) | ((op.attributes["stride"] >> 4) << 32) \
        | DESCRIPTOR_VERSION | (SWIZZLE_MODE[width] << 61)


def descriptor(s: Selection, op: Operation) -> None:
    s.values[op.results[0]] = [matrix_descriptor(s, descriptor_start(s, op),
                                                 descriptor_bits(op))]


def _slot(s: Selection, name: str) -> str:
    """The shared address of an 8-byte slot after the kernel's buffer (one per name)."""
    key = ("tcgen05 slot", name)
    if key not in s.cache:
        fn = s.fn
        offset = -(-fn.shared_bytes // 8) * 8
        fn.need_shared(offset + 8)
        base = smem(s)
        with fn.at_entry():
            address = fn.reg("b32")
            fn.instr("add.s32", address, base, str(offset))
        s.cache[key] = address
    return s.cache[key]


def _thread0(s: Selection) -> str:
    """A predicate true in every thread but thread 0 (computed at the entry)."""
    if "tcgen05 not thread 0" not in s.cache:
        with s.fn.at_entry():
            p = s.fn.reg("pred")
            s.fn.instr("setp.ne.u32", p, s.tid, "0")
        s.cache["tcgen05 not thread 0"] = p
    return s.cache["tcgen05 not thread 0"]


def _warp0(s: Selection) -> str:
    """A predicate true in every warp but warp 0 (computed at the entry)."""
    if "tcgen05 not warp 0" not in s.cache:
        with s.fn.at_entry():
            p = s.fn.reg("pred")
            s.fn.instr("setp.gt.u32", p, s.tid, "31")
        s.cache["tcgen05 not warp 0"] = p
    return s.cache["tcgen05 not warp 0"]


def _lane_offset(s: Selection) -> str:
    """This warp's first TMEM lane, (32 (warp % 4)) << 16 = ((tid >> 5) & 3) << 21."""
    if "tcgen05 lane offset" not in s.cache:
        with s.fn.at_entry():
            warp = s.fn.reg("b32")
            s.fn.instr("shr.u32", warp, s.tid, "5")
            quarter = s.fn.reg("b32")
            s.fn.instr("and.b32", quarter, warp, "3")
            out = s.fn.reg("b32")
            s.fn.instr("shl.b32", out, quarter, "21")
        s.cache["tcgen05 lane offset"] = out
    return s.cache["tcgen05 lane offset"]


def _fences_and_barrier(s: Selection) -> None:
    s.fn.instr("tcgen05.fence::before_thread_sync")
    s.fn.instr("bar.sync", "0")
    s.fn.instr("tcgen05.fence::after_thread_sync")


def alloc(s: Selection, op: Operation) -> None:
    fn = s.fn
    columns = str(op.attributes["columns"])
    slot = _slot(s, "tmem address")
    barrier = _slot(s, "mbarrier")
    skip = fn.label("tmem_alloc_done")
    fn.instr("bra", skip, pred=_warp0(s))
    fn.instr("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32", f"[{slot}]", columns)
    fn.instr("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned")
    fn.place(skip)
    fn.instr("mbarrier.init.shared::cta.b64", f"[{barrier}]", str(s.threads + 1),
             pred="!" + _thread0(s))
    _fences_and_barrier(s)
    base = fn.reg("b32")
    fn.instr("ld.shared.b32", base, f"[{slot}]")
    s.values[op.results[0]] = [base]


def dealloc(s: Selection, op: Operation) -> None:
    fn = s.fn
    skip = fn.label("tmem_dealloc_done")
    fn.instr("bra", skip, pred=_warp0(s))
    fn.instr("tcgen05.dealloc.cta_group::1.sync.aligned.b32", s.get(op.operands[0])[0],
             str(op.attributes["columns"]))
    fn.place(skip)


def _row_address(s: Selection, base: str, column: int) -> str:
    fn = s.fn
    out = fn.reg("b32")
    fn.instr("add.s32", out, base, _lane_offset(s))
    if column:
        moved = fn.reg("b32")
        fn.instr("add.s32", moved, out, str(column))
        out = moved
    return out


def store(s: Selection, op: Operation) -> None:
    base = s.get(op.operands[0])[0]
    regs = s.get(op.operands[1])
    n = s.count(op.operands[1].type)
    if len(regs) == 1 and n > 1:  # a splat: one register for all
        regs = regs * n
    column, split = op.attributes["column"], op.attributes.get("split")
    for start in range(0, n, MAX_REPEAT):
        part = regs[start:start + MAX_REPEAT]
        address = _row_address(s, base, column + start)
        values = "{" + ", ".join(part) + "}"
        if split is None:
            s.fn.instr(f"tcgen05.st.sync.aligned.32x32b.x{len(part)}.b32", f"[{address}]",
                       values)
        else:  # an M = 64 tile: threads t and t + 16 the halves of lane t's row
            s.fn.instr(f"tcgen05.st.sync.aligned.16x32bx2.x{len(part)}.b32", f"[{address}]",
                       str(split), values)
    s.fn.instr("tcgen05.wait::st.sync.aligned")


def load(s: Selection, op: Operation) -> None:
    base = s.get(op.operands[0])[0]
    out = s.fresh(op.results[0].type)
    column, split = op.attributes["column"], op.attributes.get("split")
    for start in range(0, len(out), MAX_REPEAT):
        part = out[start:start + MAX_REPEAT]
        address = _row_address(s, base, column + start)
        shape = "32x32b" if split is None else "16x32bx2"
        s.fn.instr(f"tcgen05.ld.sync.aligned.{shape}.x{len(part)}.b32",
                   "{" + ", ".join(part) + "}", f"[{address}]",
                   *([] if split is None else [str(split)]))
    s.fn.instr("tcgen05.wait::ld.sync.aligned")
    s.values[op.results[0]] = out


def mma(s: Selection, op: Operation) -> None:
    """Thread 0 issues one MMA (a single-thread instruction), D = A B + D."""
    fn = s.fn
    base, a, b = (s.get(v)[0] for v in op.operands)
    d = base
    if op.attributes["column"]:
        d = fn.reg("b32")
        fn.instr("add.s32", d, base, str(op.attributes["column"]))
    skip = fn.label("tcgen05_mma_done")
    fn.instr("bra", skip, pred=_thread0(s))
    idesc = fn.reg("b32")
    fn.instr("mov.b32", idesc, str(op.attributes["idesc"]))
    accumulate = fn.reg("pred")
    fn.instr("setp.eq.u32", accumulate, idesc, idesc)
    opcode = f"tcgen05.mma.cta_group::1.kind::{op.attributes['kind']}"
    if op.attributes.get("scale_a") is not None:
        scale_a = _column(s, base, op.attributes["scale_a"])
        scale_b = _column(s, base, op.attributes["scale_b"])
        fn.instr(f"{opcode}.block_scale.scale_vec::1X", f"[{d}]", a, b, idesc, f"[{scale_a}]",
                 f"[{scale_b}]", accumulate)
    else:
        fn.instr(opcode, f"[{d}]", a, b, idesc, accumulate)
    fn.place(skip)


def _column(s: Selection, base: str, column: int) -> str:
    """The TMEM address of ``column`` (lane 0) of the allocation at ``base``."""
    out = s.fn.reg("b32")
    s.fn.instr("add.s32", out, base, str(column))
    return out


def commit_wait(s: Selection, op: Operation) -> None:
    fn = s.fn
    barrier = _slot(s, "mbarrier")
    skip = fn.label("tcgen05_commit_done")
    fn.instr("bra", skip, pred=_thread0(s))
    fn.instr("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64",
             f"[{barrier}]")
    fn.place(skip)
    state = fn.reg("b64")
    fn.instr("mbarrier.arrive.shared::cta.b64", state, f"[{barrier}]")
    wait = fn.label("tcgen05_wait")
    done = fn.reg("pred")
    fn.place(wait)
    fn.instr("mbarrier.try_wait.shared::cta.b64", done, f"[{barrier}]", state)
    fn.instr("bra", wait, pred="!" + done)
    fn.instr("tcgen05.fence::after_thread_sync")


_RULES = {
    "tmem_alloc": alloc,
    "tmem_dealloc": dealloc,
    "tmem_store": store,
    "tmem_load": load,
    "tcgen05_descriptor": descriptor,
    "tcgen05_mma": mma,
    "tcgen05_commit_wait": commit_wait,
    "tcgen05_barrier": lambda s, op: _fences_and_barrier(s),
    "fence_proxy_async": lambda s, op: s.fn.instr("fence.proxy.async.shared::cta"),
}


def select_op(s: Selection, op: Operation) -> bool:
    """The ``op`` hook: True when ``op`` is one of the tcgen05 ops (selected), else False."""
    rule = _RULES.get(op.name)
    if rule is None:
        return False
    rule(s, op)
    return True
