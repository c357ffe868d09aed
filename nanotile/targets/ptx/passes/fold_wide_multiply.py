"""ptx-fold-wide-multiply: widen-then-multiply as one .wide multiply.  ptx-sm90 -> ptx-sm90

Address arithmetic in the back end widens a 32-bit index and multiplies in 64 bits:
``cvt.s64.s32 %rd4, %r28; mad.lo.s64 %rd12, %rd4, 4, %rd1``. PTX has that in one
instruction: ``mad.wide.s32 %rd12, %r28, 4, %rd1`` (likewise ``mul.lo.s64`` ->
``mul.wide.s32``, and ``cvt.u64.u32`` -> ``.wide.u32``). The ``cvt`` then usually dies.

Rewritten: ``mul.lo.s64 d, a, b`` and ``mad.lo.s64 d, a, b, c`` (also ``.u64``) where each
of ``a`` and ``b`` is either a register known to be ``cvt.s64.s32`` of a 32-bit register
(``cvt.u64.u32`` for the unsigned form; both factors must be widened the same way) or an
integer literal that fits the 32-bit type.

Why it is correct: ``mul.wide.s32`` (ISA: "the full 64-bit result") multiplies the two
sign-extended 32-bit values exactly: |a*b| <= 2^62, no wrap. ``mul.lo.s64`` of the
sign-extended values gives the low 64 bits of the same exact product, i.e. the same
number; adding ``c`` modulo 2^64 is the same in both. The same holds with zero extension
for ``.u32``. The facts "``%rd4`` = sext(``%r28``)" come from a forward analysis
(flow.forward) that forgets them when either register may be written again, and keeps
only facts holding on every path into a block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir import Instr, PtxKernel, defs
from .flow import is_register_operand, rewrite_kernel
from .kernel_pass import KernelPass
from .simplify_arith import parse_int

_WIDEN = {"cvt.s64.s32": "s32", "cvt.u64.u32": "u32"}
_RANGE = {"s32": (-(1 << 31), (1 << 31) - 1), "u32": (0, (1 << 32) - 1)}


def step(facts: dict, instr: Instr) -> None:
    facts.kill(defs(instr))
    kind = _WIDEN.get(instr.opcode)
    if kind and instr.pred is None and len(instr.operands) == 2 \
            and all(is_register_operand(o) for o in instr.operands) \
            and instr.operands[0] != instr.operands[1]:
        facts.set(instr.operands[0], (kind, instr.operands[1]), instr.operands)


def _narrow(facts: dict, operand: str, kind: str) -> str | None:
    fact = facts.get(operand)
    if fact is not None:
        return fact[1] if fact[0] == kind else None
    value = parse_int(operand)
    if value is not None:
        lo, hi = _RANGE[kind]
        return str(value) if lo <= value <= hi else None
    return None


def rewrite(facts: dict, instr: Instr) -> Instr | None:
    if instr.opcode not in ("mul.lo.s64", "mul.lo.u64", "mad.lo.s64", "mad.lo.u64"):
        return None
    n = 3 if instr.root == "mul" else 4
    if len(instr.operands) != n:
        return None
    for kind in ("s32", "u32"):
        a = _narrow(facts, instr.operands[1], kind)
        b = _narrow(facts, instr.operands[2], kind)
        if a is None or b is None or (parse_int(a) is not None and parse_int(b) is not None):
            continue
        return Instr(f"{instr.root}.wide.{kind}", [instr.operands[0], a, b, *instr.operands[3:]],
                     instr.pred)
    return None


def fold_wide(kernel: PtxKernel) -> bool:
    def replace(facts, instr: Instr) -> bool:
        new = rewrite(facts, instr) if facts else None
        if new is None:
            return False
        instr.opcode, instr.operands, instr.pred = new.opcode, new.operands, new.pred
        return True

    return rewrite_kernel(kernel, replace, step)


@dataclass(frozen=True)
class PtxFoldWideMultiply(KernelPass):
    """cvt.s64.s32 + mul/mad.lo.s64 -> mul/mad.wide.s32 (and the unsigned form)."""

    name: ClassVar[str] = "ptx-fold-wide-multiply"

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        return fold_wide(kernel)
