"""simplify-picks: register renamings read their registers where they were made.
simt -> simt.

distribute and lower-mma write ``pick`` ops to rename registers (a conversion between
layouts that stay in each thread, the halves of an accumulator handed to mma.sync, the
fragments of an ldmatrix). A pick of a pick reads the first pick's sources directly, and
a pick that hands back all of one value's registers in order is that value. Picks cost
no instruction either way; the simpler chains make the simt dumps readable and leave
select-instructions fewer names to follow. Picks that nothing reads any more are
removed.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir.core import Module, Operation, Value
from ...ir.rewrite import all_ops, collect_uses, defining_op, erase, replace_uses
from ...passes.base import Pass, PassContext


@dataclass(frozen=True)
class SimplifyPicks(Pass):
    """Picks of picks read the original registers; identity picks go."""

    name = "simplify-picks"
    input = "simt"
    output = "simt"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        identities: dict[Value, Value] = {}
        for op in list(all_ops(module)):
            if op.name != "pick":
                continue
            registers = [origin(op, r) for r in op.attributes["registers"]]
            sources = list(dict.fromkeys(value for value, _ in registers))
            if len(sources) == 1 and [r for _, r in registers] == \
                    list(range(register_count(sources[0]))) and \
                    sources[0].type == op.results[0].type:
                identities[op.results[0]] = sources[0]
                changed = True
                continue
            start = {}
            offset = 0
            for value in sources:
                start[value] = offset
                offset += register_count(value)
            numbers = tuple(start[value] + r for value, r in registers)
            if sources != op.operands or numbers != tuple(op.attributes["registers"]):
                op.operands = sources
                op.operand_segments = [len(sources)]
                op.attributes["registers"] = numbers
                changed = True
        replace_uses(module, identities)
        if changed:
            remove_unused_picks(module)
        return changed


def register_count(v: Value) -> int:
    """Registers of a simt value: a tile<N x T, #regs> has N, a tile<T, #regs> one."""
    return v.type.num_elements


def origin(op: Operation, register: int) -> tuple[Value, int]:
    """The value and register that register ``register`` of pick ``op`` reads, following
    picks back to the op that made the register."""
    for source in op.operands:
        count = register_count(source)
        if register < count:
            inner = defining_op(source)
            if inner is not None and inner.name == "pick":
                return origin(inner, inner.attributes["registers"][register])
            return source, register
        register -= count
    raise AssertionError(f"pick reads register {register} past its sources")


def remove_unused_picks(module: Module) -> None:
    while True:
        uses = collect_uses(module)
        dead = [op for op in all_ops(module)
                if op.name == "pick" and not uses.get(op.results[0])]
        if not dead:
            return
        for op in dead:
            erase(op)
