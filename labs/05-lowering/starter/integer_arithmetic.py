"""Lab 5: instruction selection for Tile IR's integer arithmetic (your code).

``RULES`` maps an op name to the rule that lowers one register of that op to PTX. The
grader puts your rule in place of nanotile's own lowering for that op (through the
target's ``elementwise`` hook, nanotile/targets/target.py SELECT_HOOKS), compiles small
kernels with the real pipeline, runs the PTX in the emulator and compares the results
with the interpreter bit for bit. ``nanotile lab check 5`` grades this file.

A rule is called once per register of the op's result (or once for a whole tile whose
registers are all the same value):

    rule(lw, op, ins, out)

* ``lw``   the selection state (nanotile/targets/ptx/select_instructions.py ``Selection``);
           you only need ``lw.fn``, the kernel builder (nanotile/targets/ptx/builder.py):
           ``lw.fn.reg("b32")`` a fresh register of a class (pred, b32, b64, ...),
           ``lw.fn.emit("add.s32 %r3, %r1, %r2")`` one instruction (no ``;``),
           ``lw.fn.emit("add.s32 %r3, %r3, 1", pred="%p1")`` one guarded by a predicate;
* ``op``   the simt operation (nanotile/ir/core.py ``Operation``): ``op.name``,
           ``op.attributes`` (``signedness``, ``rounding``), ``op.operands[i].type``;
* ``ins``  the registers of its operands (strings such as ``"%r5"``), in order;
* ``out``  the register your instructions must leave the result in.

Registers (builder.reg_class): i8, i16 and i32 live in 32-bit ``%r`` registers, i64 in
64-bit ``%rd`` registers. An i8 or i16 value is kept *sign-extended* to 32 bits: every
register holding an i8 holds a number in -128..127. Your rules may rely on that for their
operands and must keep it for their result (other rules rely on it: ``exti`` to i32 is a
plain ``mov``).

Write the PTX yourself: the grader refuses a file that imports nanotile's own lowering
(select_arith, select_math). Helpers of your own are welcome.
"""

from __future__ import annotations

from nanotile.ir.enums import RoundingMode, Signedness
from nanotile.ir.types import ElementType

# ---- helpers (given) --------------------------------------------------------------------

def element_type(op) -> ElementType:
    """The element type of the op's first operand (``i8``, ``i16``, ``i32`` or ``i64``)."""
    return op.operands[0].type.element


def is_signed(op) -> bool:
    """Whether the op reads its operands as signed numbers (its ``signedness``)."""
    return op.attributes.get("signedness", Signedness.signed) == Signedness.signed


def rounding(op) -> RoundingMode:
    """How divi rounds its quotient: zero (truncate), negative_inf (floor) or
    positive_inf (ceiling)."""
    return op.attributes.get("rounding", RoundingMode.zero)


def register_bits(t: ElementType) -> int:
    """The width of the register holding a ``t``: 64 for i64, 32 for everything smaller."""
    return 64 if t.bitwidth == 64 else 32


# ---- step 1: wrap-around arithmetic -------------------------------------------------------

def lower_addi(lw, op, ins: list[str], out: str) -> None:
    """addi: the sum, wrapped around to the element type (a worked example).

    TODO (step 2): right for i32 and i64, not yet for i8 and i16: 127 + 1 must give -128,
    but the 32-bit register now holds 128. Restore the sign-extension invariant."""
    bits = register_bits(element_type(op))
    lw.fn.emit(f"add.s{bits} {out}, {ins[0]}, {ins[1]}")


def lower_subi(lw, op, ins: list[str], out: str) -> None:
    """subi: ``ins[0] - ins[1]``, wrapped around to the element type."""
    raise NotImplementedError("subi: step 2 of the handout")


def lower_muli(lw, op, ins: list[str], out: str) -> None:
    """muli: the low half of the product (the product wrapped to the element type)."""
    raise NotImplementedError("muli: step 2 of the handout")


# ---- step 3: shifts -----------------------------------------------------------------------

def lower_shli(lw, op, ins: list[str], out: str) -> None:
    """shli: ``ins[0] << ins[1]``; a shift by the bit width or more gives 0."""
    raise NotImplementedError("shli: step 3 of the handout")


def lower_shri(lw, op, ins: list[str], out: str) -> None:
    """shri: ``ins[0] >> ins[1]``, arithmetic (signed: copies of the sign bit come in) or
    logical (unsigned: zeros come in, also for a negative i8 read as 128..255)."""
    raise NotImplementedError("shri: step 3 of the handout")


# ---- step 4: min and max ------------------------------------------------------------------

def lower_maxi(lw, op, ins: list[str], out: str) -> None:
    """maxi: the larger operand, compared signed or unsigned."""
    raise NotImplementedError("maxi: step 4 of the handout")


def lower_mini(lw, op, ins: list[str], out: str) -> None:
    """mini: the smaller operand, compared signed or unsigned."""
    raise NotImplementedError("mini: step 4 of the handout")


# ---- step 5: division -----------------------------------------------------------------------

def lower_divi(lw, op, ins: list[str], out: str) -> None:
    """divi: the quotient ``ins[0] / ins[1]``, signed or unsigned, rounded as
    ``rounding(op)`` says (PTX's div truncates towards zero)."""
    raise NotImplementedError("divi: step 5 of the handout")


def lower_remi(lw, op, ins: list[str], out: str) -> None:
    """remi: the remainder of the truncated division (the sign of the dividend)."""
    raise NotImplementedError("remi: step 5 of the handout")


RULES = {
    "addi": lower_addi, "subi": lower_subi, "muli": lower_muli,
    "shli": lower_shli, "shri": lower_shri,
    "maxi": lower_maxi, "mini": lower_mini,
    "divi": lower_divi, "remi": lower_remi,
}
