"""nanotile.ir.rewrite's edits of a block: insert_before and erase find their op at the
block's position hint or by searching, and leave the same order whatever the hint says."""

from __future__ import annotations

import random

from nanotile.ir import types as T
from nanotile.ir.core import Block, make_op
from nanotile.ir.rewrite import erase, insert_before


def _op(number: int):
    return make_op("constant", [], [T.TileType((), T.I32)], {"value": number})


def test_edits_keep_the_order_of_a_list_edited_alike():
    """Random inserts and erases (the same anchor again and again, forward walks, ops far
    behind the hint, the block's list changed behind the hint's back) give the order the
    same edits give a plain list."""
    rng = random.Random(7)
    block = Block()
    for n in range(50):
        block.append(_op(n))
    mirror = list(block.ops)
    made = 50
    for _ in range(2000):
        anchor = rng.choice(block.ops)
        if rng.random() < 0.1 and len(block.ops) > 2:  # an edit behind the hint's back
            moved = block.ops.pop(0)
            block.ops.append(moved)
            mirror.append(mirror.pop(0))
        elif rng.random() < 0.4 and len(block.ops) > 2:
            erase(anchor)
            mirror.remove(anchor)
            assert anchor.parent is None
        else:
            for _ in range(rng.randint(1, 3)):  # several before the same anchor
                new = insert_before(anchor, _op(made))
                made += 1
                mirror.insert(mirror.index(anchor), new)
                assert new.parent is block
        assert block.ops == mirror
