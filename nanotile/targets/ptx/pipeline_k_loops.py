"""pipeline-k-loops{gpu stages}: a K loop's TMA copies run ahead of its MMAs, in a ring of
shared buffers.  simt -> simt.

select-tma-loads and distribute leave a K loop (a ``for`` whose MMA operands arrive by
TMA) copying its tiles and waiting for them before its MMA, every iteration: nothing
overlaps. This pass gives each such loop an N-stage ring (PTX ISA, "mbarrier" and
"cp.async.bulk.tensor"; tileiras' matmul_f16_tma does the same with warp-specialised
producers):

- N buffers per copied operand: stage s of a buffer lies ``s * stride`` bytes after
  stage 0 (the buffer allocate-shared placed), ``stride`` past every shared buffer the
  loop (or the outermost loop holding it) touches or that lives across it (buffers used
  only before or only after may share the bytes: a barrier precedes the first copy, and
  every copy is waited for inside the loop);
- a 'full' mbarrier per stage: thread 0 announces the stage's bytes (arrive.expect_tx)
  and issues its copies (``tma_issue``), every thread waits for the phase of the parity
  it expects (``tma_wait``); the loop carries the stage index and that parity, which
  flips when the index wraps to 0;
- a prologue issuing the copies of the first N-1 iterations, each guarded by its
  iteration existing (a dynamic trip count may be below N-1); a loop inside another
  loop (a persistent kernel's tiles) starts its ring again each time, its mbarriers
  initialised again (``tma_ring_reset``) after the barrier that ends its last run's
  waits;
- in iteration k, the copies of iteration k+N-1 (if it exists) into the stage iteration
  k-1 read, then the wait for stage k mod N, then the MMA on that stage's buffers (the
  descriptors moved by ``stage * stride``).

Reusing the stage of iteration k-1 is safe because its MMA is complete before the next
iteration begins, which the pass requires of the body: on sm_90 each warp's
``wgmma_wait 0``, and the CTA barrier insert-barriers put before the copies keeps thread
0 from refilling the stage before every warp retired its wgmma; on sm_100
``tcgen05_commit_wait``, which thread 0, the MMA's issuer and the copies', waits for
itself.

A loop qualifies when it counts in i32 and its body holds one run of tma_copy ops after
a barrier, whose coordinates are computed in the body from the induction variable and
values from outside by pure ops; whose buffers nothing but the copies and the MMA
descriptors (wgmma_descriptor, tcgen05_descriptor) in that body reads or writes; that has
one ``continue`` and the MMA completion after the descriptors' last use (k_loop_rings).
N: the ``stages`` option, else the entry's ``num_stages`` hint (for the ``gpu`` option's
target, or by default), else DEFAULT_STAGES (3); at most MAX_STAGES (8) and as many as
the shared memory holds (fewer than 2: the loop is left alone). The copies run ahead
while the MMA runs; the MMA itself still completes within its iteration (wait_group 0).
The look-ahead iteration k+N-1 is computed in i32: a loop whose bound lies within
(N-1) steps of the i32 limit would wrap (K loops count tiles, far from it).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir import types as T
from ...ir.core import Block, Module, Operation, Region, Value, make_op
from ...ir.enums import ComparisonPredicate, Signedness
from ...ir.layouts import REGS
from ...ir.rewrite import insert_before, make_splat, replace_uses
from ...ir.tensor_maps import TensorMapSpec
from ...passes.base import Pass, PassContext
from .k_loop_rings import DESCRIPTORS, grow_shared, outermost, ring_copies, ring_size, slice_of

DEFAULT_STAGES = 3
MAX_STAGES = 8
I32 = T.TileType((), T.I32, REGS)


@dataclass(frozen=True)
class PipelineKLoops(Pass):
    """K loops fed by TMA: their copies issued N-1 iterations ahead into a ring of stages."""

    name = "pipeline-k-loops"
    input = "simt"
    output = "simt"
    gpu: str = "sm_90"  # whose num_stages hint counts (besides the default's)
    stages: int = 0     # ring stages; 0: the num_stages hint, else DEFAULT_STAGES

    def apply(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        for entry in module.entries():
            rings = 0
            for loop in [op for op in entry.walk() if op.name == "for"]:
                copies = ring_copies(loop, entry)
                if copies is None:
                    continue
                stride, stages = ring_size(entry, loop, copies, self._wanted(entry))
                if stages < 2:
                    continue
                _pipeline(entry, loop, copies, stages, stride, rings)
                grow_shared(entry, copies, stages, stride)
                rings += 1
                changed = True
        return changed

    def _wanted(self, entry: Operation) -> int:
        if self.stages:
            return min(self.stages, MAX_STAGES)
        hints = entry.attributes.get("optimization_hints")
        wanted = DEFAULT_STAGES
        for target, hint in sorted(getattr(hints, "targets", ()) or (),
                                   key=lambda pair: pair[0] != "default"):
            value = hint.get("num_stages") if target in ("default", self.gpu) else None
            if value is not None:  # the target's own hint over the default's
                wanted = int(getattr(value, "value", value))
        return min(wanted, MAX_STAGES)


# ---------------------------------------------------------------- the rewrite

class _Emitter:
    """Builds i32 scalar ops before an anchor (or at the end of a block)."""

    def __init__(self, anchor: Operation | Block, location) -> None:
        self.anchor, self.location = anchor, location

    def put(self, op: Operation) -> Operation:
        op.location = self.location
        if isinstance(self.anchor, Block):
            return self.anchor.append(op)
        return insert_before(self.anchor, op)

    def const(self, value: int, t: T.TileType = I32) -> Value:
        return self.put(make_splat(value, t)).results[0]

    def op(self, name: str, operands: list[Value], t: T.TileType = I32, **attrs) -> Value:
        return self.put(make_op(name, operands, [t], attrs)).results[0]

    def less(self, a: Value, b: Value, unsigned: bool) -> Value:
        return self.op("cmpi", [a, b], T.TileType((), T.I1, REGS),
                       comparison_predicate=ComparisonPredicate.less_than,
                       signedness=Signedness.unsigned if unsigned else Signedness.signed)

    def equal(self, a: Value, b: Value) -> Value:
        return self.op("cmpi", [a, b], T.TileType((), T.I1, REGS),
                       comparison_predicate=ComparisonPredicate.equal,
                       signedness=Signedness.signed)


def _pipeline(entry: Operation, loop: Operation, copies: list[Operation], stages: int,
              stride: int, ring: int) -> None:
    body = loop.regions[0].block
    lb, ub, step = loop.operands[:3]
    unsigned = bool(loop.attributes.get("unsignedCmp"))
    loop = _carry_stage_and_phase(entry, loop)
    body = loop.regions[0].block
    stage, phase = body.arguments[-2:]
    issue = _Issuer(copies, stages, stride, ring, unsigned, ub)

    before = _Emitter(loop, loop.location)
    before.put(make_op("barrier", [], [], {}))
    if _nested(loop):  # entered again: the stages' parities start over
        before.put(make_op("tma_ring_reset", [], [], {"ring": ring, "stages": stages}))
    for j in range(stages - 1):   # the prologue: iterations 0 .. N-2
        iteration = lb if j == 0 else before.op(
            "addi", [lb, before.op("muli", [before.const(j), step])])
        issue.at(before, iteration, before.const(j))

    first = copies[0]
    inside = _Emitter(first, first.location)
    ahead = inside.op("addi", [body.arguments[0],
                               inside.op("muli", [inside.const(stages - 1), step])])
    last_used = inside.op("addi", [stage, inside.const(stages - 1)])
    wraps = inside.less(last_used, inside.const(stages), unsigned=False)
    target = inside.op("select", [wraps, last_used,
                                  inside.op("subi", [last_used, inside.const(stages)])])
    issue.at(inside, ahead, target)
    inside.put(make_op("tma_wait", [stage, phase], [], {"ring": ring, "stages": stages}))
    for op in copies:
        body.ops.remove(op)
    _move_descriptors(body, [c.attributes["buffer"] for c in copies], stage, stride)
    _advance(body, stage, phase, stages)


def _nested(loop: Operation) -> bool:
    """Whether the loop sits in another loop (so it may start more than once)."""
    return outermost(loop) is not loop


class _Issuer:
    """The ring's copies of one iteration, if it exists, into one stage."""

    def __init__(self, copies: list[Operation], stages: int, stride: int, ring: int,
                 unsigned: bool, upper: Value) -> None:
        self.copies, self.stages, self.stride, self.ring = copies, stages, stride, ring
        self.unsigned, self.upper = unsigned, upper
        self.expect = sum(_bytes(c) for c in copies)

    def at(self, emit: _Emitter, iteration: Value, stage: Value) -> None:
        """if (iteration < upper) { coordinates of ``iteration``; tma_issue ... }"""
        exists = emit.less(iteration, self.upper, self.unsigned)
        then = Block()
        inner = _Emitter(then, emit.location)
        body = self.copies[0].parent
        mapping = {body.arguments[0]: iteration}
        for copy in self.copies:
            for v in copy.operands:
                for op in slice_of(body, v):
                    if op.results[0] not in mapping:
                        clone = make_op(op.name, [mapping.get(o, o) for o in op.operands],
                                        [r.type for r in op.results], dict(op.attributes))
                        inner.put(clone)
                        mapping.update(zip(op.results, clone.results))
        for i, copy in enumerate(self.copies):
            attrs = {"tensor": copy.attributes["tensor"], "buffer": copy.attributes["buffer"],
                     "ring": self.ring, "stages": self.stages, "stride": self.stride,
                     "expect": self.expect if i == 0 else 0}
            operands = [stage, *(mapping.get(v, v) for v in copy.operands)]
            inner.put(make_op("tma_issue", operands, [], attrs,
                              operand_segments=[1, len(copy.operands)]))
        inner.put(make_op("yield", [], [], {}))
        emit.put(make_op("if", [exists], [], {}, [Region([then]), Region()]))


