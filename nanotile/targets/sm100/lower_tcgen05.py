"""lower-tcgen05: an MMA on sm_100a's tensor cores becomes a tensor-memory allocation,
descriptors, tcgen05.mma, a commit to an mbarrier and the loads and stores of tensor
memory around them.  simt -> simt.

``tmem_mma`` (distribute, for an accumulator in a ``#tmem<acc, mMnN>`` layout) holds one
thread's accumulator registers (row 32 w + t of each 128-row block b of the M x N tile in
thread t of warp w, column j in register b N + j: what tcgen05.ld.32x32b gives from TMEM
column b N + j), with A (M x K) and B (K x N) in shared memory in K-major
``wgmma_operand`` layouts (tcgen05_plan.py; B MN-major where a TMA copy landed it:
descriptor bit 16). The pass writes:

- at the entry, ``tmem_alloc``: the CTA's tensor memory (TMEM), a power of two of at
  least 32 columns, M / 128 x N for each accumulator kept in TMEM across a loop (below)
  and the most for the others, which take turns; before each ``return``,
  ``tmem_dealloc``;
- per op: the accumulator's registers written to its TMEM columns (``tmem_store``,
  tcgen05.st.32x32b: each warp its 32 lanes, which are its rows); ``fence_proxy_async``
  (A and B were written by ordinary stores, the generic proxy, and the MMA reads them
  through the async proxy: PTX ISA, "Proxies"), unless both came by TMA (the async proxy
  already, published by the copies' mbarrier); ``tcgen05_barrier`` (tcgen05.fence::
  before_thread_sync, a CTA barrier, tcgen05.fence::after_thread_sync: every warp's
  tcgen05.st and operand stores happen before thread 0's MMA, PTX ISA "Memory consistency
  model for 5th generation of TensorCore operations"); per K step s (16 for f16/bf16, 8
  for tf32, 32 for f8 and i8: tcgen05_plan.k_step) and 128-row block b a descriptor of A at
  (128 b, K s) and of B at (K s, 0) and a ``tcgen05_mma`` (its ``kind``) into the
  block's columns (issued by thread 0, D = A B + D); ``tcgen05_commit_wait`` (thread 0 commits the MMAs to an mbarrier,
  every thread waits for it: the results are in TMEM and the operands' buffers free for
  the next writes); ``tmem_load`` (tcgen05.ld.32x32b + wait::ld): the result
  registers. A 64-row tile (one M = 64 instruction, D in the first 16 lanes of each
  warp's quarter) is stored and loaded in the 16x32bx2 form instead (``split``: the
  second half's column offset).
- A ``for`` whose iteration value is the op's accumulator (its only use) and whose next
  value is the op's result (its only use) keeps the accumulator in TMEM: the initial
  value is stored before the loop, the result loaded after it, and the loop carries
  nothing for it (the K loop's MMAs accumulate in place, as tileiras' do).

``tmem_mma_scaled`` (mmaf_scaled, kind::mxf8f6f4.block_scale) also holds each thread's
scale words of A and B (distribute_mma.py). They go to TMEM columns after the
accumulators', taken in turns: every warp stores its words to its own 32 lanes (lane t:
the scales of rows / columns t + 32 j in column j of a K-block group, four K blocks a
word), so each lane quarter holds all of them, as the PTX ISA asks ("Block Scaling":
scale factors duplicated to all lane partitions; tileiras copies them in with
tcgen05.cp.32x128b.warpx4, 32 lanes x 4 words, to the same place). The MMA of K step s
and row block b reads A's scales from the column of its group (s / 4) and block (4 b
columns further: its rows 128 b + 32 j + t), SFA_ID = s % 4 choosing the byte; B's
likewise (SFB_ID). Those columns are rewritten on each issue after the previous
commit's wait, so one range serves every block-scaled site (tmem_columns.py places
them).

A descriptor's start is its matrix's first element (a K step inside a swizzle atom is a
plain 32-byte offset: the hardware swizzles the addresses it derives, as for wgmma), its
leading and stride byte offsets those of lower-wgmma's ``Operand`` (the same canonical
layouts); select_tcgen05.py encodes them in sm_100's format.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...diagnostics import CompileError, Diagnostic
from ...ir import types as T
from ...ir.core import Block, Module, Operation, Value, make_op
from ...ir.layouts import REGS, TMEM_COLUMNS, TMEM_HALF_M, TMEM_M
from ...ir.rewrite import erase, insert_before, replace_uses
from ...passes.base import Pass, PassContext
from ..sm90.lower_wgmma import Operand
from .tcgen05_plan import (
    KINDS,
    SCALED_KIND,
    block_scaled_descriptor,
    instruction_descriptor,
    k_step,
)
from .tmem_columns import SCALES_PER_WORD, place, row_blocks, scale_columns, scale_words_at

MMA_OPS = ("tmem_mma", "tmem_mma_scaled")
FIRST_INIT = 3    # a for's operands: lower bound, upper bound, step, initial values


@dataclass(frozen=True)
class LowerTcgen05(Pass):
    """tmem_mma -> TMEM allocation, descriptors, tcgen05.mma, commit and TMEM loads."""

    name = "lower-tcgen05"
    input = "simt"
    output = "simt"

    def apply(self, module: Module, ctx: PassContext) -> bool:
        changed = False
        for entry in module.entries():
            sites = [op for op in entry.walk() if op.name in MMA_OPS]
            if sites:
                lower_entry(module, entry, sites)
                changed = True
        return changed


def lower_entry(module: Module, entry: Operation, sites: list[Operation]) -> None:
    body = entry.regions[0].block
    copied = [o.attributes["buffer"] for o in entry.walk() if o.name == "tma_copy"]
    kept = {op: _kept_loop(op) for op in sites}
    borrowing: set[Operation] = set()
    column, scales, columns = place(sites, kept, borrowing)
    if columns > TMEM_COLUMNS:  # scale words beside a full accumulator: borrow columns
        borrowing = {op for op in sites if scale_columns(op) and row_blocks(op) > 1}
        column, scales, columns = place(sites, kept, borrowing)
    if columns > TMEM_COLUMNS:
        raise CompileError(Diagnostic("error", f"lower-tcgen05: the accumulators need "
                                               f"{columns} columns of tensor memory; a CTA "
                                               f"has {TMEM_COLUMNS}", "<lower-tcgen05>"))
    alloc = make_op("tmem_alloc", [], [T.TileType((), T.I32, REGS)], {"columns": columns})
    alloc.source, alloc.location = sites[0].source, sites[0].location
    base = alloc.results[0]
    body.ops.insert(0, alloc)
    alloc.parent = body
    returns = [o for o in entry.walk() if o.name == "return"]
    for ret in returns:
        _emit(ret, "tcgen05_barrier", [], None)
        _emit(ret, "tmem_dealloc", [base], None, columns=columns)
    mapping: dict[Value, Value] = {}
    for op in sites:
        loop = kept[op]
        both_copied = op.attributes["lhs"] in copied and op.attributes["rhs"] in copied
        words = None if op in borrowing else scales  # None: issue borrows columns
        if loop is None:
            _emit(op, "tmem_store", [base, op.operands[0]], None, column=column[op],
                  **_split(op))
            issue(op, base, column[op], both_copied, words)
            mapping[op.results[0]] = _emit(op, "tmem_load", [base], op.results[0].type,
                                           column=column[op], **_split(op))
            erase(op)
        else:
            keep_in_tmem(module, op, loop, base, column[op], both_copied, words)
    replace_uses(module, mapping)


def issue(op: Operation, base: Value, column: int, both_copied: bool,
          scales: int | None) -> None:
    """Before ``op``: the operands published to the async proxy (a block-scaled op's
    scale words stored to TMEM columns ``scales``..), the MMA per K step from thread 0,
    the commit and every thread's wait for it.

    A block-scaled op whose accumulator fills tensor memory (two 128-row blocks of 256
    columns: ``scales`` None) issues one row block at a time, its scale words in the
    first columns of the other block's accumulator, saved to registers before and
    restored after (its MMAs are done then: the wait)."""
    if scales is None:
        n = op.attributes["rhs"].shape[1]
        for block in range(row_blocks(op)):
            borrowed = column + (1 - block) * n
            saved = _emit(op, "tmem_load", [base], T.TileType((scale_columns(op),), T.F32,
                                                                REGS), column=borrowed)
            _issue(op, base, column, both_copied, borrowed, [block])
            _emit(op, "tmem_store", [base, saved], None, column=borrowed)
        return
    _issue(op, base, column, both_copied, scales, range(row_blocks(op)))


def _issue(op: Operation, base: Value, column: int, both_copied: bool, scales: int,
           blocks) -> None:
    lhs, rhs = op.attributes["lhs"], op.attributes["rhs"]
    if op.name == "tmem_mma_scaled":
        _emit(op, "tmem_store", [base, op.operands[1]], None, column=scales)
        _emit(op, "tmem_store", [base, op.operands[2]], None,
              column=scales + op.operands[1].type.shape[0])
    if not both_copied:
        _emit(op, "fence_proxy_async", [], None)
    _emit(op, "tcgen05_barrier", [], None)
    a_of = Operand(lhs, "a", (0, 0), (1, 1))
    b_of = Operand(rhs, "b", (0, 0), (1, 1))  # MN-major when a TMA copy landed it
    n = rhs.shape[1]
    element = lhs.element.name
    unsigned = tuple(bool(op.attributes.get(f"unsigned_{side}")) for side in ("lhs", "rhs"))
    idesc = instruction_descriptor(element, min(lhs.shape[0], TMEM_M), n, rhs.element.name,
                                   b_of.mn_major,
                                   unsigned)
    step = k_step(element)
    for block in blocks:  # all K steps of a block, then the next
        d = column + block * n
        for s in range(lhs.shape[1] // step):
            a = _descriptor(op, a_of, (TMEM_M * block, step * s))
            b = _descriptor(op, b_of, (step * s, 0))
            if op.name == "tmem_mma_scaled":
                _emit(op, "tcgen05_mma", [base, a, b], None, column=d,
                      **_scaled(op, block, s, scales, b_of.mn_major))
            else:
                _emit(op, "tcgen05_mma", [base, a, b], None, idesc=idesc,
                      kind=KINDS[element][0], column=d)
    _emit(op, "tcgen05_commit_wait", [], None)


def _scaled(op: Operation, block: int, step: int, scales: int, b_mn_major: bool) -> dict:
    """The block-scaled MMA's attributes for row block ``block`` and K step ``step`` (its
    K block): the scale words' columns (tmem_columns.py) and the byte of each word."""
    lhs, rhs = op.attributes["lhs"], op.attributes["rhs"]
    byte = step % SCALES_PER_WORD
    idesc = block_scaled_descriptor(lhs.element.name, TMEM_M, rhs.shape[1], byte, byte,
                                    rhs.element.name, b_mn_major)
    scale_a, scale_b = scale_words_at(op, block, step, scales)
    return {"idesc": idesc, "kind": SCALED_KIND, "scale_a": scale_a, "scale_b": scale_b}


