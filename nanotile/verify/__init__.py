"""The cuda_tile dialect verifier: every rule of the dialect, by op family.

``verify_module(module)`` returns the diagnostics for everything wrong in a module (an
empty list when it is valid; warnings only appear when asked for). The rules live one
module per op family:

    constraints  per-op operand/result type constraints and same-type/shape traits
    arith        rounding modes, flush_to_zero, conversions, overflow flags
    shape        broadcast, reshape, permute, cat, extract, insert, iota, pack
    mma          mmaf, mmai, mmaf_scaled
    reduce       reduce and scan bodies
    views        tensor/partition/strided/gather views
    memory       loads, stores, atomics, memory ordering and scope, tokens, print
    control      if/for/loop and their terminators
    structure    entries, globals, symbols
    assume       assume predicates
    hints        optimization hints
    debuginfo    debug-info scopes of entries, their ops and globals
    dominance    SSA dominance

Two helpers serve other components: ``diagnostics_check`` (MLIR's -verify-diagnostics
protocol) and ``parse_messages`` (the reference's parse-time diagnostics, for the parser).
"""

from __future__ import annotations

from nanotile.diagnostics import Diagnostic
from nanotile.ir.core import Module

from .engine import Options


def load_families() -> None:
    """Import the rule modules (each registers its rules on import)."""
    from . import (  # noqa: F401
        arith,
        assume,
        control,
        memory,
        mma,
        reduce,
        shape,
        structure,
        tma,
        views,
    )


def verify_module(module: Module, *, hint_warnings: bool = False,
                  hint_errors: bool = False) -> list[Diagnostic]:
    """All rule violations found in ``module``.

    ``hint_warnings``/``hint_errors`` are nanotile-opt's ``-Wunsupported-hints`` and
    ``-Werr-hints``: report questionable optimization hints as warnings / errors.
    """
    from .engine import verify
    return verify(module, Options(hint_warnings, hint_errors))
