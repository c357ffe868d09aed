"""ptx-strength-reduce: an address as an earlier one plus k * stride.  ptx-sm90 -> ptx-sm90

The registers a thread holds of a tile sit at coordinates that differ by constants, so
their addresses differ by constants times the strides. Register k of a column read with
a dynamic row stride ``%s`` (``%s`` the stride widened to 64 bits) is computed from
scratch, four instructions a register:

    add.s64    %v, %row, k          // the coordinate (lower-views: 64-bit)
    mul.lo.s64 %d, %v, %s           // times the stride
    add.s64    %e, %d, %col         // plus the other dimension's part
    mad.lo.s64 %a, %e, 2, %base     // times the element size, onto the base

while register 0's address ``%a0`` is the same with k = 0, so ``%a = %a0 + 2k*%s``. This
pass writes ``mad.lo.s64 %d, %s, k, %d0``, then ``mad.lo.s64 %e, %s, k, %e0`` and
``mad.lo.s64 %a, %s, 2k, %a0``: each instruction reads an earlier register of the same
kind instead of the one before it in the chain, so only the last survives ptx-dead-code,
one instruction a register (ptx-fold-wide-multiply then makes it ``mad.wide.s32`` of the
32-bit stride). A difference of a constant alone becomes ``add %d, %d0, c``.

How: value numbering modulo a linear offset. Every integer register written once in the
kernel (a register written again, a loop-carried one, takes part in nothing), by an
unguarded ``add``, ``sub``, ``mul.lo``, ``mad.lo``, ``shl`` by a literal or ``mov``, gets a
form ``(key, offset)``: its value is the key's value plus the offset, a sum of integer
coefficients times 1 or times registers. The key is a number standing for an expression of
other keys (``key(a) + key(b)``, ``key(a) * 3``, ``key(a) * key(b)``...); a register of any
other instruction is a key of its own. ``(v + c) * s`` has the key of ``v * s`` and the
offset ``c*s`` when ``s`` has no offset of its own; products that would make an offset of
degree two give the result a key of its own. Walking the blocks along the dominator tree,
a table holds the registers already defined on every path here by key; an instruction
whose form differs from such a register's by one term is rewritten as above (``mad.lo``
when the term is ``c * %m`` and ``%m``'s one definition comes before this instruction on
every path), unless it reads a register of its own key already (``add %d, %x, 1``: one
instruction either way). A register's operands take part only where their definitions
come before it on every path.

Why it is correct: add, sub, mul.lo, mad.lo and shl compute in the integers modulo 2^N (N
the instruction's width; ``.lo`` keeps the low N bits) and each rule above is a ring
identity there, so a form's value is the register's value, bit for bit, for every input.
A register written once holds that value from its definition on, so the earlier register
(defined before, on every path: an earlier instruction of a dominating block) and ``%m``
hold at the rewritten instruction the values the forms say, and the new instruction writes
the same value as the old.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import ClassVar

from ..ir import Instr, PtxKernel
from .flow import Cfg, immediate_dominators, is_register_operand, kernel_cfg
from .kernel_pass import KernelPass
from .simplify_arith import parse_int

_RING_ROOTS = frozenset({"add", "sub", "mul", "mad", "shl", "mov"})
_RING = re.compile(r"(add|sub|mul\.lo|mad\.lo)\.[su](32|64)|shl\.b(32|64)|mov\.[bsu](32|64)")
CONSTANT = 0  # the key of the value zero: a literal c is (CONSTANT, {ONE: c})
ONE = ""      # the term of an offset that is a plain number


class Form:
    """A value as ``key``'s value plus ``offset`` (term -> coefficient, modulo 2^bits; the
    term ONE or a register written once), in ``bits``-bit arithmetic."""

    __slots__ = ("bits", "key", "offset")

    def __init__(self, key: int, offset: tuple[tuple[str, int], ...], bits: int) -> None:
        self.key, self.offset, self.bits = key, offset, bits

    def terms(self) -> dict[str, int]:
        return dict(self.offset)


def _form(key: int, terms: dict[str, int], bits: int) -> Form:
    mask = (1 << bits) - 1
    offset = [(t, c & mask) for t, c in terms.items() if c & mask]
    return Form(key, tuple(sorted(offset)) if len(offset) > 1 else tuple(offset), bits)


@lru_cache(maxsize=1 << 10)
def _ring_bits(opcode: str) -> int | None:
    """The width of a ring instruction (add, sub, mul.lo, mad.lo, shl, mov of integers)."""
    match = _RING.fullmatch(opcode)
    return None if match is None else int(next(g for g in match.groups()[1:] if g))


class Numbering:
    """The forms of one kernel's registers, and the keys they are built of. A register
    has a form only where its one definition is known to have run (``defined``)."""

    def __init__(self, written_once: set[str], defined) -> None:
        self.written_once = written_once
        self.defined = defined  # (register, block, index) -> its definition ran before
        self.keys: dict[tuple, int] = {}
        self.forms: dict[str, Form] = {}

    def key(self, *expression) -> int:
        return self.keys.setdefault(expression, len(self.keys) + 1)

    def operand(self, text: str, bits: int, b: int, i: int) -> Form | None:
        """The form of an operand of instruction ``i`` of block ``b``: a literal, or a
        register written once, before."""
        value = parse_int(text)
        if value is not None:
            return _form(CONSTANT, {ONE: value}, bits)
        if not is_register_operand(text) or text not in self.written_once or \
                not self.defined(text, b, i):
            return None
        form = self.forms.get(text)
        if form is None:
            form = self.forms[text] = Form(self.key("register", text), (), bits)
        return form if form.bits == bits else None

    def define(self, instr: Instr, b: int, i: int) -> Form | None:
        """The form of the register ``instr`` (instruction ``i`` of block ``b``) writes
        (None: it has none)."""
        if instr.root not in _RING_ROOTS or instr.pred is not None or not instr.operands \
                or instr.operands[0] not in self.written_once:
            return None
        bits = _ring_bits(instr.opcode)
        if bits is None:
            return None
        sources = [self.operand(o, bits, b, i) for o in instr.operands[1:]]
        if None in sources:
            return None
        form = self._combine(instr.root, instr.operands[1:], sources, bits)
        if form is not None:
            self.forms[instr.operands[0]] = form
        return form

    def _combine(self, root: str, operands, sources: list[Form], bits: int) -> Form | None:
        if root == "mov" and len(sources) == 1:
            return sources[0]
        if root == "add" and len(sources) == 2:
            return self.add(*sources)
        if root == "sub" and len(sources) == 2:
            return self.add(sources[0], self.scale(sources[1], -1))
        if root == "mul" and len(sources) == 2:
            return self.multiply(operands[0], sources[0], operands[1], sources[1])
        if root == "mad" and len(sources) == 3:
            product = self.multiply(operands[0], sources[0], operands[1], sources[1])
            return None if product is None else self.add(product, sources[2])
        if root == "shl" and len(sources) == 2:
            shift = _constant(sources[1])
            if shift is not None and 0 <= shift < bits:
                return self.scale(sources[0], 1 << shift)
        return None

    def add(self, a: Form, b: Form) -> Form:
        terms = a.terms()
        for t, c in b.offset:
            terms[t] = terms.get(t, 0) + c
        if CONSTANT in (a.key, b.key):
            return _form(a.key if b.key == CONSTANT else b.key, terms, a.bits)
        return _form(self.key("+", *sorted((a.key, b.key))), terms, a.bits)

    def scale(self, a: Form, factor: int) -> Form:
        factor &= (1 << a.bits) - 1
        terms = {t: c * factor for t, c in a.offset}
        if a.key == CONSTANT or factor == 0:
            return _form(CONSTANT, terms, a.bits)
        return _form(self.key("*", a.key, factor), terms, a.bits)

    def multiply(self, x: str, a: Form, y: str, b: Form) -> Form | None:
        """The form of ``x * y`` (operands as written, with their forms ``a``, ``b``)."""
        if _constant(b) is not None:
            return self.scale(a, _constant(b))
        if _constant(a) is not None:
            return self.scale(b, _constant(a))
        # (V + c) * m = V*m + c*m where the register m has no offset: c*m is an offset
        for v, m, register in ((a, b, y), (b, a, x)):
            if not m.offset and set(v.terms()) <= {ONE}:
                key = self.key("*", *sorted((v.key, m.key)))
                return _form(key, {register: c for _, c in v.offset}, a.bits)
        return None


def _constant(form: Form) -> int | None:
    if form.key != CONSTANT:
        return None
    return dict(form.offset).get(ONE, 0)


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >= 1 << (bits - 1) else value


class Reducer:
    """The rewrite of one kernel: blocks along the dominator tree, a table of the forms
    available on every path to the current instruction."""

    def __init__(self, kernel: PtxKernel, cfg: Cfg) -> None:
        self.body, self.cfg = kernel.body, cfg
        counts: dict[str, int] = {}
        self.where: dict[str, tuple[int, int]] = {}  # register -> (block, body index)
        for b, block in enumerate(cfg.blocks):
            for i in range(block.start, block.end):
                item = self.body[i]
                if isinstance(item, Instr):
                    for reg in item.written:
                        counts[reg] = counts.get(reg, 0) + 1
                        self.where[reg] = (b, i)
        self.numbering = Numbering({r for r, n in counts.items() if n == 1}, self.available)
        self.idom = immediate_dominators(cfg)
        self.by_key: dict[int, list[tuple[str, dict[str, int]]]] = {}
        self.changed = False

    def run(self) -> bool:
        children: dict[int, list[int]] = {}
        for b, parent in enumerate(self.idom):
            if parent is not None and parent != b:
                children.setdefault(parent, []).append(b)
        stack: list[tuple[int, list[int] | None]] = [(0, None)]
        while stack:
            block, added = stack.pop()
            if added is not None:  # leaving the block: its registers are no longer available
                for key in added:
                    self.by_key[key].pop()
                continue
            added = self.visit(block)
            stack.append((block, added))
            stack.extend((child, None) for child in reversed(children.get(block, [])))
        return self.changed

    def visit(self, b: int) -> list[int]:
        added = []
        block = self.cfg.blocks[b]
        for i in range(block.start, block.end):
            instr = self.body[i]
            if not isinstance(instr, Instr):
                continue
            form = self.numbering.define(instr, b, i)
            if form is None or form.key == CONSTANT:
                continue
            self.rewrite(instr, form, b, i)
            self.by_key.setdefault(form.key, []).append((instr.operands[0], form.terms()))
            added.append(form.key)
        return added

    def rewrite(self, instr: Instr, form: Form, b: int, i: int) -> None:
        if instr.root == "mov" or self.reduced(instr, form):
            return
        terms = form.terms()
        for earlier, earlier_terms in self._candidates(form.key):
            difference = {t: (terms.get(t, 0) - earlier_terms.get(t, 0)) % (1 << form.bits)
                          for t in {*terms, *earlier_terms}}
            difference = {t: c for t, c in difference.items() if c}
            if len(difference) != 1:
                continue
            (term, coefficient), = difference.items()
            coefficient = str(_signed(coefficient, form.bits))
            if term == ONE:
                opcode, operands = f"add.s{form.bits}", (earlier, coefficient)
            elif self.available(term, b, i):
                opcode, operands = f"mad.lo.s{form.bits}", (term, coefficient, earlier)
            else:
                continue
            if (opcode, operands) != (instr.opcode, instr.operands[1:]):
                instr.opcode = opcode
                instr.operands = (instr.operands[0], *operands)
                self.changed = True
            return

    def reduced(self, instr: Instr, form: Form) -> bool:
        """``instr`` already reads a register of its own key (``add %d, %x, 1`` after
        ``%x``): rewriting it from another of that key would save nothing."""
        forms = self.numbering.forms
        return any(o in forms and forms[o].key == form.key for o in instr.operands[1:])

    def _candidates(self, key: int) -> list[tuple[str, dict[str, int]]]:
        """Registers of ``key`` to try: the first (register 0 of a tile, usually), and the
        latest few (the neighbours of a register along a vector or a row)."""
        found = self.by_key.get(key)
        if not found:
            return []
        return [found[0], *reversed(found[max(1, len(found) - 4):])]

    def available(self, register: str, b: int, i: int) -> bool:
        """``register``'s one definition runs before instruction ``i`` of block ``b``."""
        block, index = self.where[register]
        if block == b:
            return index < i
        while b is not None and b != block:
            parent = self.idom[b]
            b = None if parent == b else parent
        return b == block


def strength_reduce(kernel: PtxKernel) -> bool:
    cfg = kernel_cfg(kernel)
    if cfg is None or not cfg.blocks:
        return False
    return Reducer(kernel, cfg).run()


@dataclass(frozen=True)
class PtxStrengthReduce(KernelPass):
    """An address (or any integer) as an earlier register of the same form plus c or
    c * a register: one instruction where a chain of them was."""

    name: ClassVar[str] = "ptx-strength-reduce"

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        return strength_reduce(kernel)
