"""A bug inside a pass or the back end, reported as a located diagnostic.

An exception other than CompileError that escapes a pass is a bug of nanotile, not of the
input. The user still gets one located line and exit code 1, never a traceback:

    k.mlir:7:10: error: internal error in pass 'fold-constants' at 'cuda_tile.for'
    (OverflowError: cannot convert float infinity to integer)

The op named is the one the innermost frame of the traceback was working on (its local
variable ``op``). The original exception stays attached as the CompileError's
``__cause__`` (``raise internal_error(...) from e``), and with the knob
``NANOTILE_RAISE_INTERNAL_ERRORS=1`` (nanotile.knobs) the caller re-raises it unchanged
instead: the test suite sets it, so a test sees the bug itself.
"""

from __future__ import annotations

from .diagnostics import CompileError, Diagnostic
from .ir.core import Module, Operation


def op_in_traceback(exc: BaseException) -> Operation | None:
    """The Tile IR op of the innermost traceback frame that has a local named ``op``."""
    found = None
    tb = exc.__traceback__
    while tb is not None:
        candidate = tb.tb_frame.f_locals.get("op")
        if isinstance(candidate, Operation):
            found = candidate
        tb = tb.tb_next
    return found


def internal_error(exc: BaseException, where: str, module: Module | None) -> CompileError:
    """The diagnostic for ``exc`` raised ``where`` (e.g. "in pass 'cse'") over ``module``."""
    from .verify.engine import position

    filename = "<input>"
    if module is not None and module.source is not None:
        filename = module.source.filename
    op = op_in_traceback(exc)
    line = column = None
    at = ""
    if op is not None:
        filename, line, column = position(op, filename)
        at = f" at 'cuda_tile.{op.name}'"
    message = f"internal error {where}{at} ({type(exc).__name__}: {exc})"
    return CompileError(Diagnostic("error", message, filename, line, column))
