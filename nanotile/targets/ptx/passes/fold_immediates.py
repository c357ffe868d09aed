"""ptx-fold-immediates: read constants as immediates.  ptx-sm90 -> ptx-sm90

The back end materialises many constants in registers (``mov.b32 %r26, 1024`` then
``mul.lo.s32 %r27, %r8, %r26``; ``mov.f32 %f1, 0f00000000`` then ``mov.f32 %f2, %f1``).
PTX takes immediate source operands in most arithmetic, logic, comparison and move
instructions, so the read becomes ``mul.lo.s32 %r27, %r8, 1024`` and the ``mov`` usually
dies (ptx-dead-code). Identical constant computations then also become identical
instructions for ptx-cse.

Where an immediate goes (PTX ISA 8.x, "Operand Types", and each instruction's syntax):
only a source operand that is exactly one register (never the destination, a guard, an
address ``[...]`` or a vector ``{...}``), of an instruction whose root is in ``TAKES_IMM``
and whose type (the last opcode modifier) fits the literal: an integer literal in an
integer/bit-typed instruction (``.b32``/``.u32``/``.s64``...), a ``0f`` literal in an
``.f32`` one, a ``0d`` literal in an ``.f64`` one. Never in 16-bit floating-point
instructions (PTX has no f16 immediates) or conversions. ``selp``'s last operand is a
predicate and is never a literal; shift amounts are ``.u32`` whatever the instruction's
type, so an integer literal is fine there too.

Why it is correct: a forward "available constants" analysis (flow.forward) records
``%d = literal`` after an unguarded ``mov`` of a literal, forgets it when ``%d`` may be
written again, and keeps at a join only what holds on every path (loops included). The
literal is the exact bit pattern the register held, read with the instruction's own type.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

from ..ir import Instr, PtxKernel, defs, has_dest
from .flow import is_register_operand, rewrite_kernel
from .kernel_pass import KernelPass

TAKES_IMM = frozenset([
    "add", "sub", "mul", "mad", "mul24", "mad24", "min", "max", "and", "or", "xor", "shl",
    "shr", "setp", "selp", "div", "rem", "fma", "mov"
])
_INT = re.compile(r"-?(0[xX][0-9a-fA-F]+|[0-9]+)[uU]?")
_F32 = re.compile(r"0[fF][0-9a-fA-F]{8}")
_F64 = re.compile(r"0[dD][0-9a-fA-F]{16}")
_INT_TYPES = re.compile(r"[bsu](16|32|64)")


@lru_cache(maxsize=1 << 18)
def literal_kind(text: str) -> str | None:
    if _INT.fullmatch(text):
        return "int"
    if _F32.fullmatch(text):
        return "f32"
    if _F64.fullmatch(text):
        return "f64"
    return None


def instr_type(instr: Instr) -> str:
    return instr.opcode.rsplit(".", 1)[-1] if "." in instr.opcode else ""


def accepts(instr: Instr, kind: str) -> bool:
    """Whether ``instr`` may take a literal of ``kind`` in place of a register source."""
    if instr.root not in TAKES_IMM:
        return False
    ty = instr_type(instr)
    if kind == "int":
        return bool(_INT_TYPES.fullmatch(ty))
    return ty == kind


def _constant(instr: Instr) -> tuple[str, str] | None:
    if instr.root != "mov" or instr.pred is not None or len(instr.operands) != 2:
        return None
    d, lit = instr.operands
    if not is_register_operand(d) or literal_kind(lit) is None:
        return None
    ty = instr_type(instr)
    if not (_INT_TYPES.fullmatch(ty) or ty in ("f32", "f64")):
        return None
    return d, lit


def step(facts: dict, instr: Instr) -> None:
    facts.kill(defs(instr))
    const = _constant(instr)
    if const:
        facts.set(const[0], const[1], [const[0]])


def rewrite(facts, instr: Instr) -> bool:
    changed = False
    if facts and instr.root in TAKES_IMM and has_dest(instr):
        last = len(instr.operands) - (1 if instr.root == "selp" else 0)
        for k in range(1, last):
            op = instr.operands[k]
            lit = facts.get(op) if is_register_operand(op) else None
            if lit is not None and accepts(instr, literal_kind(lit)):
                instr.with_operand(k, lit)
                changed = True
    return changed


def fold_immediates(kernel: PtxKernel) -> bool:
    return rewrite_kernel(kernel, rewrite, step)


@dataclass(frozen=True)
class PtxFoldImmediates(KernelPass):
    """Replace register sources known to hold a constant by the constant (immediate)."""

    name: ClassVar[str] = "ptx-fold-immediates"

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        return fold_immediates(kernel)
