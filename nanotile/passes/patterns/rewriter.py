"""The rewriter that canonicalize's patterns edit a kernel through: MLIR's PatternRewriter
with the greedy driver listening to it.

The IR keeps no use lists, so the rewriter keeps each value's users for the kernel it
works on, and every edit goes through it to keep them right. It also holds the driver's
worklist, a stack without repeats: an op is queued (with the ops enclosing it) when it is
created or changed, the users of a value are queued when it is replaced, and the definer
of an erased op's operand when at most one other user is left (it may be dead now, or
simpler to rewrite), as MLIR's GreedyPatternRewriteDriver does.
"""

from __future__ import annotations

from typing import Any

from ...ir.core import Block, Operation, Region, Value, make_op
from ...ir.rewrite import blocks_of, defining_op, parent_op, traits


def has_no_effect(op: Operation) -> bool:
    """MLIR's view of cuda-tile's op: no memory effect at all (op table ``pure`` and yield;
    an op with recursive effects whose regions hold only such ops)."""
    kinds = traits(op)
    if "undeclared_effects" in kinds:
        return False
    if "recursive_effects" in kinds:
        return all(has_no_effect(inner) for block in blocks_of(op) for inner in block.ops)
    return "pure" in kinds or "terminator" in kinds


class Rewriter:
    """Edits of one kernel body, keeping its users and the driver's worklist."""

    def __init__(self, body: Block) -> None:
        self.body = body
        self.users: dict[Value, list[Operation]] = {}
        self.queue: list[Operation | None] = []
        self.slot: dict[Operation, int] = {}
        for op in body.ops:
            self._add_uses(op)

    # -- uses ---------------------------------------------------------------------------

    def used(self, value: Value) -> bool:
        return bool(self.users.get(value))

    def is_dead(self, op: Operation) -> bool:
        """MLIR's isOpTriviallyDead: no result used, no effect, not a terminator."""
        return not any(self.used(r) for r in op.results) and \
            "terminator" not in traits(op) and has_no_effect(op)

    def _add_uses(self, op: Operation) -> None:
        for inner in op.walk():
            for v in inner.operands:
                self.users.setdefault(v, []).append(inner)

    # -- the worklist -------------------------------------------------------------------

    def push(self, op: Operation) -> None:
        """Queue ``op`` and the ops around it in the kernel, the outermost to be first."""
        chain: list[Operation] = []
        while op is not None and op.parent is not None:
            chain.append(op)
            if op.parent is self.body:
                break
            op = parent_op(op)
        else:
            return  # erased, or inside an erased op
        for item in chain:
            if item not in self.slot:
                self.slot[item] = len(self.queue)
                self.queue.append(item)

    def first_in_first_out(self) -> None:
        """Pop the ops queued so far in the order they were queued (MLIR's top-down
        driver reverses its initial worklist so)."""
        self.queue.reverse()
        self.slot = {op: i for i, op in enumerate(self.queue) if op is not None}

    def pop(self) -> Operation | None:
        while self.queue:
            op = self.queue.pop()
            if op is not None:
                del self.slot[op]
                return op
        return None

    def _unqueue(self, op: Operation) -> None:
        if op in self.slot:
            self.queue[self.slot.pop(op)] = None

    # -- edits --------------------------------------------------------------------------

    def create(self, name: str, operands: list[Value], types: list[Any], *,
               before: Operation, attributes: dict[str, Any] | None = None,
               regions: int = 0) -> Operation:
        """A new op just before ``before``, located where ``before`` is (regions empty)."""
        op = make_op(name, operands, types, attributes, [Region() for _ in range(regions)])
        op.location, op.source = before.location, before.source
        block = before.parent
        assert block is not None
        self._place(op, block, block.ops.index(before))
        return op

    def append(self, block: Block, name: str, operands: list[Value],
               like: Operation) -> Operation:
        """A new terminator (yield) at the end of ``block``, located like ``like``."""
        op = make_op(name, operands, [])
        op.location, op.source = like.location, like.source
        self._place(op, block, len(block.ops))
        return op

    def _place(self, op: Operation, block: Block, at: int) -> None:
        block.ops.insert(at, op)
        op.parent = block
        self._add_uses(op)
        self.push(op)

    def set_operands(self, op: Operation, operands: list[Value]) -> None:
        """New operands for ``op`` (as many, or any number for a yield)."""
        for v in op.operands:
            self.users[v].remove(op)
        if op.operand_segments is not None and len(op.operand_segments) == 1:
            op.operand_segments = [len(operands)]
        op.operands = list(operands)
        for v in op.operands:
            self.users.setdefault(v, []).append(op)
        self.push(op)

    def replace_all_uses(self, old: Value, new: Value) -> None:
        for user in list(dict.fromkeys(self.users.get(old, []))):
            self.set_operands(user, [new if v is old else v for v in user.operands])

    def replace_op(self, op: Operation, values: list[Value]) -> None:
        for result, value in zip(op.results, values):
            self.replace_all_uses(result, value)
        self.erase_op(op)

    def erase_op(self, op: Operation) -> None:
        """Erase ``op`` and what its regions hold, innermost and last first."""
        for block in reversed(blocks_of(op)):
            for inner in reversed(list(block.ops)):
                self.erase_op(inner)
        for v in op.operands:
            self.users[v].remove(op)
        for v in op.operands:
            definer = defining_op(v)
            if definer is not None and len({id(u) for u in self.users[v]}) <= 1:
                self.push(definer)
        self._unqueue(op)
        if op.parent is not None:
            op.parent.ops.remove(op)
        op.parent = None

    def erase_from(self, op: Operation) -> None:
        """Erase ``op`` and every op after it in its block (they can no longer run)."""
        block = op.parent
        assert block is not None
        for doomed in block.ops[block.ops.index(op):]:
            self.erase_op(doomed)

    # -- moving ops (no user changes) ---------------------------------------------------

    def inline_before(self, block: Block, anchor: Operation) -> None:
        """Move every op of ``block`` to just before ``anchor``, emptying it."""
        target = anchor.parent
        assert target is not None
        at = target.ops.index(anchor)
        for op in block.ops:
            op.parent = target
        target.ops[at:at] = block.ops
        block.ops = []

    @staticmethod
    def merge(source: Block, dest: Block) -> None:
        """Move every op of ``source`` to the end of ``dest``."""
        for op in source.ops:
            op.parent = dest
        dest.ops.extend(source.ops)
        source.ops = []

    @staticmethod
    def add_block(op: Operation, index: int) -> Block:
        """A new empty block in ``op``'s (empty) region ``index``."""
        block = Block()
        block.parent = op.regions[index]
        op.regions[index].blocks.append(block)
        return block

    @staticmethod
    def take_region(source: Operation, index: int, dest: Operation, dest_index: int) -> None:
        """Move the blocks of ``source``'s region ``index`` into ``dest``'s (empty) one."""
        moved, into = source.regions[index], dest.regions[dest_index]
        into.blocks, moved.blocks = moved.blocks, []
        for block in into.blocks:
            block.parent = into
