"""Instruction semantics: each PTX opcode compiles to a closure ``f(warp, mask)``.

The closure reads its source registers as (32,) NumPy arrays, computes the result for all
lanes and writes it back under the active mask; it returns None, or a tuple telling the
scheduler about control flow (branch, exit, barrier, yield). Opcodes are looked up by
their first dotted component in ``OPS``; an opcode without a handler, or with a modifier
a handler does not know, is a compile-time ``PtxError`` naming the instruction and line.

The handlers live in one module per instruction family, each with its own ``HANDLERS``
table: ``ops_control`` (branches, barriers, calls), ``ops_convert`` (mov, cvta, cvt),
``ops_compare`` (setp, selp, slct), ``ops_memory`` (ld, st, atom, red), ``ops_int``
(integer, bit and predicate arithmetic; its ``_arith`` hands float types to
``ops_float``), ``ops_warp`` (shfl, vote, redux, elect, match), ``ops_async`` (mbarrier,
cp.async), and ``ops_mma`` (ldmatrix, mma, wgmma, tcgen05). This module merges those
tables into ``OPS`` (an opcode claimed by two families is an error at import) and holds
``compile_instruction`` and ``BATCHABLE``; ``ops_common`` holds ``C``, the compile-time
view of an instruction that every handler receives.
"""

from __future__ import annotations

from nanotile.ptxemu import (
    ops_async,
    ops_compare,
    ops_control,
    ops_convert,
    ops_int,
    ops_memory,
    ops_mma,
    ops_warp,
)
from nanotile.ptxemu.machine import CompiledKernel
from nanotile.ptxemu.ops_common import C
from nanotile.ptxemu.ptx_parser import Instruction, Reg

FAMILIES = (
    ops_control,
    ops_convert,
    ops_compare,
    ops_memory,
    ops_int,
    ops_warp,
    ops_async,
    ops_mma,
)


def _merge(families) -> dict:
    """The families' HANDLERS tables as one table; an opcode may belong to one family only."""
    table: dict = {}
    for family in families:
        claimed = table.keys() & family.HANDLERS.keys()
        if claimed:
            raise RuntimeError(f"{family.__name__} registers {sorted(claimed)} again")
        table.update(family.HANDLERS)
    return table


OPS: dict = _merge(FAMILIES)

# Opcodes whose semantics do not depend on 32-lane warps, CTAs or shared memory: a kernel
# made only of these can run many CTAs side by side as one wide warp (Launch's batched mode).
BATCHABLE = {
    "mov", "cvta", "ld", "ldu", "st", "atom", "red", "add", "sub", "mul", "mad", "fma", "div",
    "rem", "min", "max", "abs", "neg", "and", "or", "xor", "not", "cnot", "shl", "shr", "popc",
    "clz", "brev", "bfe", "bfi", "prmt", "copysign", "sqrt", "rsqrt", "rcp", "ex2", "lg2", "sin",
    "cos", "tanh", "sad", "setp", "selp", "slct", "cvt", "bra", "ret", "exit", "trap", "membar",
    "fence", "prefetch", "prefetchu", "pmevent", "griddepcontrol", "discard", "applypriority",
    "createpolicy", "lop3", "shf", "bfind", "mul24", "mad24", "testp", "isspacep", "dp4a",
    "dp2a",
}



def batchable(ins: Instruction) -> bool:
    """Whether ``ins`` may run in a batch (see BATCHABLE). Besides those opcodes, a CTA
    barrier without a thread count (``bar.sync 0``, ``barrier.sync.aligned 0``): a kernel
    with one runs a batch of one CTA, all its threads in one wide warp, so the barrier
    waits for the CTA's live threads as with 32-lane warps; CTAs still run one after
    another (those that race on global memory see what they see CTA by CTA), and a kernel
    with shared memory or warp-level instructions is never batched. A barrier with a
    count, or an arrive, waits for some of the threads: not batched."""
    parts = ins.opcode.split(".")
    if parts[0] in BATCHABLE:
        return True
    return (parts[0] in ("bar", "barrier") and len(ins.operands) <= 1
            and not {"arrive", "red"} & set(parts[1:]))


# ---------------------------------------------------------------- entry point

def compile_instruction(k: CompiledKernel, ins: Instruction, pc: int):
    c = C(k, ins, pc)
    handler = OPS.get(c.base)
    if handler is None:
        raise c.unsupported()
    try:
        fn = handler(c)
    except (IndexError, KeyError, ValueError, TypeError, AttributeError):
        # a handler indexing past the operands or meeting an operand of the wrong kind
        raise c.error(f"wrong operands for '{ins.opcode}' ({len(ins.operands)} given)") from None
    if ins.guard is None or c.base == "bra":
        return fn
    gi = c.reg(Reg(ins.guard))
    if k.reg_type[gi] != "pred":
        raise c.error(f"guard '{ins.guard}' is not a predicate")
    # A guard that holds in every active lane runs the instruction under the warp's own
    # mask (the same lanes), so its full-warp fast paths (``m is w.full``) still apply.
    # Masks are compared as bytes: far cheaper than NumPy reductions on 32 lanes.
    none = bytes(k.width)
    if ins.guard_neg:
        def guarded_neg(w, m):
            mm = m & ~w.R[gi]
            held = mm.tobytes()
            if held == none:
                return None
            return fn(w, m) if held == m.tobytes() else fn(w, mm)
        return guarded_neg

    def guarded(w, m):
        mm = m & w.R[gi]
        held = mm.tobytes()
        if held == none:
            return None
        return fn(w, m) if held == m.tobytes() else fn(w, mm)
    return guarded
