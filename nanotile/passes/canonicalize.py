"""canonicalize: what ``cuda-tile-opt -canonicalize`` does.  tile -> tile (kept).

MLIR's canonicalizer with cuda-tile's rules: every op's folder and canonicalization
patterns (nanotile/passes/patterns, after cuda-tile's CudaTile.cpp and
OpsCanonicalization.td) are applied to a fixed point by a greedy driver, as MLIR's
GreedyPatternRewriteDriver does top-down. Each round of a kernel:

1. walks the kernel in textual order. A ``constant`` equal to one met before is replaced
   by it; the others are hoisted to the top of the kernel, where a constant that does
   not directly follow a hoisted one goes first (MLIR's OperationFolder; a constant
   moved or merged loses its location);
2. visits the ops in that order from a worklist: an op whose results are unused and that
   has no effect (cuda-tile's memory effects: op table traits) is erased; otherwise its
   folder runs, and if it folds nothing its patterns are tried in order until one
   applies. The rewriter queues what a change touches (created and changed ops, users
   of replaced values, definers of erased operands) for a visit;
3. erases the ops left dead, anywhere in the kernel.

A round that changed anything is followed by another, 10 rounds at most (MLIR's
defaults). cuda-tile gives no arithmetic op a folder, so unlike the tile-canon steps of
the default pipeline (fold-constants...) this folds no arithmetic. It is not in the
default pipelines, whose PTX it would change; nanotile-opt -canonicalize and -p run it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..ir.attrs import UnknownLoc
from ..ir.core import Block, Module, Operation
from ..ir.rewrite import blocks_of, walk_block
from .base import Pass, PassContext
from .patterns import FOLDERS, PATTERNS
from .patterns.common import constant_key
from .patterns.rewriter import Rewriter


def gather(rw: Rewriter) -> bool:
    """Step 1: queue the kernel's ops in textual order, uniquing and hoisting constants.
    True if a constant was replaced or moved."""
    kept: dict[object, Operation] = {}
    moved = False
    for op in _textual_order(rw.body):
        if op.name == "constant":
            key = constant_key(op)
            if key in kept:
                rw.replace_op(op, kept[key].results)
                kept[key].location = UnknownLoc()  # it stands for both now (as MLIR's)
                moved = True
                continue
            kept[key] = op
            moved |= _hoist(op, rw.body)
        rw.push(op)
    rw.first_in_first_out()
    return moved


def _textual_order(block: Block) -> Iterator[Operation]:
    """The ops of ``block`` and their regions, each block's list read when it is reached
    (the ops already seen may have moved)."""
    for op in list(block.ops):
        yield op
        for inner in blocks_of(op):
            yield from _textual_order(inner)


def _hoist(constant: Operation, body: Block) -> bool:
    """Move a constant to the top of the kernel, unless it is the first op there or
    follows a constant (hoisted already: the walk met every op before it)."""
    if constant.parent is body:
        at = body.ops.index(constant)
        if at == 0 or body.ops[at - 1].name == "constant":
            return False
    assert constant.parent is not None
    constant.parent.ops.remove(constant)
    body.ops.insert(0, constant)
    constant.parent = body
    constant.location = UnknownLoc()  # no longer where it was written (as MLIR's)
    return True


def visit_all(rw: Rewriter) -> bool:
    """Step 2: erase, fold or rewrite each op of the worklist until it is empty."""
    changed = False
    while (op := rw.pop()) is not None:
        if rw.is_dead(op):
            rw.erase_op(op)
            changed = True
            continue
        if op.name == "constant":
            continue
        folder = FOLDERS.get(op.name)
        values = folder(op, rw) if folder else None
        if values is not None:
            in_place = len(values) == len(op.results) and \
                all(v is r for v, r in zip(values, op.results))
            if in_place:
                rw.push(op)  # look at it again
            else:
                rw.replace_op(op, values)
            changed = True
            continue
        changed |= any(pattern(op, rw) for pattern in PATTERNS.get(op.name, []))
    return changed


def erase_dead(rw: Rewriter) -> bool:
    """Step 3: erase the ops without used results or effects, until none is left."""
    erased = False
    while True:
        swept = False
        for op in reversed(list(walk_block(rw.body))):
            if op.parent is not None and rw.is_dead(op):
                rw.erase_op(op)
                swept = True
        if not swept:
            return erased
        erased = True


@dataclass(frozen=True)
class Canonicalize(Pass):
    """Apply cuda-tile's folders and canonicalization patterns to a fixed point."""

    name = "canonicalize"
    max_iterations: int = 10  # rounds of the driver at most, per kernel (MLIR's default)

    def apply(self, module: Module, ctx: PassContext) -> bool:
        return canonicalize_module(module, self.max_iterations)


def canonicalize_module(module: Module, max_iterations: int) -> bool:
    """Every kernel of ``module`` canonicalized (shared with inline, which is this on a
    module without calls)."""
    changed = False
    for body in (block for item in module.items for block in blocks_of(item)):
        changed |= _simplify(body, max_iterations)
    return changed


def _simplify(body: Block, max_iterations: int) -> bool:
    """Rounds over one kernel until one changes nothing (or the last)."""
    changed = False
    for _ in range(max_iterations):
        rw = Rewriter(body)
        changed |= gather(rw)
        progress = visit_all(rw)
        progress |= erase_dead(rw)
        changed |= progress
        if not progress:
            break
    return changed
