"""ptx-simplify-branches: tidy jumps and labels.  ptx-sm90 -> ptx-sm90

The structured control flow of Tile IR (if/else, for, loop) is lowered with a label per
edge; after the other passes, some branches jump to the very next instruction and some
labels are never targeted. Rewrites, repeated until none applies:

1. a branch to a label whose block only holds an unguarded ``bra L2`` targets ``L2``
   directly (jump threading; a label branching to itself is left alone);
2. ``@%p bra L1; bra L2; L1:`` becomes ``@!%p bra L2; L1:`` (the guard inverted);
3. a branch (guarded or not) to a label that comes next (only labels and comments
   between) is removed;
4. unguarded instructions after an unguarded ``bra``/``ret``/``exit`` up to the next
   label are unreachable and removed (comments stay);
5. labels that no branch names are removed.

Why it is correct: 1. the only instruction at L1 sends control on to L2, so going to L2
directly executes the same instructions. 2. control reaches L1 when %p holds and L2
otherwise in both forms. 3. either outcome of the branch continues at the same
instruction. 4. no branch targets those instructions (no label before them) and control
cannot fall into them. 5. a label that is not named is not an instruction and changes
nothing. A ``bra.uni`` keeps its ``.uni`` (uniformity only gets stronger when the
instructions between are dropped).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir import Comment, Instr, Label, PtxKernel
from .kernel_pass import KernelPass


def _is_bra(item) -> bool:
    return isinstance(item, Instr) and item.root == "bra" and len(item.operands) == 1


def _next_code(body: list, i: int) -> int:
    """Index of the first item after ``i`` that is not a comment."""
    j = i + 1
    while j < len(body) and isinstance(body[j], Comment):
        j += 1
    return j


def _thread_jumps(body: list) -> bool:
    target_of: dict[str, str] = {}
    for i, item in enumerate(body):
        if isinstance(item, Label):
            j = i + 1
            while j < len(body) and isinstance(body[j], (Label, Comment)):
                j += 1
            if j < len(body) and _is_bra(body[j]) and body[j].pred is None:
                target_of[item.name] = body[j].operands[0]
    changed = False
    for item in body:
        if _is_bra(item):
            seen = {item.operands[0]}
            t = item.operands[0]
            while t in target_of and target_of[t] not in seen:
                t = target_of[t]
                seen.add(t)
            if t != item.operands[0] and t not in target_of:
                item.with_operand(0, t)
                changed = True
    return changed


def _labels_from(body: list, i: int) -> set[str]:
    """Names of the labels at ``i`` and after it, up to the first instruction."""
    out = set()
    while i < len(body) and isinstance(body[i], (Label, Comment)):
        if isinstance(body[i], Label):
            out.add(body[i].name)
        i += 1
    return out


def simplify_once(kernel: PtxKernel) -> bool:
    body = kernel.body
    changed = _thread_jumps(body)
    # 2. @p bra L1; bra L2; L1:  ->  @!p bra L2; L1:
    for i, item in enumerate(body):
        if _is_bra(item) and item.pred is not None:
            j = _next_code(body, i)
            if j < len(body) and _is_bra(body[j]) and body[j].pred is None \
                    and item.operands[0] in _labels_from(body, _next_code(body, j)):
                neg = item.pred.startswith("!")
                item.pred = item.pred[1:] if neg else "!" + item.pred
                item.with_operand(0, body[j].operands[0])
                body[j] = None  # dropped below
                changed = True
    body = [x for x in body if x is not None]
    # 3. branches to the next label
    keep = []
    for i, item in enumerate(body):
        if _is_bra(item) and item.operands[0] in _labels_from(body, i + 1):
            changed = True
            continue
        keep.append(item)
    body = keep
    # 4. unreachable code after an unconditional transfer
    keep = []
    dead = False
    for item in body:
        if isinstance(item, Label):
            dead = False
        elif isinstance(item, Instr):
            if dead:
                changed = True
                continue
            if item.pred is None and item.root in ("bra", "ret", "exit"):
                dead = True
        elif not isinstance(item, Comment):
            dead = False  # a scope or directive: keep everything
        keep.append(item)
    body = keep
    # 5. labels nobody names
    named = {op for item in body if isinstance(item, Instr) for op in item.operands}
    keep = [item for item in body if not (isinstance(item, Label) and item.name not in named)]
    changed |= len(keep) != len(body)
    kernel.body = keep
    return changed


def simplify_branches(kernel: PtxKernel) -> bool:
    changed = False
    while simplify_once(kernel):
        changed = True
    return changed


@dataclass(frozen=True)
class PtxSimplifyBranches(KernelPass):
    """Thread jumps to jumps, invert branch-over-branch, drop jumps to the next label,
    unreachable code and unused labels."""

    name: ClassVar[str] = "ptx-simplify-branches"

    def run_on_kernel(self, kernel: PtxKernel) -> bool:
        return simplify_branches(kernel)