def _bytes(copy: Operation) -> int:
    buffer = copy.attributes["buffer"]
    return buffer.num_elements * TensorMapSpec.parse(copy.attributes["tensor"]).element_bytes


def _carry_stage_and_phase(entry: Operation, loop: Operation) -> Operation:
    """The loop again, carrying two more i32 values (the stage index and the parity its
    wait expects), both starting at 0."""
    lb, ub, step, *inits = loop.operands
    emit = _Emitter(loop, loop.location)
    zero = emit.const(0)
    body = loop.regions[0].block
    body.add_argument(I32, "stage")
    body.add_argument(I32, "phase")
    region = loop.regions[0]
    new = make_op("for", [lb, ub, step, *inits, zero, zero],
                  [*loop.result_types, I32, I32], dict(loop.attributes), [],
                  [1, 1, 1, len(inits) + 2], loop.location)
    new.source = loop.source
    region.parent = new
    new.regions = [region]
    insert_before(loop, new)
    module = Module()
    module.items = [entry]
    replace_uses(module, dict(zip(loop.results, new.results)))
    loop.parent.ops.remove(loop)
    return new


def _move_descriptors(body: Block, buffers: list[T.Type], stage: Value, stride: int) -> None:
    """Each descriptor of a ring buffer plus the stage's offset (its start address field
    counts 16-byte units: PTX ISA, matrix descriptor formats of wgmma and tcgen05)."""
    descriptors = [op for op in body.ops
                   if op.name in DESCRIPTORS and op.attributes["buffer"] in buffers]
    if not descriptors:
        return
    emit = _Emitter(descriptors[0], descriptors[0].location)
    units = emit.op("muli", [stage, emit.const(stride // 16)])
    wide = T.TileType((), T.I64, REGS)
    offset = emit.op("exti", [units], wide, signedness=Signedness.unsigned)
    for op in descriptors:
        after = body.ops[body.ops.index(op) + 1]
        moved = _Emitter(after, op.location).op("addi", [op.results[0], offset], wide)
        for user in body.ops:
            if user is not moved.owner and op.results[0] in user.operands:
                user.operands = [moved if v is op.results[0] else v for v in user.operands]


def _advance(body: Block, stage: Value, phase: Value, stages: int) -> None:
    """The next iteration's stage (wrapping to 0) and parity (flipped on the wrap)."""
    end = body.terminator
    emit = _Emitter(end, end.location)
    following = emit.op("addi", [stage, emit.const(1)])
    wrapped = emit.equal(following, emit.const(stages))
    next_stage = emit.op("select", [wrapped, emit.const(0), following])
    flipped = emit.op("xori", [phase, emit.const(1)])
    next_phase = emit.op("select", [wrapped, flipped, phase])
    end.operands = [*end.operands, next_stage, next_phase]
    if end.operand_segments is not None:
        end.operand_segments = [len(end.operands)]
