"""Control flow and data flow over one PTX kernel body, shared by the ptx-* passes.

PTX registers are not in SSA form: lower.py writes loop-carried values and predicated
loads into the same register several times (``mov.f32 %f2, %f1; @%p1 ld.global.f32 %f2,
[...]``), so every pass reasons with classic data-flow analyses over basic blocks rather
than with def-use chains:

* ``build_cfg(body)``: basic blocks (a label starts one; ``bra``/``ret``/``exit``/``trap``
  end one) and their successors. A branch to a label that is not in the kernel, or an
  indirect branch (``brx``), makes the CFG "opaque" and the passes leave the kernel alone.
* ``forward(cfg, body, step)``: a forward "available facts" analysis (meet = the facts
  that hold on every incoming path, the entry block starts with none, the other blocks
  start as "everything" so that loops converge to the greatest fixed point). Facts are a
  dict; ``step(facts, instr)`` updates them in place for one instruction.
* ``liveness(cfg, body)``: registers live after each instruction (backward, meet =
  union). A guarded instruction only *may* write its destination, so it does not kill it.
  ``live_ranges`` gives the same facts per register, as runs of instructions.
* ``Facts``: the facts of a forward analysis; ``kill(regs)`` drops the ones that mention a
  register that was just written.

Pure instructions (``PURE``) compute their destination from their operands only; they
may be removed when the destination is dead and merged when identical.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache

from ..ir import BodyItem, Instr, Label, PtxKernel, defs, is_register, operand_registers, uses

# Opcode roots whose only effect is writing the destination register (PTX ISA chapter 9:
# integer, floating-point, comparison, logic, shift, conversion and move instructions).
PURE_ROOTS = frozenset([
    "add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem", "abs", "neg", "min",
    "max", "popc", "clz", "bfind", "fns", "brev", "bfe", "bfi", "szext", "bmsk", "dp4a",
    "dp2a", "and", "or", "xor", "not", "cnot", "lop3", "shf", "shl", "shr", "prmt", "testp",
    "copysign", "rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh", "fma", "set",
    "setp", "selp", "slct", "mov", "cvt", "cvta", "isspacep"
])
# Special registers whose value is fixed for a thread during the whole kernel.
STABLE_SPECIALS = frozenset([
    "tid", "ntid", "ctaid", "nctaid", "laneid", "nwarpid", "nsmid", "gridid", "clusterid",
    "nclusterid", "cluster_ctaid", "cluster_nctaid", "cluster_ctarank", "cluster_nctarank",
    "is_explicit_cluster", "total_smem_size", "dynamic_smem_size", "aggr_smem_size"
])
_SPECIAL = re.compile(r"%([A-Za-z_][\w]*+)")
_WHOLE_REG = re.compile(r"%[A-Za-z_$][\w$]*")


def is_pure(instr: Instr) -> bool:
    """True if the instruction only writes its destination register(s): removable when
    they are dead. Loads count as pure unless they carry ordering or volatility (a load
    may fault, but removing a load whose value nobody uses is what every compiler does);
    ``ld.param`` reads kernel parameters, which never change."""
    if not instr.written:
        return False
    return _pure_opcode(instr.opcode)


@lru_cache(maxsize=1 << 12)
def _pure_opcode(opcode: str) -> bool:
    if ".cc" in opcode:
        return False  # add.cc & co also write the carry flag a later addc reads
    root = opcode.split(".", 1)[0]
    if root == "ld":
        mods = set(opcode.split(".")[1:])
        return not mods & {"volatile", "acquire", "relaxed", "mmio", "sys"}
    return root in PURE_ROOTS


def is_repeatable(instr: Instr) -> bool:
    """True if two executions with the same operands give the same result (for CSE):
    pure, no memory read (except kernel parameters), no special register that changes."""
    if not is_pure(instr) or instr.pred is not None:
        return False
    if instr.root == "ld" and not instr.opcode.startswith("ld.param"):
        return False
    for op in instr.operands[1:]:
        if _reads_changing_special(op):
            return False
    return True


@lru_cache(maxsize=1 << 18)
def _reads_changing_special(operand: str) -> bool:
    """The operand names a special register whose value may change (``%clock``)."""
    for m in _SPECIAL.finditer(operand):
        if not is_register(f"%{m.group(1)}") and m.group(1) not in STABLE_SPECIALS:
            return True
    return False


@lru_cache(maxsize=1 << 18)
def is_register_operand(text: str) -> bool:
    """The operand is exactly one register (no address, vector or literal)."""
    return bool(_WHOLE_REG.fullmatch(text)) and bool(operand_registers(text))


_PREFIX = re.compile(r"%([A-Za-z_]+?)\d+")


@lru_cache(maxsize=1 << 18)
def reg_prefix(reg: str) -> str:
    m = _PREFIX.fullmatch(reg)
    return m.group(1) if m else reg


@dataclass
class Block:
    start: int  # index into the body (first item)
    end: int    # one past the last item
    succs: list[int] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)


@dataclass
class Cfg:
    blocks: list[Block]
    opaque: bool = False  # an indirect or unknown branch: analyses give up
    labels: dict[str, int] = field(default_factory=dict)  # label -> block index


def branch_target(instr: Instr) -> str | None:
    if instr.root == "bra" and instr.operands:
        return instr.operands[-1]
    return None


def build_cfg(body: list[BodyItem]) -> Cfg:
    starts = {0}
    for i, item in enumerate(body):
        if isinstance(item, Label):
            starts.add(i)
        elif isinstance(item, Instr) and item.root in ("bra", "brx", "ret", "exit", "trap"):
            starts.add(i + 1)
    order = sorted(s for s in starts if s < len(body)) or [0]
    blocks = [Block(s, e) for s, e in zip(order, [*order[1:], len(body)])]
    cfg = Cfg(blocks)
    for b, block in enumerate(blocks):
        for i in range(block.start, block.end):
            if isinstance(body[i], Label):
                cfg.labels[body[i].name] = b
    for b, block in enumerate(blocks):
        last = next((body[i] for i in range(block.end - 1, block.start - 1, -1)
                     if isinstance(body[i], Instr)), None)
        falls = True
        if isinstance(last, Instr):
            if last.root == "brx":
                cfg.opaque = True
            target = branch_target(last)
            if target is not None:
                if target not in cfg.labels:
                    cfg.opaque = True
                else:
                    block.succs.append(cfg.labels[target])
                falls = last.pred is not None
            elif last.root in ("ret", "exit", "trap"):
                falls = last.pred is not None
        if falls and b + 1 < len(blocks) and (b + 1) not in block.succs:
            block.succs.append(b + 1)
    for b, block in enumerate(blocks):
        for s in block.succs:
            blocks[s].preds.append(b)
    return cfg


def kernel_cfg(kernel: PtxKernel) -> Cfg | None:
    cfg = build_cfg(kernel.body)
    return None if cfg.opaque else cfg


class Facts:
    """Facts ``key -> value`` of a forward analysis, each mentioning some registers; writing
    a register drops the facts that mention it (``kill``) in time proportional to them.

    Copies are cheap (the analyses copy at every block): a copy shares the per-register
    key sets with its original, and either copies a set before changing it (``owned``
    lists the sets this object may change)."""

    __slots__ = ("index", "map", "owned", "regs")

    def __init__(self) -> None:
        self.map: dict = {}
        self.regs: dict = {}    # key -> registers the fact mentions
        self.index: dict = {}   # register -> keys of the facts mentioning it
        self.owned: set = set()  # registers whose key set is this object's own

    def get(self, key, default=None):
        return self.map.get(key, default)

    def __contains__(self, key) -> bool:
        return key in self.map

    def __bool__(self) -> bool:
        return bool(self.map)

    def __eq__(self, other) -> bool:
        return isinstance(other, Facts) and self.map == other.map

    def _keys(self, register) -> set:
        """The key set of ``register``, this object's own (copied if shared)."""
        keys = self.index.get(register)
        if keys is None:
            keys = self.index[register] = set()
            self.owned.add(register)
        elif register not in self.owned:
            keys = self.index[register] = set(keys)
            self.owned.add(register)
        return keys

    def set(self, key, value, regs) -> None:
        if key in self.map:
            self._drop(key)
        self.map[key] = value
        self.regs[key] = regs = tuple(regs)
        for r in regs:
            self._keys(r).add(key)

    def _drop(self, key) -> None:
        del self.map[key]
        for r in self.regs.pop(key):
            if r in self.index:
                self._keys(r).discard(key)

    def discard(self, key) -> None:
        if key in self.map:
            self._drop(key)

    def kill(self, regs) -> None:
        """Forget every fact mentioning one of ``regs`` (registers just written)."""
        for r in regs:
            keys = self.index.get(r)
            if keys:
                for key in list(keys):
                    if key in self.map:
                        self._drop(key)

    def copy(self) -> Facts:
        out = Facts()
        out.map = dict(self.map)
        out.regs = dict(self.regs)
        out.index = dict(self.index)  # the sets are shared now: neither owns them
        self.owned = set()
        return out

    def mapping(self) -> dict:
        return self.map


