"""select-instructions' rule for ``tma_copy``: TMA copies into a shared buffer, and the
mbarrier every thread waits on until they have landed (PTX ISA 8.0+, sm_90 and later).

    @leader mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], BYTES   (thread 0)
    @leader cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
            [buffer + box offset], [map, {column, row}], [bar]           (one per box)
            mbarrier.arrive.shared::cta.b64 %state, [bar]               (every thread)
    wait:   mbarrier.try_wait.shared::cta.b64 %done, [bar], %state
            @!%done bra wait

Consecutive tma_copy ops (A and B of one mmaf: select-tma-loads puts them together) issue
all their copies and arrivals first, then wait for each: the copies are in flight
together.
The mbarrier (8 bytes after the kernel's shared buffer, one per copy site) expects every
thread's arrival plus thread 0's, which also announces the bytes: its phase completes
when all threads have arrived and every box has landed, and the state each thread gets
from its arrival names that phase, so no thread tracks phase bits across a loop. Thread
0 initialises it at the kernel's entry; the CTA barrier insert-barriers puts before the
copy (no thread may still read the buffer) also orders the initialisation before any
arrival.

The tensor map is a hidden parameter after the user's (``.param .align 64 .b8
NAME[128]``, one per distinct map, as tileiras passes them), read through its generic
address; a ``// nanotile: tensor map`` comment says what the launcher must encode
(nanotile.ir.tensor_maps). The boxes' shared offsets are read off the buffer's layout, and each
box is checked to lay its elements out as that layout does.
"""

from __future__ import annotations

from ...ir.core import Operation
from ...ir.layouts import SharedLayout
from ...ir.tensor_maps import (PTX_REDUCTION, TensorMapSpec, box_lays_out, comment,
                               map_element_offset)
from .select_instructions import Selection, Unsupported
from .select_memory import smem

BARRIER_BYTES = 8
COPY = "cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
STORE = "cp.async.bulk.tensor.{rank}d.global.shared::cta.tile.bulk_group"
REDUCE = "cp.reduce.async.bulk.tensor.{rank}d.global.shared::cta.{op}.tile.bulk_group"


def _placed(op: Operation) -> tuple[TensorMapSpec, object, SharedLayout]:
    """(map, buffer type, its placed layout) of a tma_copy or tma_store_copy."""
    buffer = op.attributes["buffer"]
    if buffer.layout.offset is None:
        raise Unsupported(f"{buffer} has no place in shared memory (allocate-shared)")
    return TensorMapSpec.parse(op.attributes["tensor"]), buffer, buffer.layout


def tma_copy(s: Selection, op: Operation) -> None:
    spec, buffer, layout = _placed(op)
    fn = s.fn
    leader = _leader(s)
    barrier = _barrier(s, op)
    tensor_map = _tensor_map(s, spec)
    coordinates = [s.get(v)[0] for v in op.operands]   # outermost first
    boxes = box_offsets(buffer.shape, layout, spec)
    fn.instr("mbarrier.arrive.expect_tx.shared::cta.b64", "_", f"[{barrier}]",
             str(spec.box_bytes * len(boxes)), pred=leader)
    for first, offset in boxes:
        destination = fn.reg("b32")
        fn.instr("add.s32", destination, smem(s), str(layout.offset + offset))
        fn.instr(COPY.format(rank=len(first)), f"[{destination}]",
                 f"[{tensor_map}, {_coordinates(s, coordinates, first)}]",
                 f"[{barrier}]", pred=leader)
    state = fn.reg("b64")
    fn.instr("mbarrier.arrive.shared::cta.b64", state, f"[{barrier}]")
    pending = s.cache.setdefault("tma waits", [])
    pending.append((barrier, state))
    if _next_op_name(op) == "tma_copy":
        return  # the copies of consecutive tma_copy ops are all in flight before any wait
    for barrier, state in pending:
        wait = fn.label("tma_wait")
        done = fn.reg("pred")
        fn.place(wait)
        fn.instr("mbarrier.try_wait.shared::cta.b64", done, f"[{barrier}]", state)
        fn.instr("bra", wait, pred="!" + done)
    pending.clear()


