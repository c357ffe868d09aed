"""ptx-simplify-arith: integer identities and constant folding.  ptx-sm90 -> ptx-sm90

Once ptx-fold-immediates has put constants into operands, the back end's index arithmetic
holds many trivial instructions: ``mad.lo.s32 %r12, 0, 4, %r11`` (slot 0 of a shared
buffer), ``add.s32 %r5, %r4, 0``, ``mul.lo.s32 %r7, %r6, 1``, or all-constant ones such as
``mul.lo.s32 %r9, 3, 128``. They become a ``mov`` of the surviving operand or of the
folded constant, which copy propagation, constant folding and dead code then remove.

Rules, for integer instructions only (``.b``/``.s``/``.u`` 16/32/64; floating point is
left alone: ``x + 0.0`` is not ``x`` for ``x = -0.0``, and flush-to-zero or NaN
canonicalisation would change bits):

* ``add x, 0`` / ``add 0, x`` / ``sub x, 0`` / ``or x, 0`` / ``xor x, 0`` / ``shl x, 0`` /
  ``shr x, 0`` / ``mul.lo x, 1`` -> ``mov x``;
* ``mul.lo x, 0`` / ``and x, 0`` -> ``mov 0``;
* ``mad.lo a, b, c`` with ``a`` or ``b`` zero -> ``mov c``; with ``a`` (or ``b``) one ->
  ``add b, c`` (or ``add a, c``);
* every source a literal: add, sub, mul.lo, mad.lo, and, or, xor, shl, shr -> ``mov`` of
  the result computed modulo 2^N (shr.s shifts arithmetically; shifts by N or more give 0
  or the sign, as the PTX ISA defines: "shift amounts greater than the register width N
  are clamped to N").

Why it is correct: each rewrite is an identity of N-bit two's-complement arithmetic
(``.lo`` keeps the low N bits of products, which is multiplication modulo 2^N), the guard
of the instruction is kept, and the ``mov`` writes the same N bits to the same register.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

from ..ir import Instr, PtxKernel
from .kernel_pass import KernelPass

_INT_TYPE = re.compile(r"([bsu])(16|32|64)")


@lru_cache(maxsize=1 << 18)
def parse_int(text: str) -> int | None:
    """The value of a PTX integer literal (decimal, 0x hex, 0b binary, 0 octal), or None."""
    t = text.strip()
    neg = t.startswith("-")
    if neg:
        t = t[1:]
    t = t.rstrip("uU")
    try:
        if _HEX.fullmatch(t):
            v = int(t, 16)
        elif _BINARY.fullmatch(t):
            v = int(t, 0)
        elif _OCTAL.fullmatch(t):
            v = int(t, 8)
        elif _DECIMAL.fullmatch(t):
            v = int(t)
        else:
            return None
    except ValueError:
        return None
    return -v if neg else v


_HEX = re.compile(r"0[xX][0-9a-fA-F]+")
_BINARY = re.compile(r"0[bB][01]+")
_OCTAL = re.compile(r"0[0-7]+")
_DECIMAL = re.compile(r"[0-9]+")


def _type(instr: Instr) -> tuple[str, int] | None:
    m = _INT_TYPE.fullmatch(instr.opcode.rsplit(".", 1)[-1])
    return (m.group(1), int(m.group(2))) if m else None


def _fold(root: str, kind: str, bits: int, vals: list[int]) -> int | None:
    mask = (1 << bits) - 1
    v = [x & mask for x in vals]
    if root == "add":
        r = v[0] + v[1]
    elif root == "sub":
        r = v[0] - v[1]
    elif root == "mul":
        r = v[0] * v[1]
    elif root == "mad":
        r = v[0] * v[1] + v[2]
    elif root == "and":
        r = v[0] & v[1]
    elif root == "or":
        r = v[0] | v[1]
    elif root == "xor":
        r = v[0] ^ v[1]
    elif root == "shl":
        r = v[0] << min(v[1] & 0xFFFFFFFF, bits)
    elif root == "shr":
        n = min(v[1] & 0xFFFFFFFF, bits)
        if kind == "s":
            signed = v[0] - (1 << bits) if v[0] >> (bits - 1) else v[0]
            r = signed >> n
        else:
            r = v[0] >> n
    else:
        return None
    return r & mask


def simplify(instr: Instr) -> Instr | None:
    """The simpler instruction, or None."""
    if instr.root not in ("add", "sub", "mul", "mad", "and", "or", "xor", "shl", "shr"):
        return None
    ty = _type(instr)
    if ty is None:
        return None
    kind, bits = ty
    mods = instr.opcode.split(".")[1:-1]
    if instr.root in ("mul", "mad") and mods != ["lo"]:
        return None  # .hi / .wide / saturating forms are left alone
    if instr.root in ("add", "sub") and mods:
        return None  # .sat / .cc carry forms
    if instr.root in ("add", "sub", "and", "or", "xor", "shl", "shr", "mul") and \
            len(instr.operands) != 3:
        return None
    if instr.root == "mad" and len(instr.operands) != 4:
        return None
    d, *srcs = instr.operands
    vals = [parse_int(s) for s in srcs]
    mov = f"mov.b{bits}"

    def to(src: str) -> Instr:
        return Instr(mov, [d, src], instr.pred)

    if all(v is not None for v in vals):
        r = _fold(instr.root, kind, bits, vals)  # type: ignore[arg-type]
        if r is not None:
            return to(str(r))
    a, b = vals[0], vals[1]
    root = instr.root
    if root in ("add", "or", "xor") and b == 0:
        return to(srcs[0])
    if root in ("add", "or", "xor") and a == 0:
        return to(srcs[1])
    if root in ("sub", "shl", "shr") and b == 0:
        return to(srcs[0])
    if root == "mul" and b == 1:
        return to(srcs[0])
    if root == "mul" and a == 1:
        return to(srcs[1])
    if root in ("mul", "and") and (a == 0 or b == 0):
        return to("0")
    if root == "mad":
        if a == 0 or b == 0:
            return to(srcs[2])
        if a == 1:
            return Instr(f"add.{kind}{bits}", [d, srcs[1], srcs[2]], instr.pred)
        if b == 1:
            return Instr(f"add.{kind}{bits}", [d, srcs[0], srcs[2]], instr.pred)
    return None


def simplify_kernel(kernel: PtxKernel) -> bool:
    changed = False
    for i, item in enumerate(kernel.body):
        if isinstance(item, Instr):
            new = simplify(item)
            if new is not None and new != item:
                kernel.body[i] = new
                changed = True
    return changed


@dataclass(frozen=True)
class PtxSimplifyArith(KernelPass):
    """Integer identities (x+0, x*1, 0*x+c ...) and constant folding of integer instructions."""

    name: ClassVar[str] = "ptx-simplify-arith"

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        return simplify_kernel(kernel)
