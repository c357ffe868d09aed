"""Values a for, loop or if carries, as slots of the layout e-graph (layout_egraph.py).

A loop-carried tile is several values that must share one layout: a for's block argument,
its result, its initial value's and its continues' wants; a loop's block argument (its
initial value and continues) and, apart, its result (its breaks); an if's result (its
yields). Each such set is one slot, keyed by its first value (the block argument, or
the result), so that the extractor picks one layout for all of them: the accumulator of
a K loop, its block argument, its yield operand and the loop's result move together.

The terminators and the for/loop op itself are the slot's *users* in the problem's
edges (CARRIERS): each wants its operand in the slot's layout.
"""

from __future__ import annotations

from ...ir import types as T
from ...ir.core import Operation, Value
from ...ir.layouts import LinearLayout
from ...ir.rewrite import enclosing_loop, parent_op

# ops whose tile operands become a carried value (the slot keyed by carried_key)
CARRIERS = frozenset({"for", "loop", "continue", "break", "yield"})
# ops a carried slot may not feed: what they want of an operand depends on its layout
NOT_CARRIED_USERS = frozenset({"reduce", "scan", "mmaf", "mmai", "mmaf_scaled"})


def _loop_arguments(loop: Operation) -> list[Value]:
    body = loop.regions[0].blocks[0]
    return body.arguments[1:] if loop.name == "for" else body.arguments


def carried_key(op: Operation, index: int) -> Value | None:
    """The key of the carried value operand ``index`` of ``op`` (a CARRIERS op) becomes
    (None: a for's bounds, a reduce body's yield)."""
    if op.name in ("for", "loop"):
        first = 3 if op.name == "for" else 0
        return _loop_arguments(op)[index - first] if index >= first else None
    if op.name == "yield":
        owner = parent_op(op)
        return owner.results[index] if owner is not None and owner.name == "if" else None
    loop = enclosing_loop(op)
    if loop is None:
        return None
    return _loop_arguments(loop)[index] if op.name == "continue" else loop.results[index]


def tied_values(ops: list[Operation]) -> dict[Value, tuple[Value, ...]]:
    """Every carried tile of ``ops``: its key and the values that share its layout."""
    tied: dict[Value, tuple[Value, ...]] = {}
    for op in ops:
        if op.name == "for":
            for arg, result in zip(_loop_arguments(op), op.results):
                tied[arg] = (arg, result)
        elif op.name == "loop":
            tied.update({arg: (arg,) for arg in _loop_arguments(op)})
            tied.update({result: (result,) for result in op.results})
        elif op.name == "if":
            tied.update({result: (result,) for result in op.results})
    return {key: values for key, values in tied.items()
            if isinstance(key.type, T.TileType) and key.type.num_elements > 1}


def may_choose(assignment, values: tuple[Value, ...], choosing: object = ()) -> bool:
    """The carried ``values`` may change layout together: greedy gave them one linear
    layout, they are no accumulator and no op that reads one depends on its layout
    (a reduce or scan among ``choosing``, slots themselves, may read any)."""
    layouts = {assignment.layout.get(v) for v in values}
    if len(layouts) != 1 or not isinstance(next(iter(layouts)), LinearLayout):
        return False
    return not any(v in assignment.accumulators or any(
        user.name in NOT_CARRIED_USERS and user not in choosing
        for user in assignment.uses.get(v, []))
        for v in values)


def carried_name(key: Value) -> str:
    """The carrying op, its line and the value's position (a dump's and a user rule's
    handle): ``for@12#1`` (a for's block argument 0 is its induction variable)."""
    owner = key.owner if isinstance(key.owner, Operation) else key.owner.parent.parent
    line = getattr(getattr(owner, "source", None), "line", None)
    return f"{owner.name}@{line}#{key.index}" if line else f"{owner.name}#{key.index}"
