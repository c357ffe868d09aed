"""lower-to-ptx: every entry of the module to one PTX kernel.  tile-layout -> ptx-sm90|ptx-sm100

The step from the tile stages to the ptx stages of the pipeline. It runs the PTX back end
(``lower.compile_module``: per-thread code for each op, by the rules of rules.py) for the
target named by its option, ``lower-to-ptx{gpu=sm_90}`` or ``{gpu=sm_100}`` (the default),
parses the PTX text into a program the ptx passes can edit (``ptx.ir.parse_ptx_program``)
and stores it in ``module.ptx``. The module is then in ptx-sm90 or ptx-sm100: dumps print
the PTX, and ``module.items`` keep the Tile IR it was lowered from, for reference only.

An op the back end cannot lower is a CompileError naming the op and its location.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..diagnostics import CompileError, Diagnostic
from ..ir.core import Module
from ..knobs import raise_internal_errors
from ..passes.base import Pass, PassContext
from ..passes.internal_error import internal_error

LANGUAGE_OF_GPU = {"sm_90": "ptx-sm90", "sm_100": "ptx-sm100"}


@dataclass(frozen=True)
class LowerToPtx(Pass):
    """Lower the tile program to a PTX program for one target (module.ptx)."""

    name: ClassVar[str] = "lower-to-ptx"
    input: ClassVar[str] = "tile-layout"
    output: ClassVar[str | None] = "ptx-sm100"  # of the default gpu; see output_language
    gpu: str = "sm_100"

    def __post_init__(self) -> None:
        if self.gpu not in LANGUAGE_OF_GPU:
            raise CompileError(Diagnostic("error", f"option 'gpu' of pass 'lower-to-ptx' "
                                                   f"must be one of {', '.join(LANGUAGE_OF_GPU)}"
                                                   f", got '{self.gpu}'", "<command line>"))

    def output_language(self) -> str:
        return LANGUAGE_OF_GPU[self.gpu]

    def spelling(self) -> str:
        return f"{self.name}{{gpu={self.gpu}}}"  # the target is always named, in dumps too

    def apply(self, module: Module, ctx: PassContext) -> bool:
        from .lower import compile_module
        from .ptx.ir import parse_ptx_program
        from .target import get_target

        target = get_target(self.gpu)
        try:
            text = compile_module(module, target)
        except CompileError:
            raise
        except Exception as e:  # a bug: still a diagnostic, never a traceback
            if raise_internal_errors():
                raise
            raise internal_error(e, f"while compiling for {self.gpu}", module) from e
        module.ptx = parse_ptx_program(text, f"<{self.gpu}.ptx>")
        return True