def _meet(states: list[Facts | None]) -> Facts | None:
    """The facts of the first state that hold, with the same value, in all of them."""
    known = [s for s in states if s is not None]
    if not known:
        return None
    first = known[0]
    out = first.copy()
    for other in known[1:]:
        for key, value in first.map.items():
            if key in out.map and other.map.get(key, _MISSING) != value:
                out._drop(key)
    return out


_MISSING = object()


def forward(cfg: Cfg, body: list[BodyItem], step, run_block=None) -> list[Facts]:
    """Facts holding at the start of each block (the greatest fixed point).
    ``run_block(b, facts)``, if given, takes the place of running ``step`` over the
    block's instructions (updating ``facts`` in place). A block whose incoming facts are
    those of its last run is not run again."""
    n = len(cfg.blocks)
    outs: list[Facts | None] = [None] * n
    ins: list[Facts | None] = [None] * n
    work = deque(range(n))
    pending = set(work)
    while work:
        b = work.popleft()
        pending.discard(b)
        block = cfg.blocks[b]
        if b == 0 or not block.preds:
            state = Facts()
        else:
            state = _meet([outs[p] for p in block.preds])
        if state is None or (ins[b] is not None and state == ins[b]):
            continue  # (the same facts as last time: the same facts after the block)
        ins[b] = state.copy()
        if run_block is not None:
            run_block(b, state)
        else:
            for i in range(block.start, block.end):
                if isinstance(body[i], Instr):
                    step(state, body[i])
        if state != outs[b]:
            outs[b] = state
            for s in block.succs:
                if s not in pending:
                    pending.add(s)
                    work.append(s)
    return [s if s is not None else Facts() for s in ins]


