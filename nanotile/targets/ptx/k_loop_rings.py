"""Which K loops pipeline-k-loops gives a ring of TMA stages, and how big: the loop's run of
tma_copy ops (``ring_copies``, the rules of the pass's docstring), the ops computing
their coordinates from the induction variable (``slice_of``), and the ring's stride and
stages under the shared-memory budget (``ring_size``, ``grow_shared``). Pure reads of
the simt module, but for ``grow_shared``.
"""

from __future__ import annotations

from ...ir import attrs as A
from ...ir import types as T
from ...ir.core import Block, Operation, Value
from ...ir.layouts import SharedLayout
from ...ir.rewrite import is_pure, loop_terminators, parent_op
from .allocate_shared import SHARED_BYTES
from .shared_memory import MAX_BYTES, tile_bytes

BARRIER_ROOM = 256   # bytes kept free after the buffers for the kernel's mbarriers
DESCRIPTORS = ("wgmma_descriptor", "tcgen05_descriptor")
COMPLETIONS = ("wgmma_wait", "tcgen05_commit_wait")


def ring_copies(loop: Operation, entry: Operation) -> list[Operation] | None:
    """The loop's run of tma_copy ops when the loop qualifies (the rules in
    pipeline_k_loops' docstring), else None."""
    body = loop.regions[0].block
    if body.arguments[0].type.element != T.I32:
        return None  # the ring's arithmetic is i32's (a K loop's always is)
    at = next((i for i, op in enumerate(body.ops) if op.name == "tma_copy"), None)
    if at is None or at == 0 or body.ops[at - 1].name != "barrier":
        return None
    end = at
    while end < len(body.ops) and body.ops[end].name == "tma_copy":
        end += 1
    copies = body.ops[at:end]
    if sum(op.name == "tma_copy" for op in loop.walk()) != len(copies) or \
            len(loop_terminators(body, "continue")) != 1 or loop_terminators(body, "break") \
            or body.terminator.name != "continue":
        return None
    if any(slice_of(body, v) is None for c in copies for v in c.operands):
        return None
    buffers = [c.attributes["buffer"] for c in copies]
    readers = [op for op in entry.walk() if op not in copies and _touches(op, buffers)]
    if not readers or any(op.parent is not body or op.name not in DESCRIPTORS
                          for op in readers):
        return None
    last = max(body.ops.index(op) for op in readers)
    last = max([last] + [body.ops.index(u) for op in readers for u in body.ops
                         if op.results[0] in u.operands])
    if not any(op.name in COMPLETIONS and op.attributes.get("pending", 0) == 0
               for op in body.ops[last + 1:]):
        return None
    return copies


def _touches(op: Operation, buffers: list[T.Type]) -> bool:
    types = [*op.attributes.values(), *(v.type for v in op.operands),
             *(v.type for v in op.results)]
    return any(isinstance(t, T.TileType) and t in buffers for t in types)


def slice_of(body: Block, value: Value) -> list[Operation] | None:
    """The body's ops computing ``value`` (pure, no regions), in body order, from the
    induction variable and values defined outside; None if it needs anything else."""
    needed: set[int] = set()
    pending = [value]
    while pending:
        v = pending.pop()
        if v.owner is body:
            if v is not body.arguments[0]:
                return None      # a loop-carried value
            continue
        if not isinstance(v.owner, Operation) or v.owner.parent is not body:
            continue             # defined outside the loop
        op = v.owner
        if op.regions or not is_pure(op):
            return None
        if id(op) not in needed:
            needed.add(id(op))
            pending.extend(op.operands)
    return [op for op in body.ops if id(op) in needed]


def _extent(t: T.TileType) -> tuple[int, int]:
    layout: SharedLayout = t.layout
    return layout.offset, layout.offset + tile_bytes(t, layout.size_elements())


def ring_size(entry: Operation, loop: Operation, copies: list[Operation],
               wanted: int) -> tuple[int, int]:
    """(stride, stages): stage s of the ring starts ``s * stride`` bytes after stage 0,
    clear of the buffers the loop touches or that live across it; as many stages as
    ``wanted`` that shared memory holds."""
    buffers = [c.attributes["buffer"] for c in copies]
    start = min(_extent(b)[0] for b in buffers)
    end = max(_extent(b)[1] for b in buffers)
    clear = max(_extent(b)[1] for b in _busy_buffers(entry, loop))
    align = max(b.layout.align or 16 for b in buffers)
    stride = -(-(clear - start) // align) * align
    stages = wanted
    while stages >= 2 and start + (stages - 1) * stride + (end - start) > \
            MAX_BYTES - BARRIER_ROOM:
        stages -= 1
    return stride, stages


def grow_shared(entry: Operation, copies: list[Operation], stages: int,
                 stride: int) -> None:
    """The entry's shared buffer (allocate-shared's ``nanotile.shared_bytes``) grown to
    hold the ring's last stage."""
    end = max(_extent(c.attributes["buffer"])[1] for c in copies) + (stages - 1) * stride
    old = entry.attributes.get(SHARED_BYTES)
    if end > int(getattr(old, "value", old) or 0):
        entry.attributes[SHARED_BYTES] = A.IntegerAttr(end, T.I64)


def _busy_buffers(entry: Operation, loop: Operation) -> list[T.TileType]:
    """The #shared types the loop touches, and those touched both before and after it; a
    loop inside others counts as its outermost loop (whose next iteration may read
    again what its last one read before the ring ran)."""
    loop = outermost(loop)
    inside = {id(op) for op in loop.walk()}
    order = list(entry.walk())
    at = order.index(loop)
    seen: dict[T.TileType, set[str]] = {}
    for i, op in enumerate(order):
        where = "in" if id(op) in inside else ("before" if i < at else "after")
        for t in [*op.attributes.values(), *(v.type for v in op.operands),
                  *(v.type for v in op.results)]:
            if isinstance(t, T.TileType) and isinstance(t.layout, SharedLayout) and \
                    t.layout.offset is not None:
                seen.setdefault(t, set()).add(where)
    return [t for t, places in seen.items()
            if "in" in places or {"before", "after"} <= places]


def outermost(loop: Operation) -> Operation:
    """The outermost for or loop holding ``loop`` (``loop`` itself if none does)."""
    owner = parent_op(loop)
    while owner is not None:
        if owner.name in ("for", "loop"):
            loop = owner
        owner = parent_op(owner)
    return loop
