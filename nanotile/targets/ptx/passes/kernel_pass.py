"""The base class of the ptx-stage passes: each rewrites one kernel at a time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ....ir.core import Module
from ....passes.base import Pass, PassContext
from ..ir import PtxKernel


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
            changed |= self.run_on_kernel(kernel)
        return changed