def immediate_dominators(cfg: Cfg) -> list[int | None]:
    """For each block, its immediate dominator (the entry block's is itself; None for a
    block the entry does not reach): Cooper, Harvey and Kennedy's iteration over the
    blocks in reverse postorder."""
    order: list[int] = []
    seen = {0}
    stack = [(0, iter(cfg.blocks[0].succs))] if cfg.blocks else []
    while stack:
        block, successors = stack[-1]
        following = next((s for s in successors if s not in seen), None)
        if following is None:
            order.append(block)
            stack.pop()
        else:
            seen.add(following)
            stack.append((following, iter(cfg.blocks[following].succs)))
    order.reverse()
    number = {b: i for i, b in enumerate(order)}
    idom: list[int | None] = [None] * len(cfg.blocks)
    if not order:
        return idom
    idom[0] = 0

    def meet(a: int, b: int) -> int:
        while a != b:
            while number[a] > number[b]:
                a = idom[a]  # type: ignore[assignment]
            while number[b] > number[a]:
                b = idom[b]  # type: ignore[assignment]
        return a

    changed = True
    while changed:
        changed = False
        for b in order[1:]:
            done = [p for p in cfg.blocks[b].preds if idom[p] is not None]
            new = done[0]
            for p in done[1:]:
                new = meet(p, new)
            if idom[b] != new:
                idom[b], changed = new, True
    return idom


def must_defs(instr: Instr) -> list[str]:
    """Registers certainly written (a guarded instruction may not write)."""
    return [] if instr.pred is not None else defs(instr)


def live_out(cfg: Cfg, body: list[BodyItem]) -> list[set[str]]:
    """For each block: the registers live at its end (backward, meet = union, iterated
    to the least fixed point so that values read in a later loop iteration are live)."""
    n = len(cfg.blocks)
    gen: list[set[str]] = []
    killed: list[set[str]] = []
    for block in cfg.blocks:
        g: set[str] = set()
        k: set[str] = set()
        for i in range(block.end - 1, block.start - 1, -1):
            item = body[i]
            if isinstance(item, Instr):
                for r in must_defs(item):
                    g.discard(r)
                    k.add(r)
                g.update(uses(item))
        gen.append(g)
        killed.append(k)
    live_in: list[set[str]] = [set(g) for g in gen]
    outs: list[set[str]] = [set() for _ in range(n)]
    changed = True
    while changed:
        changed = False
        for b in range(n - 1, -1, -1):
            out: set[str] = set()
            for s in cfg.blocks[b].succs:
                out |= live_in[s]
            outs[b] = out
            new = gen[b] | (out - killed[b])
            if new != live_in[b]:
                live_in[b] = new
                changed = True
    return outs


