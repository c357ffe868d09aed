"""assume-to-facts: record ``assume`` predicates as facts and drop the ops.  tile -> tile-canon.

``%r = assume div_by<16>, %x`` promises that %x is divisible by 16 and returns %x. The
pass records the predicate (``div_by``, ``bounded``, ``same_elements``, or any other) as a
fact about %x in the pipeline's ``PassContext`` (``ctx.facts``), where later passes read
it (pointer alignment, bounds for index arithmetic, uniform values), then replaces %r by
%x and erases the op. Facts never change what a kernel computes, only what later passes
may assume, so the output (which has no ``assume``) means the same as the input.
Option ``keep-ops``: record the facts but leave the ops in place.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.core import Module, Value
from ..ir.rewrite import all_ops, erase, replace_uses
from .base import Pass, PassContext


@dataclass(frozen=True)
class AssumeToFacts(Pass):
    """Turn assume ops into facts (div_by, bounded, same_elements) and remove them."""

    name = "assume-to-facts"
    output = "tile-canon"
    keep_ops: bool = False  # record facts only; leave the assume ops in the IR

    def apply(self, module: Module, ctx: PassContext) -> bool:
        mapping: dict[Value, Value] = {}
        for op in list(all_ops(module)):
            if op.name != "assume":
                continue
            source = op.operands[0]
            while source in mapping:  # assume of an assume: the fact is about the root
                source = mapping[source]
            ctx.add_fact(source, op.attributes["predicate"])
            for fact in ctx.facts_of(op.results[0]):
                ctx.add_fact(source, fact)
            if not self.keep_ops:
                mapping[op.results[0]] = source
                erase(op)
        replace_uses(module, mapping)
        return bool(mapping)
