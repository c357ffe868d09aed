"""simplify-tokens: drop redundant token joins and thread unordered memory ops.  tile -> tile.

Tokens order memory operations. This pass removes orderings that say nothing:
- ``join_tokens``: nested joins are flattened, duplicate operands and tokens made by
  ``make_token`` (which order after nothing) are dropped, and a token T is dropped when
  another operand is the result token of a memory op that itself took T (it is already
  ordered after T). A join left with one operand is replaced by it; with none, by a
  ``make_token``.
- a memory op whose (optional) input token comes straight from ``make_token`` is
  unordered: the token operand is removed, so unordered loads and stores carry no token.
- a weak load ordered after another weak load (two reads need no order between them)
  takes that load's own input token instead, when nothing waits for the later load
  (whatever waits for it also waits, through it, for the earlier one).
The memory order of the kernel is unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Module, Operation, Value, make_op
from ..ir.enums import MemoryOrderingSemantics
from ..ir.optable import lookup
from ..ir.rewrite import all_ops, collect_uses, defining_op, erase, insert_before, replace_uses
from ..ir.types import TOKEN
from .base import Pass, PassContext


def _is_fresh(token: Value) -> bool:
    op = defining_op(token)
    return op is not None and op.name == "make_token"


def _input_token(op: Operation) -> Value | None:
    """The token a memory op took as input, if any."""
    row = lookup(op.name)
    if row is None or op.operand_segments is None:
        return None
    for definition, group in zip(row.operands, op.operand_groups()):
        if definition.name == "token" and group:
            return group[0]
    return None


def simplified_join(tokens: list[Value]) -> list[Value]:
    """The operands a join of ``tokens`` really needs, in first-seen order."""
    flat: list[Value] = []
    for t in tokens:
        producer = defining_op(t)
        inner = producer.operands if producer is not None and producer.name == "join_tokens" \
            else [t]
        flat.extend(x for x in inner if x not in flat and not _is_fresh(x))
    implied = {_input_token(defining_op(t)) for t in flat if defining_op(t) is not None}
    return [t for t in flat if t not in implied]


def _is_weak_load(op: Operation | None) -> bool:
    return op is not None and op.name in ("load_ptr_tko", "load_view_tko") and \
        op.attributes.get("memory_ordering_semantics") == MemoryOrderingSemantics.weak


def set_input_token(op: Operation, token: Value | None) -> bool:
    """Give ``op`` another input token (None: none, if the op allows). True if done."""
    row = lookup(op.name)
    names = [d.name for d in row.operands] if row is not None else []
    if "token" not in names or (token is None and row.operands[names.index("token")].kind
                                != "optional"):
        return False
    groups = op.operand_groups()
    groups[names.index("token")] = [] if token is None else [token]
    op.operands = [v for g in groups for v in g]
    op.operand_segments = [len(g) for g in groups]
    return True


def thread_token(op: Operation, used: set[Value]) -> bool:
    """One step of moving ``op``'s input token to an earlier, equivalent one
    (``used``: the values something uses)."""
    token = _input_token(op)
    if token is None:
        return False
    if _is_fresh(token):
        return set_input_token(op, None)
    producer = defining_op(token)
    if _is_weak_load(op) and _is_weak_load(producer) and token is producer.results[-1] \
            and op.results[-1] not in used:
        return set_input_token(op, _input_token(producer))
    return False


@dataclass(frozen=True)
class SimplifyTokens(Pass):
    """Flatten and prune join_tokens; thread memory ops past make_token and loads."""

    name = "simplify-tokens"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        mapping: dict[Value, Value] = {}
        used = set(collect_uses(module))  # this pass never makes an unused value used
        for op in list(all_ops(module)):
            op.operands = [mapping.get(v, v) for v in op.operands]
            if op.name != "join_tokens":
                while thread_token(op, used):
                    changed = True
                continue
            needed = simplified_join(op.operands)
            if len(needed) >= 2:
                if needed != op.operands:
                    op.operands = needed
                    op.operand_segments = None if op.operand_segments is None \
                        else [len(needed)]
                    changed = True
                continue
            if not needed:
                needed = [insert_before(op, make_op("make_token", [], [TOKEN])).results[0]]
            mapping[op.results[0]] = needed[0]
            erase(op)
        replace_uses(module, mapping)
        return changed or bool(mapping)
