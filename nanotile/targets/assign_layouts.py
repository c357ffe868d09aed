"""assign-layouts: every tile value gets a distributed layout.  tile-ptr -> tile-layout.

A tile has no place in the language above; the back end must decide how its elements are
spread over the CTA's threads (DESIGN.md, "Layouts"). This pass writes that decision into
the IR, as part of each tile's type, so later stages (and a reader of ``--dump-after``)
see it: ``tile<64xf32>`` becomes ``tile<64xf32, #blocked<threads=128, slots=1>>``.

The rule today is nanotile.targets.layout.choose_layout: ``#replicated`` for a
one-element tile, ``#blocked`` (cyclic over the CTA's threads) otherwise; the CTA size
comes from the entry's ``num_warps`` hint for the pass's ``gpu`` (default 4 warps).
Because the rule depends only on a tile's shape, every op whose operands and result have
the same shape sees one layout (elementwise ops need no conversion, reshape is free).

Ops that move elements between threads read their operands from shared memory; the pass
makes that round trip an explicit op, ``convert_layout`` to ``#shared<offset=?>``,
inserted just before the op: broadcast of a non-scalar (except the coordinate tile of an
iota, which each thread recomputes), permute, extract, cat, insert, reduce, scan and the
A and B operands of mmaf/mmai. A reduce or scan along a dimension whose every line lies
in one thread (its row-major stride is a multiple of the CTA size) stays in registers; a
reduce along the last dimension with a simple combiner runs on warp shuffles (its rows fit
warps: targets.layout.warp_plan); a full reduction of a 1-D tile of more than 48 KB
streams through shared memory in chunks in the back end (targets.layout.reduce_strategy).
(pack/unpack still use a private dense byte image in the
back end.) allocate-shared then gives each ``#shared`` value its offset.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..ir import types as T
from ..ir.core import Block, Module, Operation, Value, make_op
from ..ir.layouts import Layout
from ..ir.layouts import shared as shared_layout
from ..ir.rewrite import insert_before
from ..passes.base import Pass, PassContext

# op -> indices of the operands the back end reads from shared memory
_SHARED_OPERANDS: dict[str, tuple[int, ...] | None] = {
    "permute": (0,), "extract": (0,), "cat": (0, 1), "insert": (0, 1),
    "mmaf": (0, 1), "mmai": (0, 1),
    "reduce": None, "scan": None,  # None: every operand
}


def is_iota_line(v: Value) -> bool:
    """``reshape(iota)`` along one dimension: broadcasting it only needs each thread's
    coordinate (the back end recomputes it), no data moves."""
    owner = v.owner
    if not isinstance(owner, Operation) or owner.name != "reshape":
        return False
    producer = owner.operands[0].owner
    along = [d for d in v.type.shape if d != 1]
    return isinstance(producer, Operation) and producer.name == "iota" and len(along) == 1


def shared_operands(op: Operation) -> list[int]:
    """Indices of ``op``'s operands that go through shared memory in the back end."""
    if op.name == "broadcast":
        src = op.operands[0]
        if src.type.num_elements == 1 or src.type.shape == op.results[0].type.shape \
                or is_iota_line(src):
            return []
        return [0]
    if op.name not in _SHARED_OPERANDS:
        return []
    if op.name in ("reduce", "scan") and reduce_strategy(op) != "shared":
        return []
    picked = _SHARED_OPERANDS[op.name]
    return list(range(len(op.operands))) if picked is None else list(picked)


def reduce_strategy(op: Operation) -> str:
    """targets.layout.reduce_strategy for a reduce/scan, the CTA size read from its
    operand's (or result's) #blocked layout; an operand already in #shared: 'shared'."""
    from .layout import reduce_strategy as strategy

    threads = None
    for t in (op.operands[0].type, op.results[0].type):
        layout = getattr(t, "layout", None)
        if isinstance(layout, Layout) and layout.kind == "shared":
            return "shared"
        if isinstance(layout, Layout) and layout.kind == "blocked":
            threads = layout.threads
            break
    return strategy(op, threads)


def choose(t: T.Type, threads: int) -> T.Type:
    """``t`` with its layout (types other than tiles, and laid-out tiles, are kept)."""
    from .layout import choose_layout

    if not isinstance(t, T.TileType) or t.layout is not None:
        return t
    return dataclasses.replace(t, layout=choose_layout(t.shape, threads))


def in_shared(t: T.TileType) -> T.TileType:
    return dataclasses.replace(t, layout=shared_layout(t.num_elements))


@dataclass(frozen=True)
class AssignLayouts(Pass):
    """Give every tile value a layout; make shared-memory round trips convert_layout ops."""

    name = "assign-layouts"
    input = "tile-ptr"   # resolve-tokens keeps its input's name; tokens are not tiles
    output = "tile-layout"
    gpu: str = "sm_100"

    def spelling(self) -> str:
        return f"{self.name}{{gpu={self.gpu}}}"  # the target is always named, in dumps too

    def apply(self, module: Module, ctx: PassContext) -> bool:
        from .layout import cta_threads

        changed = False
        for entry in module.entries():
            threads = cta_threads(entry, self.gpu)
            changed |= _assign(entry, threads)
            ft = entry.attributes.get("function_type")
            if isinstance(ft, T.FunctionType):
                new = T.FunctionType(tuple(choose(t, threads) for t in ft.inputs),
                                     tuple(choose(t, threads) for t in ft.results))
                if new != ft:
                    entry.attributes["function_type"] = new
            for op in list(entry.walk()):
                for i in shared_operands(op):
                    changed |= _convert_operand(op, i)
        return changed


def _assign(entry: Operation, threads: int) -> bool:
    changed = False

    def give(v: Value) -> None:
        nonlocal changed
        new = choose(v.type, threads)
        if new is not v.type:
            v.type = new
            changed = True

    def visit(block: Block) -> None:
        for a in block.arguments:
            give(a)
        for op in block.ops:
            for r in op.results:
                give(r)
            for region in op.regions:
                for b in region.blocks:
                    visit(b)

    for region in entry.regions:
        for b in region.blocks:
            visit(b)
    return changed


def _convert_operand(op: Operation, i: int) -> bool:
    v = op.operands[i]
    t = v.type
    if not isinstance(t, T.TileType) or (isinstance(t.layout, Layout)
                                         and t.layout.kind == "shared"):
        return False
    cv = make_op("convert_layout", [v], [in_shared(t)])
    insert_before(op, cv)
    op.operands[i] = cv.results[0]
    return True
