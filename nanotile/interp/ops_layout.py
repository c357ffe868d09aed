"""Semantics of nanotile's internal ops below the tile level (language tile-layout).

A layout says where a tile's elements live, not what they are, so ``convert_layout`` is
the identity on values. With it the interpreter runs tile-layout modules too, and
``--check-semantics`` checks assign-layouts and allocate-shared like any tile pass.
"""

from __future__ import annotations

from ..ir.core import Operation
from .registry import semantics


@semantics("convert_layout")
def _convert_layout(tb, op: Operation, args: list) -> list:
    return [args[0]]


@semantics("barrier")
def _barrier(tb, op: Operation, args: list) -> list:
    """All threads of the CTA meet: one interpreter thread has nothing to wait for."""
    return []
