"""ptx-fold-address-offsets: put constant offsets into addresses.  ptx-sm90 -> ptx-sm90

``add.s64 %rd7, %rd3, 16`` followed by ``ld.global.f32 %f1, [%rd7]`` (or ``[%rd7+4]``)
reads ``[%rd3+16]`` (``[%rd3+20]``); PTX addresses take a register plus a signed 32-bit
immediate offset for free, so the load reads the base register directly and the ``add``
usually dies. The same goes for 32-bit shared-memory addresses (``add.s32``/``add.u32``)
and for chains of adds of constants (``add %c, %a, 8`` after ``add %a, %b, 4`` becomes
``add %c, %b, 12``). ``[%r5+0]`` is written ``[%r5]``, a negative offset ``[%r5+-4]``
(PTX has no ``[%r5-4]``). Scaled indices too: the back end addresses slot k of a tile in
shared memory as ``mad.lo.s32 %a, %i, 4, %base`` with ``%i = %tid + 128k``; given
``%a0 = %tid * 4 + %base`` already, ``%a`` becomes ``add.s32 %a, %a0, 512k`` (and then
folds into the addresses that use it).

Why it is correct: a forward analysis (flow.forward) records ``%a = %b + k`` after an
unguarded ``add``/``sub`` of an integer literal and forgets it when ``%a`` or ``%b`` may be
written again; at joins only facts holding on every path survive. Where it holds,
``%b + (k + j)`` is the same N-bit sum (modulo 2^N, N the register's width) as ``%a + j``,
which is the address the instruction used. For the scaled form, ``mad.lo`` keeps the low
N bits: ``(y + K)*m + c = (y*m + c) + K*m`` modulo 2^N, and ``y*m + c`` is the value the
earlier ``mad.lo`` (same opcode, same ``y``, ``m``, ``c``) left in its destination; that
fact is dropped when any of those registers may be written. Offsets are only folded
while the total fits PTX's signed 32-bit address offset; otherwise the instruction is
left as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from ..ir import Instr, PtxKernel, defs
from .flow import is_register_operand, rewrite_kernel
from .kernel_pass import KernelPass
from .simplify_arith import parse_int

_ADD = re.compile(r"(add|sub)\.([su])(32|64)")
_ADDRESS = re.compile(r"\[\s*(%[A-Za-z_$][\w$]*)\s*(?:\+\s*(-?\w+))?\s*\]")
_LIMIT = 1 << 31


def _offset_fact(instr: Instr) -> tuple[str, str, int, int] | None:
    """``(a, b, k, bits)`` for an unguarded ``add a, b, k`` / ``sub a, b, k``."""
    m = _ADD.fullmatch(instr.opcode)
    if not m or instr.pred is not None or len(instr.operands) != 3:
        return None
    a, b, k = instr.operands
    value = parse_int(k)
    if value is None or not is_register_operand(a) or not is_register_operand(b) or a == b:
        return None
    return a, b, (-value if m.group(1) == "sub" else value), int(m.group(3))


_MAD = re.compile(r"mad\.lo\.([su])(32|64)")


def _scaled(instr: Instr) -> tuple[str, str, int, str, int] | None:
    """``(d, x, m, c, bits)`` for an unguarded ``mad.lo d, x, m, c`` with a literal m."""
    mm = _MAD.fullmatch(instr.opcode)
    if not mm or instr.pred is not None or len(instr.operands) != 4:
        return None
    d, x, m, c = instr.operands
    value = parse_int(m)
    if value is None or not is_register_operand(d) or not is_register_operand(x) \
            or d in (x, c):
        return None
    return d, x, value, c, int(mm.group(2))


def step(facts: dict, instr: Instr) -> None:
    facts.kill(defs(instr))
    fact = _offset_fact(instr)
    if fact:
        facts.set(fact[0], (fact[1], fact[2], fact[3]), fact[:2])
    scaled = _scaled(instr)
    if scaled:
        d, x, m, c, _bits = scaled
        facts.set(("mad", instr.opcode, x, m, c), d, [d, x, c])


def _fold_address(facts: dict, operand: str) -> str:
    m = _ADDRESS.fullmatch(operand.strip())
    if not m:
        return operand
    reg, off = m.group(1), m.group(2)
    j = 0
    if off is not None:
        j = parse_int(off)
        if j is None:
            return operand  # [reg+symbol]: leave it
    fact = facts.get(reg)
    if fact is not None and -_LIMIT <= fact[1] + j < _LIMIT:
        reg, j = fact[0], fact[1] + j
    if j == 0:
        return f"[{reg}]"
    return f"[{reg}+{j}]"  # PTX writes a negative offset [%rd1+-4]


def rewrite(facts: dict, instr: Instr) -> bool:
    changed = False
    fact = _offset_fact(instr)
    if fact is not None and fact[1] in facts:
        base, k, bits = facts.get(fact[1])
        total = (fact[2] + k) % (1 << bits)
        if total >= 1 << (bits - 1):
            total -= 1 << bits
        instr.opcode = f"add.{instr.opcode.split('.')[1]}"
        instr.operands = (instr.operands[0], base, str(total))
        return True
    scaled = _scaled(instr)
    if scaled is not None and scaled[1] in facts:
        # x = y + K and e = y*m + c is available: d = x*m + c = e + K*m (mod 2^N)
        _d, x, m, c, bits = scaled
        y, k, fact_bits = facts.get(x)
        e = facts.get(("mad", instr.opcode, y, m, c))
        if e is not None and fact_bits == bits:
            total = (k * m) % (1 << bits)
            if total >= 1 << (bits - 1):
                total -= 1 << bits
            instr.opcode = f"add.{instr.opcode.split('.')[2]}"
            instr.operands = (instr.operands[0], e, str(total))
            return True
    for i, op in enumerate(instr.operands):
        if op.startswith("["):
            new = _fold_address(facts, op)
            if new != op:
                instr.with_operand(i, new)
                changed = True
    return changed


def fold_offsets(kernel: PtxKernel) -> bool:
    return rewrite_kernel(kernel, rewrite, step)


@dataclass(frozen=True)
class PtxFoldAddressOffsets(KernelPass):
    """[%a] after add %a, %b, k -> [%b+k]; add chains of constants reassociated."""

    name: ClassVar[str] = "ptx-fold-address-offsets"

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        return fold_offsets(kernel)