def tma_issue(s: Selection, op: Operation) -> None:
    """The copies into one stage of a ring (pipeline-k-loops): the stage's buffer lies
    ``stride`` bytes per stage after stage 0's; thread 0 announces the stage's bytes on
    its 'full' mbarrier (the first copy of the stage, ``expect``) and issues the boxes,
    which complete it. Nobody waits here: tma_wait does, iterations later."""
    spec, buffer, layout = _placed(op)
    fn = s.fn
    leader = _leader(s)
    stage = s.get(op.operands[0])[0]
    barrier = _stage_barrier(s, op, stage)
    tensor_map = _tensor_map(s, spec)
    coordinates = [s.get(v)[0] for v in op.operands[1:]]
    base = fn.reg("b32")
    fn.instr("mad.lo.s32", base, stage, str(op.attributes["stride"]), smem(s))
    if op.attributes["expect"]:
        fn.instr("mbarrier.arrive.expect_tx.shared::cta.b64", "_", f"[{barrier}]",
                 str(op.attributes["expect"]), pred=leader)
    for first, offset in box_offsets(buffer.shape, layout, spec):
        destination = fn.reg("b32")
        fn.instr("add.s32", destination, base, str(layout.offset + offset))
        fn.instr(COPY.format(rank=len(first)), f"[{destination}]",
                 f"[{tensor_map}, {_coordinates(s, coordinates, first)}]",
                 f"[{barrier}]", pred=leader)


def tma_wait(s: Selection, op: Operation) -> None:
    """Every thread spins until the stage's 'full' mbarrier completed its phase of the
    given parity (PTX ISA, mbarrier.try_wait.parity): the stage's copies have landed."""
    fn = s.fn
    stage, phase = s.get(op.operands[0])[0], s.get(op.operands[1])[0]
    barrier = _stage_barrier(s, op, stage)
    wait = fn.label("tma_wait")
    done = fn.reg("pred")
    fn.place(wait)
    fn.instr("mbarrier.try_wait.parity.shared::cta.b64", done, f"[{barrier}]", phase)
    fn.instr("bra", wait, pred="!" + done)


def tma_ring_reset(s: Selection, op: Operation) -> None:
    """Thread 0 invalidates each of the ring's mbarriers and initialises it again (PTX
    ISA: an mbarrier is invalidated before its memory holds a new one): the K loop
    starts again at stage 0, parity 0. Every copy of the ring's last run was waited for
    and the CTA barrier before this orders those waits before it."""
    fn = s.fn
    first = _ring(s, op)
    for index in range(op.attributes["stages"]):
        address = f"[{first}+{index * BARRIER_BYTES}]" if index else f"[{first}]"
        fn.instr("mbarrier.inval.shared::cta.b64", address, pred=_leader(s))
        fn.instr("mbarrier.init.shared::cta.b64", address, "1", pred=_leader(s))


def _stage_barrier(s: Selection, op: Operation, stage: str) -> str:
    """The shared address of the 'full' mbarrier of ``stage`` of the op's ring: the ring's
    ``stages`` mbarriers lie side by side after the kernel's shared buffer, each
    initialised by thread 0 at the entry for one arrival (thread 0's expect_tx)."""
    address = s.fn.reg("b32")
    s.fn.instr("mad.lo.s32", address, stage, str(BARRIER_BYTES), _ring(s, op))
    return address