def _descriptor(anchor: Operation, of: Operand, first: tuple[int, int]) -> Value:
    return _emit(anchor, "tcgen05_descriptor", [], T.TileType((), T.I64, REGS),
                 buffer=of.buffer, offset=of.at(first), leading=of.leading,
                 stride=of.stride, swizzle=of.width)


# ---------------------------------------------------------------- the K loop

def _kept_loop(op: Operation) -> Operation | None:
    """The ``for`` that can keep ``op``'s accumulator in TMEM (module docstring), or None."""
    block = op.parent
    loop = block.parent.parent if block is not None and block.parent is not None else None
    if loop is None or loop.name != "for":
        return None
    acc, result = op.operands[0], op.results[0]
    if acc.owner is not block or acc not in block.arguments[1:]:
        return None
    i = block.arguments.index(acc) - 1
    terminator = block.terminator
    if terminator is None or terminator.name != "continue" or \
            _continues(loop) != [terminator]:
        return None
    uses_acc = [o for o in loop.walk() if acc in o.operands]
    uses_result = [o for o in loop.walk() if result in o.operands]
    if uses_acc != [op] or op.operands.count(acc) != 1 or uses_result != [terminator] or \
            terminator.operands.count(result) != 1 or terminator.operands[i] is not result:
        return None
    return loop


