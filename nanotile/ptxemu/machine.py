"""The executor: compiles a PTX kernel to per-instruction closures and runs a grid of CTAs.

Inside a CTA every warp runs its 32 lanes in lockstep on NumPy arrays (one array per
register, shape (32,)). Branches that split a warp push entries on a reconvergence stack
(pc, mask, reconvergence pc); the reconvergence pc is the first instruction of the
branch's immediate post-dominator, so both sides meet again there. Warps of a CTA run one
after another until each blocks (barrier, a failed ``mbarrier.try_wait``) or exits;
barriers release when enough threads arrived. Register arrays are never changed in
place: an instruction builds a new array, so two registers can share one array safely.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from nanotile.ptxemu.async_check import CheckedShared, SharedHazards, uses_async
from nanotile.ptxemu.errors import MemoryFault, PtxError
from nanotile.ptxemu.fpmath import DTYPES, UINT, type_size
from nanotile.ptxemu.memory import (
    CONST_WINDOW,
    LOCAL_WINDOW,
    PARAM_WINDOW,
    SHARED_WINDOW,
    WINDOW_SIZE,
    GlobalMemory,
    LocalMemory,
    Space,
)
from nanotile.ptxemu.ptx_parser import Function, Instruction, Label, PtxModule, VarDecl

BRA, EXIT, BAR, YIELD, ARRIVE = range(5)
count_nonzero = np.count_nonzero   # an int; a bool array's .sum() or .any() costs 3-6x more
DIMS = ("x", "y", "z")
SPECIAL_REGS = (
    [f"%{n}.{d}" for n in ("tid", "ntid", "ctaid", "nctaid", "clusterid", "nclusterid",
                           "cluster_ctaid", "cluster_nctaid") for d in DIMS]
    + ["%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid", "%gridid", "%cluster_ctarank",
       "%cluster_nctarank", "%is_explicit_cluster", "%lanemask_eq", "%lanemask_le",
       "%lanemask_lt", "%lanemask_ge", "%lanemask_gt", "%clock", "%clock64", "%globaltimer",
       "%dynamic_smem_size", "%total_smem_size"])
LANES = np.arange(32, dtype=np.uint32)
LANEMASKS = {name: (rel.astype(np.uint64) << LANES.astype(np.uint64)).sum(axis=1).astype(np.uint32)
             for name, rel in (("eq", LANES[None, :] == LANES[:, None]),
                               ("le", LANES[None, :] <= LANES[:, None]),
                               ("lt", LANES[None, :] < LANES[:, None]),
                               ("ge", LANES[None, :] >= LANES[:, None]),
                               ("gt", LANES[None, :] > LANES[:, None]))}
FULL = np.ones(32, dtype=bool)      # the mask of a converged full warp (compared by identity)
FULL.flags.writeable = False
_FULLS = {32: FULL}


def full_mask(width: int) -> np.ndarray:
    """The shared read-only all-true mask of ``width`` lanes (compared by identity)."""
    if width not in _FULLS:
        m = np.ones(width, dtype=bool)
        m.flags.writeable = False
        _FULLS[width] = m
    return _FULLS[width]


class TrapError(PtxError):
    """``trap`` was executed."""


# ---------------------------------------------------------------- compiled kernel

@dataclass
class Symbol:
    space: str          # "shared" | "global" | "const" | "param" | "local"
    address: int        # in its own space (global: absolute)
    size: int


@dataclass
class CompiledKernel:
    fn: Function
    module: PtxModule
    instrs: list[Instruction] = field(default_factory=list)
    code: list = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)
    reg_index: dict[str, int] = field(default_factory=dict)
    reg_type: list[str] = field(default_factory=list)
    symbols: dict[str, Symbol] = field(default_factory=dict)
    reconv: dict[int, int] = field(default_factory=dict)
    shared_size: int = 0
    local_size: int = 0
    param_size: int = 0
    params: list[tuple[str, VarDecl, int]] = field(default_factory=list)
    extern_shared: list[str] = field(default_factory=list)
    extern_align: int = 128  # dynamic shared memory starts at a multiple of this
    width: int = 32      # lanes per emulated warp (more in batched mode, see Launch)
    # asynchronous work is checked (async_check): on for kernels that have any
    check_async: bool = False
    # registers a wgmma.mma_async writes or reads as A: other instructions' accesses to
    # them are checked against the wgmma in flight
    async_registers: set[int] = field(default_factory=set)

    def error(self, ins: Instruction, msg: str) -> PtxError:
        return PtxError(f"{msg} in '{ins.text}'", self.module.filename, ins.line, ins.col)


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def _decl_size(d: VarDecl, length: int | None) -> int:
    n = type_size(d.type) if d.type != "pred" else 1
    return n * (length if length else 1)


def compile_kernel(module: PtxModule, name: str, global_symbols: dict[str, Symbol],
                   errors: list[PtxError] | None = None, width: int = 32,
                   check_async: bool = True) -> CompiledKernel:
    """Compile entry ``name``. With ``errors`` given, instructions that do not compile are
    recorded there (and raise when executed) instead of failing the whole kernel. With
    ``check_async``, a kernel that issues asynchronous work has its uses checked
    (async_check)."""
    from nanotile.ptxemu.ops import compile_instruction

    fn = module.functions.get(name)
    if fn is None or fn.body is None:
        known = ", ".join(n for n, f in module.functions.items() if f.kind == "entry")
        raise PtxError(f"no kernel named '{name}' (kernels: {known or 'none'})", module.filename)
    k = CompiledKernel(fn, module)
    k.width = width
    k.symbols.update(global_symbols)
    for r in SPECIAL_REGS:
        k.reg_index[r] = len(k.reg_type)
        k.reg_type.append("u64" if r in ("%clock64", "%globaltimer") else "u32")
    # params
    off = 0
    for p in fn.params:
        pname, length = p.names[0]
        size = _decl_size(p, length)
        off = _align(off, p.align or min(type_size(p.type), 8))
        k.symbols[pname] = Symbol("param", off, size)
        k.params.append((pname, p, off))
        off += size
    k.param_size = off
    # module-level .shared variables belong to every CTA; then the body's declarations
    for d in module.globals:
        if d.space == ".shared":
            _declare(k, d)
    for item in fn.body:
        if isinstance(item, VarDecl):
            _declare(k, item)
        elif isinstance(item, Label):
            k.labels[item.name] = len(k.instrs)
        else:
            k.instrs.append(item)
    for nm in k.extern_shared:        # dynamic shared memory follows the static variables
        k.symbols[nm] = Symbol("shared", _align(k.shared_size, k.extern_align), 0)
    k.labels.setdefault("__end", len(k.instrs))
    _compute_reconvergence(k)
    if check_async and uses_async(ins.opcode for ins in k.instrs):
        k.check_async = True
        k.async_registers = _wgmma_registers(k)
    k.code = [_compile_one(k, ins, pc, compile_instruction, errors)
              for pc, ins in enumerate(k.instrs)]
    k.code.append(lambda w, m: (EXIT, m))     # falling off the end returns
    return k


def _wgmma_registers(k: CompiledKernel) -> set[int]:
    """The registers wgmma.mma_async instructions write (their accumulators) or read as
    A (the register form)."""
    from nanotile.ptxemu.ptx_parser import Reg, Vec

    found = set()
    for ins in k.instrs:
        if ins.opcode.startswith("wgmma.mma_async"):
            for operand in ins.operands[:2]:
                items = operand.items if isinstance(operand, Vec) else [operand]
                found |= {k.reg_index[r.name] for r in items
                          if isinstance(r, Reg) and r.name in k.reg_index}
    return found


def _compile_one(k, ins, pc, compile_instruction, errors):
    if errors is None:
        return compile_instruction(k, ins, pc)
    try:
        return compile_instruction(k, ins, pc)
    except PtxError as exc:
        errors.append(exc)

        def fail(w, m, err=exc):
            raise err
        return fail


def _declare(k: CompiledKernel, d: VarDecl) -> None:
    if d.space == ".reg":
        for base, n in d.reg_range:
            for i in range(n):
                k.reg_index[f"{base}{i}"] = len(k.reg_type)
                k.reg_type.append(d.type)
        for nm, _ in d.names:
            k.reg_index[nm] = len(k.reg_type)
            k.reg_type.append(d.type)
        return
    for nm, length in d.names:
        size = _decl_size(d, length)
        align = d.align or type_size(d.type)
        if d.space == ".shared":
            if d.extern:
                k.extern_shared.append(nm)
                k.extern_align = max(k.extern_align, align)
                continue
            if nm in k.extern_shared:   # a kernel's own array shadows a module-scope one
                k.extern_shared.remove(nm)
            k.shared_size = _align(k.shared_size, align)
            k.symbols[nm] = Symbol("shared", k.shared_size, size)
            k.shared_size += size
        elif d.space in (".local", ".param"):
            # body .param declarations hold call arguments: per-thread, like local memory
            k.local_size = _align(k.local_size, align)
            k.symbols[nm] = Symbol("local", k.local_size, size)
            k.local_size += size
        else:
            raise PtxError(f"'{d.space}' declarations inside a function are not supported",
                           k.module.filename, d.line)


def _compute_reconvergence(k: CompiledKernel) -> None:
    """For every conditional branch, the pc of its immediate post-dominator's first
    instruction (-1 when that is the function exit)."""
    from nanotile.ptxemu.ops_control import branch_target, is_terminator

    n = len(k.instrs)
    leaders = {0}
    for pc, ins in enumerate(k.instrs):
        t = branch_target(k, ins)
        if t is not None:
            leaders.add(t)
            leaders.add(pc + 1)
        elif is_terminator(ins):
            leaders.add(pc + 1)
    leaders = sorted(x for x in leaders if x < n)
    block_of = {}
    starts = leaders + [n]
    for b, (s, e) in enumerate(itertools.pairwise(starts)):
        for pc in range(s, e):
            block_of[pc] = b
    nb = len(leaders)
    exit_node = nb
    succ: list[set[int]] = [set() for _ in range(nb + 1)]
    for b in range(nb):
        last = starts[b + 1] - 1
        ins = k.instrs[last]
        t = branch_target(k, ins)
        if t is not None:
            succ[b].add(block_of.get(t, exit_node))
            if ins.guard is not None:
                succ[b].add(block_of.get(last + 1, exit_node))
        elif is_terminator(ins):
            if ins.guard is not None:
                succ[b].add(block_of.get(last + 1, exit_node))
            succ[b].add(exit_node)
        else:
            succ[b].add(block_of.get(last + 1, exit_node))
    ipdom = _post_dominators(succ, exit_node)
    for b in range(nb):
        last = starts[b + 1] - 1
        if branch_target(k, k.instrs[last]) is not None:
            p = ipdom[b]
            k.reconv[last] = starts[p] if p is not None and p != exit_node else -1


def _post_dominators(succ: list[set[int]], exit_node: int) -> list[int | None]:
    """Immediate post-dominators (Cooper-Harvey-Kennedy on the reversed CFG)."""
    n = len(succ)
    pred: list[list[int]] = [[] for _ in range(n)]
    for b, ss in enumerate(succ):
        for s in ss:
            pred[s].append(b)
    # reverse post-order of the reversed graph, starting at the exit
    order: list[int] = []
    seen = {exit_node}
    stack = [(exit_node, iter(pred[exit_node]))]
    while stack:
        node, it = stack[-1]
        nxt = next(it, None)
        if nxt is None:
            order.append(node)
            stack.pop()
        elif nxt not in seen:
            seen.add(nxt)
            stack.append((nxt, iter(pred[nxt])))
    order.reverse()
    num = {b: i for i, b in enumerate(order)}
    idom: list[int | None] = [None] * n
    idom[exit_node] = exit_node
    changed = True
    while changed:
        changed = False
        for b in order[1:]:
            new = None
            for s in succ[b]:
                if idom[s] is None:
                    continue
                if new is None:
                    new = s
                    continue
                x, y = s, new
                while x != y:
                    while num[x] > num[y]:
                        x = idom[x]
                    while num[y] > num[x]:
                        y = idom[y]
                new = x
            if new is not None and idom[b] != new:
                idom[b] = new
                changed = True
    return idom


# ---------------------------------------------------------------- run-time state

class Barrier:
    def __init__(self) -> None:
        self.arrived = 0
        self.expected: int | None = None
        self.waiting: list[Warp] = []
        self.released = False


class CTA:
    """One CTA; in batched mode, a group of CTAs run as one wide warp (``batch`` lists
    their ids)."""

    def __init__(self, launch: Launch, ctaid: tuple[int, int, int],
                 batch: list[tuple[int, int, int]] | None = None) -> None:
        self.launch = launch
        self.ctaid = ctaid
        self.batch = batch
        self.hazards = SharedHazards(launch.shared_total) \
            if launch.kernel.check_async else None
        self.shared = CheckedShared(launch.shared_total, self.hazards) \
            if self.hazards is not None else Space("shared", launch.shared_total)
        self.barriers: dict[int, Barrier] = {}
        self.mbarriers: dict[int, list[int]] = {}   # addr -> [phase, pending, expected, tx]
        self.events = 0
        self.tmem: np.ndarray | None = None       # tensor memory (sm_100), made on first use
        self.tmem_next = 0
        nthreads = launch.block[0] * launch.block[1] * launch.block[2]
        self.nthreads = nthreads
        if batch is not None:
            self.warps = [Warp(self, 0, nthreads * len(batch), batch)]
        else:
            self.warps = [Warp(self, w, min(32, nthreads - 32 * w))
                          for w in range((nthreads + 31) // 32)]

    def live_threads(self) -> int:
        return sum(int((w.valid & ~w.exited).sum()) for w in self.warps)


def gpu_warps(w: "Warp", m: np.ndarray, active: int) -> int:
    """The GPU warps that have an active lane in mask ``m`` of warp ``w``: what one
    instruction of ``w`` counts as warp instructions (a batched warp stands for several)."""
    if w.gpu_warp is None or not active:
        return 1 if active else 0
    return int(count_nonzero(np.bincount(w.gpu_warp[m])))


class Warp:
    """32 lanes in lockstep (or, batched, all threads of several CTAs: see Launch)."""

    def __init__(self, cta: CTA, wid: int, nlanes: int,
                 batch: list[tuple[int, int, int]] | None = None) -> None:
        launch = cta.launch
        k = launch.kernel
        width = k.width
        lanes = np.arange(width, dtype=np.uint32)
        self.cta = cta
        self.wid = wid
        self.full = full_mask(width)
        self.valid = lanes < nlanes
        self.exited = np.zeros(width, dtype=bool)
        self.R = list(launch.reg_template)
        self.local = LocalMemory(k.local_size, width) if k.local_size else None
        self.stack: list[list] = [[0, self.full if nlanes == width else self.valid.copy(), -1]]
        self.state = "ready"
        self.count = 0
        bx, by, _ = launch.block
        nthreads = cta.nthreads
        if batch is None:
            t = lanes + 32 * wid
            ctaids = [np.full(width, cta.ctaid[i], np.uint32) for i in range(3)]
        else:
            t = lanes % nthreads
            which = np.minimum(lanes // nthreads, len(batch) - 1)
            ctaids = [np.array([b[i] for b in batch], np.uint32)[which] for i in range(3)]
        ids = {"x": t % bx, "y": (t // bx) % by, "z": t // (bx * by)}
        ri = k.reg_index
        for i, d in enumerate(DIMS):
            self.R[ri[f"%tid.{d}"]] = ids[d].astype(np.uint32)
            self.R[ri[f"%ctaid.{d}"]] = ctaids[i]
            self.R[ri[f"%clusterid.{d}"]] = ctaids[i]
        # the GPU warp each lane belongs to (a batched warp stands for several): one
        # instruction counts once per GPU warp with an active lane (Launch.instructions)
        self.gpu_warp = None if batch is None else \
            ((lanes // nthreads) * ((nthreads + 31) // 32) + t // 32).astype(np.int64)
        self.R[ri["%laneid"]] = (t % 32).astype(np.uint32)
        self.R[ri["%warpid"]] = (t // 32).astype(np.uint32)
        for name, value in LANEMASKS.items():
            self.R[ri[f"%lanemask_{name}"]] = value[t % 32]


class Launch:
    """One kernel launch: memory, parameters and the grid loop."""

    def __init__(self, kernel: CompiledKernel, gmem: GlobalMemory, const: Space | None,
                 grid: tuple[int, int, int], block: tuple[int, int, int], param_bytes: bytes,
                 dynamic_shared: int, max_warp_steps: int = 50_000_000,
                 progress: Callable[[int, int], None] | None = None,
                 interleave: bool = False) -> None:
        self.kernel = kernel
        # a warp that arrives on an mbarrier yields to the others (another legal schedule
        # than running each warp until it blocks: async_check sees other hazards in it)
        self.interleave = interleave
        self.progress = progress  # called with (CTAs done, CTAs in all) as CTAs finish
        self.gmem = gmem
        self.const = const
        self.grid = grid
        self.block = block
        self.dynamic_shared = dynamic_shared
        self.max_warp_steps = max_warp_steps
        self.clock = 0
        self.shared_total = (_align(kernel.shared_size, kernel.extern_align) + dynamic_shared
                             if dynamic_shared or kernel.extern_shared else kernel.shared_size)
        self.param = Space("param", max(len(param_bytes), 1), readonly=True)
        self.param.write_bytes(0, param_bytes) if param_bytes else None
        self.instructions = 0
        self.lane_instructions = 0
        tmpl = []
        for t in kernel.reg_type:
            dt = np.dtype(bool) if t == "pred" else UINT[max(type_size(t), 1)]
            tmpl.append(np.zeros(kernel.width, dtype=dt))
        ri = kernel.reg_index
        for i, d in enumerate(DIMS):
            tmpl[ri[f"%ntid.{d}"]] = np.full(kernel.width, block[i], np.uint32)
            tmpl[ri[f"%nctaid.{d}"]] = np.full(kernel.width, grid[i], np.uint32)
            tmpl[ri[f"%nclusterid.{d}"]] = np.full(kernel.width, grid[i], np.uint32)
            tmpl[ri[f"%cluster_nctaid.{d}"]] = np.full(kernel.width, 1, np.uint32)
        nwarps = (block[0] * block[1] * block[2] + 31) // 32
        tmpl[ri["%nwarpid"]] = np.full(kernel.width, nwarps, np.uint32)
        tmpl[ri["%cluster_nctarank"]] = np.full(kernel.width, 1, np.uint32)
        tmpl[ri["%nsmid"]] = np.full(kernel.width, 1, np.uint32)
        tmpl[ri["%dynamic_smem_size"]] = np.full(kernel.width, dynamic_shared, np.uint32)
        tmpl[ri["%total_smem_size"]] = np.full(kernel.width, self.shared_total, np.uint32)
        self.reg_template = tmpl

    def run(self) -> None:
        gx, gy, gz = self.grid
        total = gx * gy * gz
        # CTA ids in launch order, made as they run (a grid may be billions of CTAs)
        ids = ((x, y, z) for z in range(gz) for y in range(gy) for x in range(gx))
        nthreads = self.block[0] * self.block[1] * self.block[2]
        per = self.kernel.width // nthreads if self.kernel.width != 32 else 0
        done = 0
        # batched mode: independent CTAs (no shared memory, barriers or warp-level
        # instructions) run side by side as one wide warp
        while group := list(itertools.islice(ids, per or 1)):
            self.run_cta(CTA(self, group[0], group) if per else CTA(self, group[0]))
            done += len(group)
            if self.progress is not None:
                self.progress(done, total)

    # -- CTA scheduling
    def run_cta(self, cta: CTA) -> None:
        quiet_rounds = 0
        while True:
            before = cta.events
            runnable = [w for w in cta.warps if w.state in ("ready", "yield")]
            if not runnable:
                if all(w.state == "done" for w in cta.warps):
                    return
                if not self._release_barriers(cta):
                    self._deadlock(cta)
                continue
            only_yields = True
            for w in runnable:
                status = self.run_warp(w)
                w.state = status
                if status != "yield":
                    only_yields = False
            self._release_barriers(cta)
            if only_yields and cta.events == before:
                quiet_rounds += 1
                if quiet_rounds > 3:
                    self._deadlock(cta)
            else:
                quiet_rounds = 0

    def _release_barriers(self, cta: CTA) -> bool:
        released = False
        for bid, b in list(cta.barriers.items()):
            need = b.expected if b.expected is not None else cta.live_threads()
            if b.waiting and b.arrived >= need:
                for w in b.waiting:
                    w.state = "ready"
                b.released = True
                del cta.barriers[bid]
                cta.events += 1
                released = True
        return released

    def _deadlock(self, cta: CTA) -> None:
        k = self.kernel
        where = []
        for w in cta.warps:
            if w.state != "done" and w.stack:
                pc = w.stack[-1][0] - 1
                ins = k.instrs[pc] if 0 <= pc < len(k.instrs) else None
                where.append(f"warp {w.wid} at line {ins.line if ins else '?'} "
                             f"('{ins.text if ins else '?'}')")
        raise PtxError(f"deadlock in CTA {cta.ctaid}: " + "; ".join(where), k.module.filename)

    def run_warp(self, w: Warp) -> str:
        """Run one warp until it blocks, yields or exits; returns its new state."""
        code = self.kernel.code
        stack = w.stack
        count = 0
        if w.cta.hazards is not None:
            w.cta.hazards.current_warp = w.wid
        lane_count = 0
        issued = 0  # warp instructions, counted per GPU warp (see gpu_warps)
        pc = 0
        try:
            while stack:
                e = stack[-1]
                if len(e) > 3:              # lanes parked at a barrier (see BAR below)
                    if not e[3].released:
                        if w not in e[3].waiting:
                            e[3].waiting.append(w)
                        return "barrier"
                    del e[3]
                pc, m, rpc = e
                active = count_nonzero(m)
                warps = gpu_warps(w, m, active)
                if pc == rpc or not active:
                    stack.pop()
                    continue
                start = count
                while pc != rpc:
                    r = code[pc](w, m)
                    count += 1
                    if r is None:
                        pc += 1
                        continue
                    kind = r[0]
                    if kind == BRA:
                        # a loop that never ends: in one run, or across runs that block at
                        # barriers each time round (w.count: the steps of its earlier runs)
                        if count + w.count > self.max_warp_steps:
                            self._runaway(w, pc)
                        taken = r[2]
                        nt = count_nonzero(taken)
                        if nt == active:
                            pc = r[1]
                            continue
                        if nt == 0:
                            pc += 1
                            continue
                        rec = self.kernel.reconv[pc]
                        if rpc == rec:
                            stack.pop()
                        else:
                            e[0] = rec
                        stack.append([pc + 1, m & ~taken, rec])
                        stack.append([r[1], taken, rec])
                        break
                    if kind == EXIT:
                        gone = r[1] if len(r) > 1 else m
                        w.exited |= gone
                        w.cta.events += 1
                        for other in stack:
                            other[1] = other[1] & ~gone
                        m = e[1]
                        left = count_nonzero(m)
                        if not left:
                            stack.pop()
                            break
                        active = left
                        warps = gpu_warps(w, m, active)
                        pc += 1
                        continue
                    if kind == BAR:
                        e[0] = pc + 1
                        bar = self._arrive(w, r[1], r[2], active)
                        e.append(bar)
                        below = stack[-2] if len(stack) > 1 else None
                        if below is not None and len(below) == 3 and below[2] == rpc \
                                and below[0] != rpc:
                            # only part of the warp is here: its sibling path runs first
                            # (threads wait at a barrier individually), then these lanes wait
                            stack[-1], stack[-2] = below, e
                            break
                        bar.waiting.append(w)
                        lane_count += active * (count - start)
                        issued += warps * (count - start)
                        return "barrier"
                    if kind == YIELD:
                        e[0] = pc + 1
                        lane_count += active * (count - start)
                        issued += warps * (count - start)
                        return "yield"
                    if kind == ARRIVE:
                        self._arrive(w, r[1], r[2], active)
                        pc += 1
                        continue
                else:
                    stack.pop()
                lane_count += active * (count - start)
                issued += warps * (count - start)
            if w.cta.hazards is not None:
                w.cta.hazards.warp_exits(w.wid)
            return "done"
        except MemoryFault as exc:
            ins = self.kernel.instrs[pc]
            raise self.kernel.error(ins, f"{exc} ({self._where(w)})") from None
        except (IndexError, KeyError, ValueError, TypeError, OverflowError, ZeroDivisionError,
                AttributeError) as exc:
            # an emulator limitation met at run time: still name the instruction
            ins = self.kernel.instrs[min(pc, len(self.kernel.instrs) - 1)]
            raise self.kernel.error(ins, f"the emulator failed on this instruction "
                                         f"({type(exc).__name__}: {exc}; {self._where(w)})") from exc
        finally:
            w.count += count
            self.instructions += int(issued)
            self.lane_instructions += int(lane_count)

    def _where(self, w: Warp) -> str:
        """Which CTA and warp (or batch of CTAs) a warp is, for messages."""
        batch = w.cta.batch
        if batch is None:
            return f"CTA {w.cta.ctaid}, warp {w.wid}"
        if len(batch) == 1:
            return f"CTA {batch[0]}"
        return f"CTAs {batch[0]} to {batch[-1]}, run as one batch"

    def _runaway(self, w: Warp, pc: int) -> None:
        ins = self.kernel.instrs[pc]
        raise self.kernel.error(ins, f"warp {w.wid} of CTA {w.cta.ctaid} ran {self.max_warp_steps} "
                                     "instructions (an infinite loop, or a spin-wait the "
                                     "emulator cannot see; raise max_warp_steps)")

    def _arrive(self, w: Warp, bid: int, expected: int | None, nthreads: int) -> Barrier:
        cta = w.cta
        b = cta.barriers.setdefault(bid, Barrier())
        b.arrived += nthreads
        if expected is not None:
            b.expected = expected
        cta.events += 1
        return b

    # -- memory dispatch (used by the ops)
    def space(self, w: Warp, name: str):
        if name == "global":
            return self.gmem
        if name == "shared":
            return w.cta.shared
        if name == "param":
            return self.param
        if name == "const":
            return self.const
        raise MemoryFault(f"no {name} space")

    def load(self, w: Warp, space: str, addr: np.ndarray, nbytes: int, m: np.ndarray) -> np.ndarray:
        """Bits loaded by the active lanes (inactive lanes get 0)."""
        if m is w.full and space in ("global", "shared", "param", "const"):
            return self.space(w, space).load(addr, nbytes)
        out = np.zeros(len(m), dtype=UINT[nbytes])
        a = addr[m]
        if space == "generic":
            for sp, sub, lanes in self._split_generic(w, a, m):
                out[lanes] = self._load_space(w, sp, sub, nbytes, lanes)
            return out
        out[m] = self._load_space(w, space, a, nbytes, np.nonzero(m)[0])
        return out

    def _load_space(self, w, space, a, nbytes, lanes):
        if space == "local":
            if w.local is None:
                raise MemoryFault("local memory access but the kernel declares no local memory")
            return w.local.load(a, nbytes, lanes)
        return self.space(w, space).load(a, nbytes)

    def store(self, w: Warp, space: str, addr: np.ndarray, nbytes: int, bits: np.ndarray,
              m: np.ndarray) -> None:
        if m is w.full and space in ("global", "shared"):
            self.space(w, space).store(addr, nbytes, bits)
            return
        a = addr[m]
        b = bits[m]
        if space == "generic":
            for sp, sub, lanes in self._split_generic(w, a, m):
                self._store_space(w, sp, sub, nbytes, bits[lanes], lanes)
            return
        self._store_space(w, space, a, nbytes, b, np.nonzero(m)[0])

    def _store_space(self, w, space, a, nbytes, b, lanes):
        if space == "local":
            if w.local is None:
                raise MemoryFault("local memory access but the kernel declares no local memory")
            w.local.store(a, nbytes, b, lanes)
            return
        self.space(w, space).store(a, nbytes, b)

    def _split_generic(self, w: Warp, a: np.ndarray, m: np.ndarray):
        """Split generic addresses of the active lanes by the window they fall in."""
        lanes = np.nonzero(m)[0]
        a = a.astype(np.uint64)
        for name, base in (("shared", SHARED_WINDOW), ("local", LOCAL_WINDOW),
                           ("param", PARAM_WINDOW), ("const", CONST_WINDOW)):
            sel = (a >= np.uint64(base)) & (a < np.uint64(base + WINDOW_SIZE))
            if sel.any():
                yield name, a[sel] - np.uint64(base), lanes[sel]
                a, lanes = a[~sel], lanes[~sel]
        if len(a):
            yield "global", a, lanes


def default_dtype(t: str) -> np.dtype:
    return DTYPES[t]
