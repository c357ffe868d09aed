"""The base class of the ptx-stage passes: each rewrites one kernel at a time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ....ir.core import Module
from ....passes.base import Pass, PassContext
from ..ir import Instr, PtxKernel


@dataclass(frozen=True)
class KernelPass(Pass):
    """A pass over ``module.ptx`` (ptx-sm90 -> ptx-sm90, run on ptx-sm100 modules too)
    that edits every kernel on its own: subclasses write ``run_on_kernel``."""

    input: ClassVar[str] = "ptx-sm90"
    output: ClassVar[str | None] = "ptx-sm90"

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        """Edit ``kernel`` in place; True if anything changed."""
        raise NotImplementedError

    def apply(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        for kernel in module.ptx.kernels:
            settle_positions(kernel)
            changed |= self.run_on_kernel(kernel)
        return changed


def settle_positions(kernel: PtxKernel) -> None:
    """Give each instruction without a source position the one before it: what its
    ``.loc`` in the printed text says. A new instruction (position None) shares the
    position of the one before it when printed; settled before each pass, it keeps that
    position when a later pass removes the one before it, as it does when the text is read
    back (``--start-after`` resumes from a dump and must give the same PTX)."""
    current = None
    for item in kernel.body:
        if isinstance(item, Instr):
            if item.loc is None:
                item.loc = current
            else:
                current = item.loc