def _ring(s: Selection, op: Operation) -> str:
    """The shared address of the first of the ring's mbarriers (allocated and initialised
    on first use)."""
    fn = s.fn
    key = ("ring", op.attributes["ring"])
    if key not in s.cache:
        stages = op.attributes["stages"]
        offset = -(-fn.shared_bytes // BARRIER_BYTES) * BARRIER_BYTES
        fn.need_shared(offset + stages * BARRIER_BYTES)
        base, leader = smem(s), _leader(s)
        with fn.at_entry():
            first = fn.reg("b32")
            fn.instr("add.s32", first, base, str(offset))
            for index in range(stages):
                fn.instr("mbarrier.init.shared::cta.b64",
                         f"[{first}+{index * BARRIER_BYTES}]" if index else f"[{first}]",
                         "1", pred=leader)
        s.cache[key] = first
    return s.cache[key]


def _next_op_name(op: Operation) -> str | None:
    ops = op.parent.ops
    at = ops.index(op)
    return ops[at + 1].name if at + 1 < len(ops) else None


def tma_store_copy(s: Selection, op: Operation) -> None:
    """Every thread's stores to the buffer made visible to the async proxy (a fence, then
    a CTA barrier); thread 0 copies each box out (or reduces it into the tensor, with a
    ``reduction``), commits them as a bulk group and waits until they are done (the
    buffer may be reused, the kernel may end)."""
    spec, buffer, layout = _placed(op)
    reduction = op.attributes.get("reduction")
    opcode = STORE if reduction is None else REDUCE
    fn = s.fn
    leader = _leader(s)
    tensor_map = _tensor_map(s, spec)
    coordinates = [s.get(v)[0] for v in op.operands]
    fn.instr("fence.proxy.async.shared::cta")
    fn.instr("bar.sync", "0")
    for first, offset in box_offsets(buffer.shape, layout, spec):
        source = fn.reg("b32")
        fn.instr("add.s32", source, smem(s), str(layout.offset + offset))
        fn.instr(opcode.format(rank=len(first), op=PTX_REDUCTION.get(str(reduction))),
                 f"[{tensor_map}, {_coordinates(s, coordinates, first)}]", f"[{source}]",
                 pred=leader)
    fn.instr("cp.async.bulk.commit_group", pred=leader)
    fn.instr("cp.async.bulk.wait_group", "0", pred=leader)


def _coordinates(s: Selection, origin: list[str], first: tuple[int, ...]) -> str:
    """``{inner, ..., outer}``: a box's first element in the tensor (the tile's first
    element plus the box's place in the tile), innermost first as PTX wants them."""
    return "{" + ", ".join(s.fn.plus(register, offset)
                           for register, offset in reversed(list(zip(origin, first)))) + "}"


def box_offsets(tile: tuple[int, ...], layout: SharedLayout,
                spec: TensorMapSpec) -> list[tuple[tuple[int, ...], int]]:
    """(the box's first element in the tile, its byte offset in the buffer) of each box;
    Unsupported unless each box's (swizzled) rows are the layout's."""
    size = spec.element_bytes
    if len(tile) == 1:
        (box,) = spec.box
        if not layout.is_row_major():
            raise Unsupported(f"TMA boxes of {box} do not lay out {layout}")
        return [((start,), start * size) for start in range(0, tile[0], box)]
    if len(tile) == 3:  # one box, the whole tile, row-major (a staged operand)
        if tuple(spec.box) != tuple(tile) or spec.swizzle or not layout.is_row_major():
            raise Unsupported(f"a TMA box of {spec.box} does not lay out {layout}")
        return [((0, 0, 0), 0)]
    rows, columns = spec.box[-2:]
    units = (0,) * (len(spec.box) - 2)  # a map's leading boxes of 1 (a batch of one)
    seen = tile[::-1] if spec.transposed else tile  # the tile as the map sees it
    out = []
    for r0 in range(0, seen[0], rows):
        for c0 in range(0, seen[1], columns):
            if not box_lays_out(layout, tile, (r0, c0), (rows, columns), size, spec.swizzle,
                                spec.transposed):
                raise Unsupported(f"a TMA box of {rows}x{columns} does not lay out "
                                  f"{layout} (select-tma-loads)")
            out.append((units + (r0, c0), map_element_offset(layout, tile, (r0, c0), size,
                                                             spec.transposed)))
    return out


def _leader(s: Selection) -> str:
    """A predicate true in thread 0 (computed at the entry)."""
    if "leader" not in s.cache:
        with s.fn.at_entry():
            p = s.fn.reg("pred")
            s.fn.instr("setp.eq.u32", p, s.tid, "0")
        s.cache["leader"] = p
    return s.cache["leader"]


def _barrier(s: Selection, op: Operation) -> str:
    """The shared address of this copy's mbarrier, initialised by thread 0 at the entry
    for every thread's arrival and thread 0's."""
    fn = s.fn
    offset = -(-fn.shared_bytes // BARRIER_BYTES) * BARRIER_BYTES
    fn.need_shared(offset + BARRIER_BYTES)
    base, leader = smem(s), _leader(s)  # (each computed at the entry on first use)
    with fn.at_entry():
        address = fn.reg("b32")
        fn.instr("add.s32", address, base, str(offset))
        fn.instr("mbarrier.init.shared::cta.b64", f"[{address}]", str(s.threads + 1),
                 pred=leader)
    return address


def _tensor_map(s: Selection, spec: TensorMapSpec) -> str:
    """A b64 register with the generic address of the hidden parameter holding the
    tensor map ``spec`` describes (declared on first use)."""
    key = ("tensor map", spec)
    if key not in s.cache:
        fn = s.fn
        name = f"{fn.name}_param_tma{sum(1 for k in s.cache if k[0] == 'tensor map')}"
        fn.params.append((".align 64 .b8", f"{name}[128]"))
        fn.comment(comment(name, spec))
        with fn.at_entry():
            symbol = fn.reg("b64")
            fn.instr("mov.b64", symbol, name)
            generic = fn.reg("b64")
            fn.instr("cvta.param.u64", generic, symbol)
        s.cache[key] = generic
    return s.cache[key]
