"""resolve-tokens: tokens give way to program order.  tile -> tile (language kept).

In tile-ordered a kernel's memory operations happen in program order, and the back end
makes every write visible to the whole tile block before the next memory operation
(nanotile.targets.ptx.insert_barriers: a barrier after a write). That order is at least as
strong as any order tokens can express, so the token operands are dropped: memory ops
lose their input token, ``make_token``/``join_tokens`` go, and tokens carried through
``for``/``loop`` iteration values, ``if`` results and their terminators are removed.
Token results of memory ops stay (unused) because the op table fixes the result list.
After lower-views this is the step to tile-ordered (no op takes a token: ``refines``); on
any other tile-level module it keeps the language it is given.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import types as T
from ..ir.core import Module, Operation, Value
from ..ir.optable import lookup
from ..ir.rewrite import all_blocks, all_ops, erase
from .base import Pass, PassContext

_CARRIERS = {"for": 3, "loop": 0}  # op -> index of its first iteration-value operand


def _is_token(v: Value) -> bool:
    return isinstance(v.type, T.TokenType)


def _drop_token_operands(op: Operation) -> bool:
    """Remove token operands of a memory op (its optional ``token`` group)."""
    if lookup(op.name) is None or not any(_is_token(v) for v in op.operands):
        return False
    if op.operand_segments is not None:
        groups = [[v for v in g if not _is_token(v)] for g in op.operand_groups()]
        op.operands = [v for g in groups for v in g]
        op.operand_segments = [len(g) for g in groups]
    else:
        op.operands = [v for v in op.operands if not _is_token(v)]
    return True


def _drop_carried_tokens(op: Operation) -> bool:
    """Remove token iteration values / results of for, loop and if."""
    keep = [i for i, r in enumerate(op.results) if not _is_token(r)]
    if len(keep) == len(op.results) and not any(
            _is_token(a) for region in op.regions for b in region.blocks for a in b.arguments):
        return False
    if op.name in _CARRIERS:
        first = _CARRIERS[op.name]
        body = op.regions[0].blocks[0]
        args = body.arguments[first and 1:]  # a for's first argument is its induction value
        inits = op.operands[first:]
        kept = [i for i, a in enumerate(args) if not _is_token(a)]
        op.operands = op.operands[:first] + [inits[i] for i in kept]
        if op.operand_segments is not None:
            op.operand_segments = op.operand_segments[:-1] + [len(kept)]
        body.arguments = body.arguments[:first and 1] + [args[i] for i in kept]
    op.results = [op.results[i] for i in keep]
    for i, r in enumerate(op.results):
        r.index = i
    return True


def _terminators_of(op: Operation) -> list[Operation]:
    """The yield/continue/break ops that feed ``op``'s results or iteration values."""
    own = {"if": ("yield",), "for": ("continue",), "loop": ("continue", "break")}[op.name]
    found = []

    def visit(inner: Operation, depth: int) -> None:
        for region in inner.regions:
            for block in region.blocks:
                for o in block.ops:
                    nested = o.name in ("for", "loop") and op.name != "if"
                    if o.name in own and not (o.name == "yield" and depth > 0):
                        found.append(o)
                    if not nested:
                        visit(o, depth + (o.name == "if"))
    visit(op, 0)
    return found


@dataclass(frozen=True)
class ResolveTokens(Pass):
    """Drop token operands, token ops and carried tokens (memory in program order)."""

    name = "resolve-tokens"
    input = "tile"
    refines = {"tile-ptr": "tile-ordered"}

    def apply(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        for op in list(all_ops(module)):
            if op.name in ("for", "loop", "if"):
                for term in _terminators_of(op):
                    _drop_token_operands(term)
                changed |= _drop_carried_tokens(op)
            elif op.name not in ("yield", "continue", "break"):
                changed |= _drop_token_operands(op)
        for block in list(all_blocks(module)):
            for op in [o for o in block.ops if o.name in ("make_token", "join_tokens")]:
                erase(op)
                changed = True
        return changed
