"""loop-invariant-code-motion: hoist invariant pure ops out of ``for`` bodies.  tile -> tile.

Your version of the project's pass (lab 2, part A). It reads and writes the language
``tile`` (nanotile/passes/languages.py) and keeps the module in it: after the pass, the
pass manager checks the module against that language (SSA dominance, terminators, the
dialect verifier) and, with --check-semantics, runs every kernel in the interpreter and
compares the results with those from before the pipeline.

What to write (``apply``):

- An op in a ``for`` body whose operands are all defined outside the loop computes the
  same value on every iteration: move it just before the ``for``.
- Only pure ops (``nanotile.ir.rewrite.is_pure``: no memory effect) without regions may
  move. A load is not pure: a store in the loop may change what it reads.
- The loop may run zero times: an op that may trap (``divi``/``remi`` by a divisor that
  is not a non-zero constant, see ``splat_value``) must not start running before it.
- Once an op has moved, its results are defined outside the loop: the ops that use them
  may move too. Handle inner loops first, so an op can leave several nested loops.
- Return True if anything moved (the pass manager verifies the module only then).

Useful: ``nanotile/ir/core.py`` (Operation: ``name``, ``operands``, ``results``,
``regions``, ``parent``, ``walk()``; Block: ``ops``, ``arguments``) and
``nanotile/ir/rewrite.py`` (``all_ops``, ``blocks_of``, ``erase``, ``insert_before``,
``is_pure``, ``splat_value``). Write it yourself; the project's pass
(nanotile/passes/loop_invariant_code_motion.py) is the reference the grader compares with.
"""

from __future__ import annotations

from dataclasses import dataclass

from nanotile.ir.core import Module
from nanotile.passes.base import Pass, PassContext


@dataclass(frozen=True)
class LoopInvariantCodeMotion(Pass):
    """Hoist pure ops that do not depend on the loop out of for loops."""

    name = "loop-invariant-code-motion"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        return False  # not written yet: the module is left as it is