def _continues(loop: Operation) -> list[Operation]:
    """The continue ops of ``loop``'s own body (not of loops nested in it)."""
    found = []

    def visit(op: Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    if inner.name == "continue":
                        found.append(inner)
                    if inner.name not in ("for", "loop"):
                        visit(inner)
    visit(loop)
    return found


def keep_in_tmem(module: Module, op: Operation, loop: Operation, base: Value, column: int,
                 both_copied: bool, scales: int | None) -> None:
    """The accumulator stays in TMEM across ``loop``: stored before it, loaded after it,
    no longer carried."""
    body: Block = op.parent
    acc = op.operands[0]
    i = body.arguments.index(acc) - 1
    result_t = op.results[0].type
    _emit(loop, "tmem_store", [base, loop.operands[FIRST_INIT + i]], None, column=column,
          **_split(op))
    issue(op, base, column, both_copied, scales)
    erase(op)
    after = make_op("tmem_load", [base], [result_t], {"column": column, **_split(op)})
    after.source, after.location = loop.source, loop.location
    outer = loop.parent
    outer.ops.insert(outer.ops.index(loop) + 1, after)
    after.parent = outer
    replace_uses(module, {loop.results[i]: after.results[0]})
    # drop iteration value i: its initial value, block argument, next value and result
    terminator = body.terminator
    del terminator.operands[i]
    if terminator.operand_segments is not None:
        terminator.operand_segments = [len(terminator.operands)]
    del loop.operands[FIRST_INIT + i]
    if loop.operand_segments is not None:
        loop.operand_segments = loop.operand_segments[:-1] + \
            [loop.operand_segments[-1] - 1]
    del body.arguments[i + 1]
    for k, a in enumerate(body.arguments):
        a.index = k
    del loop.results[i]
    for k, r in enumerate(loop.results):
        r.index = k


def _split(op: Operation) -> dict:
    """The TMEM access form of ``op``'s accumulator: none (32x32b), or for 64 rows the
    16x32bx2 form's half-split, N / 2 columns (layouts.tmem_accumulator)."""
    m, n = op.attributes["lhs"].shape[0], op.attributes["rhs"].shape[1]
    return {"split": n // 2} if m == TMEM_HALF_M else {}


def _emit(anchor: Operation, name: str, operands: list[Value], t: T.Type | None, **attrs):
    new = make_op(name, operands, [t] if t is not None else [], attrs)
    new.source, new.location = anchor.source, anchor.location
    insert_before(anchor, new)
    return new.results[0] if t is not None else new
