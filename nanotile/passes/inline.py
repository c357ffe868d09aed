"""inline: what ``cuda-tile-opt -inline`` does.  tile -> tile (kept).

MLIR's inliner replaces each call whose callee it can see by the callee's body, then runs
its default pipeline, ``canonicalize``, on every function of the call graph (the
``default-pipeline`` option of MLIR's InlinerPass). cuda_tile has no call operation: an
``entry`` is launched, never called, so there is nothing to inline, and what the pass does
to a Tile IR module is the second half alone: each kernel canonicalized, with cuda-tile's
folders and patterns, to a fixed point (nanotile/passes/canonicalize.py says how).

It is cuda-tile-opt's pass under its own name, so that its tests and users' pipelines
that name it run; the default pipelines do not (pipelines.NOT_IN_DEFAULT).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Module
from .base import Pass, PassContext
from .canonicalize import canonicalize_module


@dataclass(frozen=True)
class Inline(Pass):
    """Inline calls (cuda_tile has none), then canonicalize each kernel, as MLIR's inliner."""

    name = "inline"
    max_iterations: int = 10  # rounds of canonicalize at most, per kernel (MLIR's default)

    def apply(self, module: Module, ctx: PassContext) -> bool:
        return canonicalize_module(module, self.max_iterations)
