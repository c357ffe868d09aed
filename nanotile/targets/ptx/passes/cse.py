"""ptx-cse: compute an identical pure instruction once.  ptx-sm90 -> ptx-sm90

lower.py computes the same index, constant or parameter value again for every op that
needs it (``mul.lo.s32 %r45, %r8, 1024`` after ``mul.lo.s32 %r27, %r8, 1024``; the slot
index ``add.s32 %rX, %r1, 128`` of every tile; ``mov.u32 %rY, __nt_smem``). A later
instruction that computes what an earlier one already holds becomes a copy of it
(``mov.b32 %r45, %r27``), which ptx-copy-propagation and ptx-dead-code then remove.

Which instructions: unguarded, pure and repeatable (flow.is_repeatable: same operands,
same result; no memory reads except kernel parameters ``ld.param``; no special register
that changes, such as ``%clock``), writing one register that is not also a source; not a plain copy or a ``mov`` of a
literal (an immediate is cheaper than a register holding it). Two
are identical when opcode (with all its modifiers) and source operands are the same text,
after reading through the register copies available at that point (``mov %r45, %r27``
makes ``add %r46, %r45, %r1`` compare equal to ``add %r28, %r27, %r1``), so a chain of
repeated computations goes in one run.

Why it is correct: a forward "available expressions" analysis (flow.forward) records, after
such an instruction, that its expression is held in its destination; the fact is dropped
as soon as the destination or any register the expression reads may be written (guarded
writes included), and at joins only facts holding on every incoming path survive (loops
converge to the greatest fixed point). Where the fact holds, the destination of the
earlier instruction still holds exactly the value the later one would compute. The copy
uses the destination's declared register type, so it moves the same bits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir import Instr, PtxKernel, replace_uses
from .flow import forward, is_register_operand, is_repeatable, kernel_cfg, reg_prefix, walk
from .fold_immediates import literal_kind
from .kernel_pass import KernelPass


def expression(instr: Instr) -> tuple | None:
    """The key of a repeatable instruction writing one register, or None."""
    if not is_repeatable(instr) or not is_register_operand(instr.operands[0]):
        return None
    dest = instr.operands[0]
    if dest in instr.read:
        return None
    sources = instr.operands[1:]
    if instr.root == "mov" and len(sources) == 1 and (is_register_operand(sources[0])
                                                      or literal_kind(sources[0])):
        return None  # a copy or a constant: cheaper as it is (ptx-copy-propagation and
        #             ptx-fold-immediates handle those)
    return (instr.opcode, sources)


def step(facts, instr: Instr, key: tuple | None | bool = False) -> None:
    """Update the facts after ``instr`` (``key``: its expression, if already known)."""
    facts.kill(instr.written)
    if instr.root == "call" or instr.opcode.startswith("st.param"):
        # a call's scope writes parameters (st.param, the return value): forget loads
        # of parameters (kernel parameters never change, but scoped ones may share names)
        for old in [k for k in facts.map if k[0].startswith("ld.param")]:
            facts.discard(old)
    if key is False:
        key = expression(instr)
    if key is not None and key not in facts:
        facts.set(key, instr.operands[0], (instr.operands[0], *instr.read))
    copy = _copy_of(instr)
    if copy is not None:
        facts.set(("copy", copy[0]), copy[1], copy)


def _copy_of(instr: Instr) -> tuple[str, str] | None:
    if instr.root == "mov" and instr.pred is None and len(instr.operands) == 2 \
            and all(is_register_operand(o) for o in instr.operands) \
            and instr.operands[0] != instr.operands[1] \
            and reg_prefix(instr.operands[0]) == reg_prefix(instr.operands[1]):
        return instr.operands[0], instr.operands[1]
    return None


def eliminate_common_subexpressions(kernel: PtxKernel) -> bool:
    cfg = kernel_cfg(kernel)
    if cfg is None:
        return False
    ins = forward(cfg, kernel.body, _forwarding_step)
    changed = False

    def visit(facts, i: int, instr: Instr) -> None:
        nonlocal changed
        probe = _forwarded(facts, instr)
        key = expression(probe)
        holder = facts.get(key) if key is not None else None
        dest = instr.operands[0] if key is not None else None
        if holder is not None and holder != dest and reg_prefix(holder) == reg_prefix(dest):
            ty = kernel.reg_types.get(reg_prefix(dest))
            if ty is not None:
                probe = Instr(f"mov{ty}", [dest, holder])
                kernel.body[i] = probe
                changed = True
                key = False  # the copy's own
        step(facts, probe, key)

    walk(cfg, kernel.body, ins, visit)
    return changed


def _forwarded(facts, instr: Instr) -> Instr:
    """The instruction reading through the copies available here (the same values), so
    that expressions computed from copies of one value compare equal. The instruction in
    the program is not changed (that is ptx-copy-propagation's job)."""
    mapping = {}
    if facts:
        for r in instr.read:
            source = facts.get(("copy", r))
            if source is not None:
                mapping[r] = source
    if not mapping:
        return instr
    probe = instr.copy()
    replace_uses(probe, mapping)
    return probe


def _forwarding_step(facts, instr: Instr) -> None:
    # the analysis sees the instructions as the rewrite will leave them
    step(facts, _forwarded(facts, instr))


@dataclass(frozen=True)
class PtxCse(KernelPass):
    """Replace a pure instruction recomputing an available value by a copy of it."""

    name: ClassVar[str] = "ptx-cse"

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        return eliminate_common_subexpressions(kernel)
