"""ptx-compact-registers: number the registers of each class densely.  ptx-sm90 -> ptx-sm90

After dead code is gone, the kernel names e.g. 300 of the ``%r1 ... %r3054`` that lower.py
allocated; since ``.reg .b32 %r<N>;`` declares N registers, the declarations (and the
dumps) stay far larger than the code. This pass renames the registers of every declared
class in order of first appearance, ``%r1, %r2, ...``, so that N is the number of
registers used plus one. (ptxas allocates physical registers itself; this only shrinks
the text and makes dumps readable.)

Why it is correct: the renaming is a bijection within each register class (same declared
type), applied to every occurrence in the kernel (destinations, sources, guards,
addresses, vectors), so every instruction reads and writes the same values as before;
registers of undeclared or special names are not touched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir import Instr, PtxKernel, instr_registers, register_class, rename_registers
from .kernel_pass import KernelPass

def compact(kernel: PtxKernel) -> bool:
    mapping: dict[str, str] = {}
    counts: dict[str, int] = {}
    for item in kernel.body:
        if isinstance(item, Instr):
            for r in instr_registers(item):
                if r in mapping:
                    continue
                prefix = register_class(r)
                if prefix is None or prefix not in kernel.reg_types:
                    continue
                counts[prefix] = counts.get(prefix, 0) + 1
                mapping[r] = f"%{prefix}{counts[prefix]}"
    if all(k == v for k, v in mapping.items()):
        return False
    for item in kernel.body:
        if isinstance(item, Instr):
            if item.pred:
                item.pred = rename_registers(item.pred, mapping)
            item.operands = [rename_registers(op, mapping) for op in item.operands]
    return True


@dataclass(frozen=True)
class PtxCompactRegisters(KernelPass):
    """Renumber each register class densely in order of first appearance."""

    name: ClassVar[str] = "ptx-compact-registers"

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        return compact(kernel)
