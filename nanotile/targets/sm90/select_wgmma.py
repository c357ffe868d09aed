"""sm_90a's own instruction selection: the wgmma ops lower-wgmma writes, as PTX.

    wgmma_descriptor   the 64-bit shared-memory matrix descriptor (below)
    wgmma_mma_async    wgmma.mma_async.sync.aligned.m64nNk16.f32.T.T {d}, da, db, p, 1, 1, 0, tb
                       (f16/bf16), or m64nNk8 (tf32) / m64nNk32 (e4m3/e5m2) without the
                       transpose immediates {d}, da, db, p, 1, 1
    wgmma_fence        wgmma.fence.sync.aligned
    wgmma_commit       wgmma.commit_group.sync.aligned
    wgmma_wait         wgmma.wait_group.sync.aligned N
    fence_proxy_async  fence.proxy.async.shared::cta

It fills the ``op`` hook of instruction selection (target.SELECT_HOOKS); sm_100 has none
of these ops (wgmma is sm_90a's only).

The descriptor (PTX ISA, "Matrix Descriptor Format", sm_90a): bits 0-13 the matrix's
shared address >> 4, bits 16-29 the leading-dimension byte offset >> 4, bits 32-45 the
stride byte offset >> 4, bits 62-63 the swizzle (1: 128 bytes, 2: 64, 3: 32); lower-wgmma
read the offsets off the operand's layout. tb (imm-trans-b) is 1 for a B whose rows run
along N.

The accumulator: wgmma reads and writes its registers in place. wgmma_fence copies the
accumulator to fresh registers (it may be a splat, or live on) before the fence, and the
wgmma after it accumulate into those (lower-wgmma chains them: each wgmma's accumulator
is the fence's copy or the previous wgmma's result); scale-d is a true predicate
(D = A B + D).
"""

from __future__ import annotations

from ...ir.core import Operation
from ...ir.layouts import log2
from ..ptx.select_instructions import Selection, Unsupported
from ..ptx.select_memory import descriptor_start, matrix_descriptor

SWIZZLE_MODE = {128: 1, 64: 2, 32: 3}
WARPGROUP_THREADS = 128


def descriptor_bits(op: Operation) -> int:
    """The descriptor's bits other than the start address."""
    width = op.attributes["swizzle"]
    if width not in SWIZZLE_MODE:
        raise Unsupported(f"a wgmma swizzle of {width} bytes")
    return ((op.attributes["leading"] >> 4) << 16) | ((op.attributes["stride"] >> 4) << 32) \
        | (SWIZZLE_MODE[width] << 62)


def descriptor(s: Selection, op: Operation) -> None:
    fn = s.fn
    addr = descriptor_start(s, op)
    group = _warpgroup_offset(s, tuple(op.attributes["grid"]), tuple(op.attributes["steps"]))
    if group is not None:
        moved = fn.reg("b32")
        fn.instr("add.s32", moved, addr, group)
        addr = moved
    s.values[op.results[0]] = [matrix_descriptor(s, addr, descriptor_bits(op))]


def _warpgroup_offset(s: Selection, grid: tuple[int, int], steps: tuple[int, int]):
    """A register with the bytes this thread's warpgroup adds (None: 0 for all): the
    group g = %tid.x / 128 is (g / gn, g % gn) in the grid."""
    gn = grid[1]
    key = ("wgmma group offset", grid, steps)
    if steps == (0, 0):
        return None
    if key not in s.cache:
        s.cache[key] = None
        fn = s.fn
        with fn.at_entry():
            group = fn.reg("b32")
            fn.instr("shr.u32", group, s.tid, str(log2(WARPGROUP_THREADS)))
            for index, step in ((_row_index(s, group, gn), steps[0]),
                                (_column_index(s, group, gn), steps[1])):
                if step == 0:
                    continue
                part = fn.reg("b32")
                fn.instr("mul.lo.s32", part, index, str(step))
                if s.cache[key] is not None:
                    total = fn.reg("b32")
                    fn.instr("add.s32", total, s.cache[key], part)
                    part = total
                s.cache[key] = part
    return s.cache[key]


def _row_index(s: Selection, group: str, gn: int) -> str:
    out = s.fn.reg("b32")
    s.fn.instr("shr.u32", out, group, str(log2(gn)))
    return out


def _column_index(s: Selection, group: str, gn: int) -> str:
    out = s.fn.reg("b32")
    s.fn.instr("and.b32", out, group, str(gn - 1))
    return out


def fence(s: Selection, op: Operation) -> None:
    """Copy the accumulator to registers of its own, then wgmma.fence."""
    fn = s.fn
    acc = s.get(op.operands[0])
    out = s.fresh(op.results[0].type)
    for dst, src in zip(out, acc * len(out) if len(acc) == 1 else acc):
        fn.instr("mov.f32", dst, src)
    fn.instr("wgmma.fence.sync.aligned")
    s.values[op.results[0]] = out


def mma_async(s: Selection, op: Operation) -> None:
    """One wgmma, accumulating in place into its accumulator operand's registers (a
    fence's copy or an earlier wgmma's: nothing else reads them)."""
    acc, a, b = (s.get(v) for v in op.operands)
    if len(set(acc)) != len(acc):
        raise Unsupported("a wgmma accumulator must be registers of its own (wgmma_fence)")
    instruction = op.attributes["instruction"]
    # imm-trans-a and imm-trans-b: f16/bf16's only (tf32 and f8 read K-major operands)
    transposes = ["0", "1" if op.attributes.get("trans_b") else "0"] \
        if instruction.endswith(("f16", "bf16")) else []
    s.fn.instr(instruction, "{" + ", ".join(acc) + "}", a[0], b[0], _true(s), "1", "1",
               *transposes)
    s.values[op.results[0]] = acc


def _true(s: Selection) -> str:
    if "true" not in s.cache:
        with s.fn.at_entry():
            p = s.fn.reg("pred")
            s.fn.instr("setp.eq.u32", p, s.tid, s.tid)
        s.cache["true"] = p
    return s.cache["true"]


_PLAIN = {
    "wgmma_commit": "wgmma.commit_group.sync.aligned",
    "fence_proxy_async": "fence.proxy.async.shared::cta",
}


def select_op(s: Selection, op: Operation) -> bool:
    """The ``op`` hook: True when ``op`` is one of the wgmma ops (selected), else False."""
    if op.name in _PLAIN:
        s.fn.instr(_PLAIN[op.name])
    elif op.name == "wgmma_wait":
        s.fn.instr("wgmma.wait_group.sync.aligned", str(op.attributes["pending"]))
    elif op.name == "wgmma_fence":
        fence(s, op)
    elif op.name == "wgmma_descriptor":
        descriptor(s, op)
    elif op.name == "wgmma_mma_async":
        mma_async(s, op)
    else:
        return False
    return True
