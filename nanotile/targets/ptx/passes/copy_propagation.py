"""ptx-copy-propagation: replace reads of a copied register by its source.  ptx-sm90 -> ptx-sm90

The back end copies values between registers a lot (``mov.u32 %r11, %r1`` for every
slot of a re-used index tile, ``mov.f32 %f130, %f1`` for loop-carried accumulators). For
an unguarded ``mov.T %d, %s`` between registers of the same declared class, every later
read of ``%d`` that only the copy can reach becomes a read of ``%s``; the ``mov`` itself
then usually dies (ptx-dead-code removes it).

Why it is correct: a forward "available copies" analysis (flow.forward) over the basic
blocks records the copy ``d = s`` after the ``mov`` and forgets it as soon as ``%d`` or
``%s`` may be written again (a guarded write counts: it may happen), and at a join keeps
only the copies available on every incoming path (the greatest fixed point, so a copy made
before a loop survives the back edge only if the loop writes neither register). Where a
read of ``%d`` sees the copy, ``%d`` and ``%s`` hold the same bits, and both registers
have the same declared type, so the instruction means the same. Destinations are never
renamed (an instruction that accumulates in place keeps its register).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir import Instr, PtxKernel, defs, replace_uses
from .flow import is_register_operand, reg_prefix, rewrite_kernel
from .kernel_pass import KernelPass


def register_copy(kernel: PtxKernel, instr: Instr) -> tuple[str, str] | None:
    """(destination, source) of an unguarded ``mov`` between two registers of one declared
    class, else None."""
    if instr.root != "mov" or instr.pred is not None or len(instr.operands) != 2:
        return None
    d, s = instr.operands
    if not (is_register_operand(d) and is_register_operand(s)) or d == s:
        return None
    pd, ps = reg_prefix(d), reg_prefix(s)
    if pd != ps or pd not in kernel.reg_types:
        return None
    return d, s


def _step(kernel: PtxKernel):
    def step(facts: dict, instr: Instr) -> None:
        facts.kill(defs(instr))
        copy = register_copy(kernel, instr)
        if copy:
            facts.set(copy[0], copy[1], copy)
    return step


def propagate_copies(kernel: PtxKernel) -> bool:
    def rewrite(facts, instr: Instr) -> bool:
        return bool(facts) and replace_uses(instr, facts.map)

    return rewrite_kernel(kernel, rewrite, _step(kernel))


@dataclass(frozen=True)
class PtxCopyPropagation(KernelPass):
    """Read the source of a register copy instead of the copy (available-copies analysis)."""

    name: ClassVar[str] = "ptx-copy-propagation"

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        return propagate_copies(kernel)