def live_ranges(cfg: Cfg, body: list[BodyItem]) -> dict[str, list[tuple[int, int]]]:
    """For each register: the runs ``(first, last)`` of body indices (inclusive, in order)
    just after which it is live; the same facts as ``liveness``, in space proportional to
    the number of runs rather than to instructions times live registers."""
    runs: dict[str, list[tuple[int, int]]] = {}
    outs = live_out(cfg, body)
    for b in range(len(cfg.blocks) - 1, -1, -1):
        block = cfg.blocks[b]
        top = dict.fromkeys(outs[b], block.end - 1)  # live register -> end of its open run
        for i in range(block.end - 1, block.start - 1, -1):
            item = body[i]
            if not isinstance(item, Instr):
                continue
            for r in must_defs(item):
                if r in top:  # live after i, not before it
                    runs.setdefault(r, []).append((i, top.pop(r)))
            for r in uses(item):
                if r not in top:
                    top[r] = i - 1
        for r, last in top.items():
            if last >= block.start:
                runs.setdefault(r, []).append((block.start, last))
    for spans in runs.values():
        spans.reverse()
    return runs


def liveness(cfg: Cfg, body: list[BodyItem]) -> list[set[str]]:
    """For each body index: the registers live just after that item (for tests and small
    kernels; passes walk blocks backward from ``live_out`` instead)."""
    after: list[set[str]] = [set() for _ in body]
    for b, live0 in enumerate(live_out(cfg, body)):
        block = cfg.blocks[b]
        live = set(live0)
        for i in range(block.end - 1, block.start - 1, -1):
            after[i] = set(live)
            item = body[i]
            if isinstance(item, Instr):
                live -= set(must_defs(item))
                live |= set(uses(item))
    return after


def rewrite_kernel(kernel: PtxKernel, rewrite, step) -> bool:
    """Run a forward analysis and apply ``rewrite(facts, instr) -> bool`` to every
    instruction with the facts holding just before it (``rewrite`` returns True exactly
    when it changed the instruction); True if anything changed.

    The analysis sees each instruction as the rewrite leaves it, so that the facts the
    rewrite creates (a constant reaching a ``mov``, an ``add`` a fold produced) reach the
    blocks after it too (facts about the original program hold for the rewritten one as
    well: rewrites keep every register's value). It rewrites copies of the instructions,
    since a block may be visited again with fewer facts (a loop); the copies made in a
    block's last visit, which saw the facts that finally hold at its start, replace the
    instructions."""
    cfg = kernel_cfg(kernel)
    if cfg is None:
        return False
    body = kernel.body
    rewritten: dict[int, tuple[bool, list[tuple[int, Instr]]]] = {}

    def run_block(b: int, facts: Facts) -> None:
        block = cfg.blocks[b]
        changed, new = False, []
        for i in range(block.start, block.end):
            item = body[i]
            if isinstance(item, Instr):
                probe = item.copy()
                if rewrite(facts, probe):  # (a rewrite says whether it changed anything)
                    changed = True
                    new.append((i, probe))
                step(facts, probe)
        rewritten[b] = (changed, new)

    forward(cfg, body, step, run_block)
    changed = False
    for b in range(len(cfg.blocks)):
        if b not in rewritten:  # never reached by the analysis: nothing is known there
            run_block(b, Facts())
        block_changed, new = rewritten[b]
        changed |= block_changed
        for i, instr in new:
            body[i] = instr
    return changed


def walk(cfg: Cfg, body: list[BodyItem], ins: list[dict], visit) -> None:
    """Replay a forward analysis block by block: ``visit(facts, index, instr)`` may
    rewrite the instruction before the caller's step updates the facts."""
    for b, block in enumerate(cfg.blocks):
        facts = ins[b].copy()
        for i in range(block.start, block.end):
            if isinstance(body[i], Instr):
                visit(facts, i, body[i])
