"""Control flow and synchronization: bra, ret/exit, trap, bar/barrier, nanosleep, call
(vprintf only), and the instructions the emulator runs as no-ops because in-order
execution makes them invisible (membar, fence, prefetch, prefetchu, setmaxnreg, pmevent,
griddepcontrol, discard, applypriority; createpolicy gives policy 0). They sit together
because they steer execution rather than compute values: most of their closures return
BRA, EXIT, BAR, ARRIVE or YIELD to the scheduler. ``branch_target`` and ``is_terminator``
also serve the machine's reconvergence analysis."""

from __future__ import annotations

import numpy as np

from nanotile.ptxemu.machine import ARRIVE, BAR, BRA, EXIT, YIELD, CompiledKernel, TrapError
from nanotile.ptxemu.ops_common import C, handler_registry
from nanotile.ptxemu.ptx_parser import Instruction, Paren, Reg


HANDLERS: dict = {}
op = handler_registry(HANDLERS)


def branch_target(k: CompiledKernel, ins: Instruction) -> int | None:
    if ins.opcode.split(".")[0] != "bra":
        return None
    op = ins.operands[0] if ins.operands else None
    if not isinstance(op, Reg) or op.name not in k.labels:
        raise k.error(ins, f"unknown branch target '{getattr(op, 'name', op)}'")
    return k.labels[op.name]


def is_terminator(ins: Instruction) -> bool:
    return ins.opcode.split(".")[0] in ("ret", "exit", "trap")


# ---------------------------------------------------------------- control flow

@op("bra")
def _bra(c: C):
    target = branch_target(c.k, c.ins)
    g = c.ins.guard
    if g is None:
        return lambda w, m: (BRA, target, m)
    gi = c.reg(Reg(g))
    if c.ins.guard_neg:
        return lambda w, m: (BRA, target, m & ~w.R[gi])
    return lambda w, m: (BRA, target, m & w.R[gi])


@op("ret", "exit")
def _ret(c: C):
    if c.k.fn.kind != "entry" and c.base == "ret":
        raise c.unsupported("ret from a .func")
    return lambda w, m: (EXIT, m)


@op("trap")
def _trap(c: C):
    ins, k = c.ins, c.k

    def trap(w, m):
        lanes = np.nonzero(m)[0].tolist()
        where = w.cta.launch._where(w)
        raise TrapError(f"trap executed by {where}, lanes {lanes[:32]}"
                        + (" ..." if len(lanes) > 32 else ""), k.module.filename, ins.line, ins.col)
    return trap


@op("bar", "barrier")
def _bar(c: C):
    if c.has("warp"):
        return lambda w, m: None
    arrive = c.has("arrive")
    if c.has("red"):
        raise c.unsupported()
    bid = c.src(c.ops[0], "u32") if c.ops else (lambda w: np.zeros(32, np.uint32))
    cnt = c.src(c.ops[1], "u32") if len(c.ops) > 1 else None
    kind = ARRIVE if arrive else BAR

    def bar(w, m):
        b = int(bid(w)[m][0])
        n = int(cnt(w)[m][0]) if cnt is not None else None
        return (kind, b, n)
    return bar


@op("nanosleep")
def _nanosleep(c: C):
    # a sleeping thread lets the other warps run: spin-waits with nanosleep make progress
    return lambda w, m: (YIELD,)


@op("membar", "fence", "prefetch", "prefetchu", "setmaxnreg", "pmevent",
    "griddepcontrol", "discard", "applypriority", "createpolicy")
def _noop(c: C):
    if c.ins.opcode.startswith("fence.proxy.async"):
        def proxy_fence(w, m):      # generic-proxy writes become visible to the async proxy
            if w.cta.hazards is not None:
                w.cta.hazards.fence_proxy_async(w.wid)
        return proxy_fence
    if c.base == "createpolicy" and c.ops:
        d = c.dst(c.ops[0], "b64")
        zero = np.zeros(c.k.width, np.uint64)
        return lambda w, m: d(w, m, zero)
    return lambda w, m: None


# ---------------------------------------------------------------- calls (vprintf)

@op("call")
def _call(c: C):
    ops = c.ops
    rets = ops[0].items if isinstance(ops[0], Paren) else []
    fn_op = ops[1] if rets else ops[0]
    args = ops[2] if rets and len(ops) > 2 else (ops[1] if not rets and len(ops) > 1 else None)
    name = fn_op.name if isinstance(fn_op, Reg) else None
    if name != "vprintf":
        raise c.unsupported(f"call to '{name}' (only vprintf is emulated)")
    argnames = args.items if isinstance(args, Paren) else []
    syms = [c.k.symbols.get(a.name) for a in argnames]
    if len(syms) != 2 or any(s is None for s in syms):
        raise c.error("vprintf expects two .param arguments")
    ret_sym = c.k.symbols.get(rets[0].name) if rets else None

    def vprintf(w, m):
        from nanotile.ptxemu.printf import format_printf, output
        lanes = np.nonzero(m)[0]
        fmt_ptr = w.local.load(np.full(len(lanes), syms[0].address, np.uint64), 8, lanes)
        buf_ptr = w.local.load(np.full(len(lanes), syms[1].address, np.uint64), 8, lanes)
        for lane, fa, ba in zip(lanes, fmt_ptr, buf_ptr):
            text = format_printf(w, int(fa), int(ba), int(lane))
            output().write(text)
            if ret_sym is not None:
                w.local.store(np.array([ret_sym.address], np.uint64), 4,
                              np.array([len(text)], np.uint32), np.array([lane]))
        output().flush()
    return vprintf
