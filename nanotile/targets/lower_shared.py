"""Data movement through shared memory: layout conversions, reductions, scans, mma.

``convert_layout`` to ``#shared<offset=B>`` (inserted by assign-layouts, placed by
allocate-shared) writes a register tile to the CTA's shared buffer at its row-major
linear index from byte B (``esize`` bytes per element: the register's width), between
two ``bar.sync 0`` (the first keeps earlier readers safe, the second publishes the
writes). The ops that move elements between threads then read their operands there
(``SharedTile``): each thread reads the elements its result slots need. broadcast (of a
non-scalar), permute, cat, extract and insert are such gathers; reduce and scan loop
over the reduced dimension in shared memory, running the op's scalar body per step;
mmaf/mmai use the tensor cores where lower_mma can, else an FMA loop over K. Each reader
ends with ``bar.sync 0``, after which its buffers are free for reuse. pack/unpack and
print still write a private image at offset 0 (between their own barriers, never while
a #shared value is alive).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import types as T
from ..ir.core import Operation, Value
from ..ir.enums import Signedness
from . import lower_mma
from .layout import (
    STREAM_CHUNK_BYTES,
    Layout,
    TileRegs,
    choose_layout,
    reduce_strategy,
    row_major_strides,
    shared_element_bytes,
    warp_plan,
)
from .lower import Lowering, Unsupported
from .ptx.builder import reg_class

_ST = {"b16": "b16", "b32": "b32", "f32": "f32", "b64": "b64", "f64": "f64", "pred": "b8"}


def esize(t: T.Type) -> int:
    """Bytes per element in shared memory: the register's width (i1 as a byte)."""
    return shared_element_bytes(t)


@dataclass
class SharedTile:
    """A lowered ``#shared`` tile: its elements lie row-major in ``__nt_smem`` from byte
    ``offset``. ``uniform`` is the register of a source whose elements are all equal
    (a broadcast scalar), which a broadcast may use instead of reading shared memory."""

    element: T.Type
    shape: tuple[int, ...]
    offset: int
    uniform: str | None = None

    @property
    def n(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


def _next_is_convert(op: Operation, step: int) -> bool:
    """Whether the op ``step`` places after ``op`` in its block is another convert_layout
    (two conversions in a row share the barriers between them)."""
    block = op.parent
    if block is None:
        return False
    i = block.ops.index(op) + step
    return 0 <= i < len(block.ops) and block.ops[i].name == "convert_layout"


def convert_layout(lw: Lowering, op: Operation) -> None:
    """A register tile -> ``#shared<offset=B>``: barrier, stores, barrier."""
    src = lw.get(op.operands[0])
    rt = op.results[0].type
    layout = rt.layout if isinstance(rt, T.TileType) else None
    if layout is None or layout.kind != "shared":
        raise Unsupported(f"convert_layout to {rt}: only register -> #shared is lowered")
    if layout.offset is None:
        raise Unsupported(f"{rt} has no place in shared memory (run allocate-shared)")
    if not isinstance(src, TileRegs):
        raise Unsupported(f"convert_layout of {op.operands[0].type}: the source is not in "
                          "registers")
    fn = lw.fn
    if not _next_is_convert(op, -1):
        fn.emit("bar.sync 0")
    base = smem_base(lw)
    used = to_shared(lw, src, layout.offset, base)
    fn.need_shared(layout.offset + used)
    if not _next_is_convert(op, 1):
        fn.emit("bar.sync 0")
    uniform = src.regs[0] if src.layout.kind == "replicated" else None
    lw.values[op.results[0]] = SharedTile(src.element, src.shape, layout.offset, uniform)


def shared_sources(lw: Lowering, op: Operation, values: list[Value]) -> list[SharedTile]:
    """The operands ``values`` of ``op``, which convert_layout put in shared memory."""
    tiles = [lw.get(v) for v in values]
    for v, t in zip(values, tiles):
        if not isinstance(t, SharedTile):
            raise Unsupported(f"'{op.name}' reads its operand of type {v.type} from shared "
                              "memory: convert_layout to #shared must come first "
                              "(assign-layouts)")
    return tiles


def smem_base(lw: Lowering) -> str:
    r = lw.fn.reg("b32")
    lw.fn.emit(f"mov.u32 {r}, __nt_smem")
    return r


def to_shared(lw: Lowering, tile: TileRegs, offset: int, base: str) -> int:
    """Write every element of ``tile`` at ``offset`` bytes; returns the bytes used."""
    fn = lw.fn
    layout = choose_layout(tile.shape, lw.threads)
    size = esize(tile.element)
    for k in range(layout.slots):
        linear = lw.linear(k) if layout.kind == "blocked" else "0"
        addr = fn.reg("b32")
        fn.emit(f"mad.lo.s32 {addr}, {linear}, {size}, {base}")
        reg = lw.slot(tile, k)
        if reg_class(tile.element) == "pred":
            tmp = fn.reg("b32")
            fn.emit(f"selp.b32 {tmp}, 1, 0, {reg}")
            reg = tmp
        fn.emit(f"st.shared.{_ST[reg_class(tile.element)]} [{addr}+{offset}], {reg}",
                lw.valid(layout, k))
    used = layout.elements * size
    return used


def from_shared(lw: Lowering, t: T.Type, index: str, offset: int, base: str, out: str,
                pred: str | None = None) -> None:
    fn = lw.fn
    addr = fn.reg("b32")
    fn.emit(f"mad.lo.s32 {addr}, {index}, {esize(t)}, {base}")
    if reg_class(t) == "pred":
        tmp = fn.reg("b32")
        fn.emit(f"mov.u32 {tmp}, 0")
        fn.emit(f"ld.shared.u8 {tmp}, [{addr}+{offset}]", pred)
        fn.emit(f"setp.ne.s32 {out}, {tmp}, 0")
    else:
        fn.emit(f"ld.shared.{_ST[reg_class(t)]} {out}, [{addr}+{offset}]", pred)


def publish(lw: Lowering, tiles: list[TileRegs]) -> tuple[str, list[int]]:
    """Barrier, write ``tiles`` one after another, barrier. Returns (base, offsets)."""
    lw.fn.emit("bar.sync 0")
    base = smem_base(lw)
    offsets, at = [], 0
    for tile in tiles:
        offsets.append(at)
        at += to_shared(lw, tile, at, base)
        at = (at + 15) // 16 * 16
    lw.fn.need_shared(at)
    lw.fn.emit("bar.sync 0")
    return base, offsets


def broadcast_thread0(lw: Lowering, reg: str, t: T.Type) -> None:
    """Give every thread the value ``reg`` has in thread 0."""
    fn = lw.fn
    fn.emit("bar.sync 0")
    base = smem_base(lw)
    p = lw.first_thread()
    if reg_class(t) == "pred":
        raise Unsupported("broadcast of an i1 from one thread")
    fn.emit(f"st.shared.{_ST[reg_class(t)]} [{base}], {reg}", p)
    fn.need_shared(8)
    fn.emit("bar.sync 0")
    fn.emit(f"ld.shared.{_ST[reg_class(t)]} {reg}, [{base}]")


def result_index(lw: Lowering, out: TileRegs, k: int) -> list[str]:
    if out.layout.kind == "replicated":
        return ["0"] * len(out.shape)
    return lw.split_index(lw.linear(k), out.shape)


# ---- shape ops -------------------------------------------------------------------------

def reshape(lw: Lowering, op: Operation) -> None:
    src: TileRegs = lw.get(op.operands[0])
    rt = op.results[0].type
    producer = op.operands[0].owner
    along = [d for d, n in enumerate(rt.shape) if n != 1]
    if getattr(producer, "name", None) == "iota" and len(along) == 1:
        lw.iota_dims[op.results[0]] = along[0]  # an iota along one dimension: rematerialise
    layout = src.layout if src.layout.kind == "replicated" else choose_layout(rt.shape, lw.threads)
    lw.values[op.results[0]] = TileRegs(src.element, rt.shape, layout, src.regs)


def broadcast(lw: Lowering, op: Operation) -> None:
    src = lw.get(op.operands[0])
    rt = op.results[0].type
    if isinstance(src, SharedTile):
        if src.uniform is not None:  # every element is the same register: no reads
            lw.values[op.results[0]] = TileRegs(
                src.element, rt.shape, Layout("replicated", rt.num_elements, lw.threads),
                [src.uniform])
            lw.fn.emit("bar.sync 0")  # the buffer is free again after this op
            return

        def gathered(idx: list[str]) -> str:
            return lw.combine_index([i if s != 1 else "0" for i, s in zip(idx, src.shape)],
                                    src.shape)
        gather(lw, op, [src], gathered)
        return
    if src.layout.kind == "replicated":
        lw.values[op.results[0]] = TileRegs(
            src.element, rt.shape, Layout("replicated", rt.num_elements, lw.threads), src.regs)
        return
    if src.shape == rt.shape:
        lw.values[op.results[0]] = src
        return
    if op.operands[0] in lw.iota_dims:  # the coordinate along one dimension: no data moves
        dim = lw.iota_dims[op.operands[0]]
        out = lw.new_tile(rt)
        for k, reg in enumerate(out.regs):
            index = result_index(lw, out, k)[dim]
            if reg_class(out.element) == "b64":
                lw.fn.emit(f"cvt.s64.s32 {reg}, {index}")
            else:
                lw.fn.emit(f"mov.b32 {reg}, {index}")
        lw.values[op.results[0]] = out
        return
    raise Unsupported(f"broadcast of {op.operands[0].type}: a non-scalar source must be "
                      "converted to #shared first (assign-layouts)")


def permute(lw: Lowering, op: Operation) -> None:
    src = shared_sources(lw, op, op.operands[:1])[0]
    perm = list(op.attributes["permutation"])

    def index(idx: list[str]) -> str:
        source = ["0"] * len(perm)
        for d, p in enumerate(perm):
            source[p] = idx[d]
        return lw.combine_index(source, src.shape)
    gather(lw, op, [src], index)


def extract(lw: Lowering, op: Operation) -> None:
    src = shared_sources(lw, op, op.operands[:1])[0]
    starts = [lw.get(v).regs[0] for v in op.operands[1:]]
    rshape = op.results[0].type.shape

    def index(idx: list[str]) -> str:
        source = []
        for i, s, d in zip(idx, starts, rshape):
            r = lw.fn.reg("b32")
            lw.fn.emit(f"mad.lo.s32 {r}, {s}, {d}, {i}")
            source.append(r)
        return lw.combine_index(source, src.shape)
    gather(lw, op, [src], index)


def cat(lw: Lowering, op: Operation) -> None:
    lhs, rhs = shared_sources(lw, op, op.operands[:2])
    dim = op.attributes["dim"]
    split = lhs.shape[dim]
    fn = lw.fn
    lo = min(lhs.offset, rhs.offset)  # gather reads from here; shifts are in elements
    lhs_shift, rhs_shift = ((s.offset - lo) // esize(s.element) for s in (lhs, rhs))

    def index(idx: list[str]) -> str:
        left = lw.combine_index(idx, lhs.shape)
        if lhs_shift:
            shifted_left = fn.reg("b32")
            fn.emit(f"add.s32 {shifted_left}, {left}, {lhs_shift}")
            left = shifted_left
        shifted = list(idx)
        r = fn.reg("b32")
        fn.emit(f"sub.s32 {r}, {idx[dim]}, {split}")
        shifted[dim] = r
        right = lw.combine_index(shifted, rhs.shape)
        if rhs_shift:
            fn.emit(f"add.s32 {right}, {right}, {rhs_shift}")
        p, out = fn.reg("pred"), fn.reg("b32")
        fn.emit(f"setp.lt.s32 {p}, {idx[dim]}, {split}")
        fn.emit(f"selp.b32 {out}, {left}, {right}, {p}")
        return out
    gather(lw, op, [lhs, rhs], index, lo)


def insert(lw: Lowering, op: Operation) -> None:
    """insert: the destination, with the source tile written at (indices * source shape)."""
    src, dst = shared_sources(lw, op, op.operands[:2])
    starts = [lw.get(v).regs[0] for v in op.operands[2:]]
    fn = lw.fn
    lo = min(src.offset, dst.offset)  # gather reads from here; shifts are in elements
    dst_shift, src_shift = ((s.offset - lo) // esize(s.element) for s in (dst, src))

    def index(idx: list[str]) -> str:
        inside, local = fn.reg("pred"), []
        fn.emit(f"setp.eq.s32 {inside}, 1, 1")
        for i, s, d in zip(idx, starts, src.shape):
            r = fn.reg("b32")
            fn.emit(f"mul.lo.s32 {r}, {s}, {d}")
            fn.emit(f"sub.s32 {r}, {i}, {r}")
            fn.emit(f"setp.lt.and.u32 {inside}, {r}, {d}, {inside}")
            local.append(r)
        own = lw.combine_index(idx, dst.shape)
        other = lw.combine_index(local, src.shape)
        if src_shift:
            fn.emit(f"add.s32 {other}, {other}, {src_shift}")
        if dst_shift:  # (own may be a cached index register: a new one)
            moved = fn.reg("b32")
            fn.emit(f"add.s32 {moved}, {own}, {dst_shift}")
            own = moved
        out = fn.reg("b32")
        fn.emit(f"selp.b32 {out}, {other}, {own}, {inside}")
        return out
    gather(lw, op, [dst, src], index, lo)


_BYTES = {"b16": 2, "b32": 4, "f32": 4, "b64": 8, "f64": 8}
_LD = {1: "s8", 2: "b16", 4: "b32", 8: "b64"}


def pack_unpack(lw: Lowering, op: Operation) -> None:
    """pack / unpack: the same bytes seen as i8 elements or as wider elements. The source
    is written to shared memory densely (its own byte width) and read back as the other."""
    src: TileRegs = lw.get(op.operands[0])
    out = lw.new_tile(op.results[0].type)
    widths = []
    for t in (src.element, out.element):
        if t.name == "i8":
            widths.append(1)
        elif reg_class(t) in _BYTES and t.bitwidth in (16, 32, 64):
            widths.append(_BYTES[reg_class(t)])
        else:
            raise Unsupported(f"{op.name} of {t.name}")
    fn = lw.fn
    fn.emit("bar.sync 0")
    base = smem_base(lw)
    layout = choose_layout(src.shape, lw.threads)
    for k in range(layout.slots):
        addr = fn.reg("b32")
        linear = lw.linear(k) if layout.kind == "blocked" else "0"
        fn.emit(f"mad.lo.s32 {addr}, {linear}, {widths[0]}, {base}")
        kind = "b8" if widths[0] == 1 else _ST[reg_class(src.element)]
        fn.emit(f"st.shared.{kind} [{addr}], {lw.slot(src, k)}", lw.valid(layout, k))
    fn.need_shared(layout.elements * widths[0])
    fn.emit("bar.sync 0")
    for k, reg in enumerate(out.regs):
        addr = fn.reg("b32")
        linear = lw.linear(k) if out.layout.kind == "blocked" else "0"
        fn.emit(f"mad.lo.s32 {addr}, {linear}, {widths[1]}, {base}")
        kind = "s8" if widths[1] == 1 else _ST[reg_class(out.element)]
        fn.emit(f"ld.shared.{kind} {reg}, [{addr}]", lw.valid(out.layout, k))
    fn.emit("bar.sync 0")
    lw.values[op.results[0]] = out


def gather(lw: Lowering, op: Operation, sources: list[SharedTile], index,
           offset: int | None = None) -> None:
    """Result slot k reads shared element ``index(its multi-index)``, counted from byte
    ``offset`` (default: the first source's)."""
    base = smem_base(lw)
    if offset is None:
        offset = sources[0].offset
    out = lw.new_tile(op.results[0].type)
    for k, reg in enumerate(out.regs):
        linear = index(result_index(lw, out, k))
        from_shared(lw, out.element, linear, offset, base, reg,
                    lw.valid(out.layout, k))
    lw.fn.emit("bar.sync 0")
    lw.values[op.results[0]] = out


# ---- reductions and scans --------------------------------------------------------------

def _identity_reg(lw: Lowering, attr, t: T.Type) -> str:
    from .lower_misc import constant_bits

    r = lw.fn.reg(reg_class(t))
    if reg_class(t) == "pred":
        lw.fn.emit(f"setp.ne.s32 {r}, {int(attr.value) & 1}, 0")
    else:
        lw.fn.emit(f"mov.{_ST[reg_class(t)]} {r}, {constant_bits(attr, t)}")
    return r


def _identities(op: Operation) -> list:
    """The identity attributes of a reduce/scan, one per operand."""
    ids = op.attributes["identities"]
    return list(getattr(ids, "elements", ids))


def _copy(fn, cls: str, dst: str, src: str, pred: str | None = None) -> None:
    """mov between two registers of class ``cls`` (predicates move as .pred)."""
    fn.emit(f"mov.{'pred' if cls == 'pred' else _ST[cls]} {dst}, {src}", pred)


def _run_body(lw: Lowering, op: Operation, xs: list[str], accs: list[str]) -> list[str]:
    block = op.regions[0].block
    for i, (x, acc) in enumerate(zip(xs, accs)):
        for arg, reg in ((block.arguments[2 * i], x), (block.arguments[2 * i + 1], acc)):
            lw.values[arg] = TileRegs(arg.type.element, (), Layout("replicated", 1, lw.threads),
                                      [reg])
    for inner in block.ops[:-1]:
        lw.lower_op(inner)
    return [lw.get(v).regs[0] for v in block.ops[-1].operands]


def reduce_or_scan(lw: Lowering, op: Operation) -> None:
    fn = lw.fn
    if all(isinstance(lw.get(v), TileRegs) for v in op.operands):
        strategy = reduce_strategy(op, lw.threads)
        if strategy == "registers":
            return _reduce_or_scan_in_registers(lw, op)
        if strategy == "shuffles":
            return _reduce_by_shuffles(lw, op)
        return _reduce_streamed(lw, op)
    srcs = shared_sources(lw, op, list(op.operands))
    dim, scan = op.attributes["dim"], op.name == "scan"
    reverse = bool(op.attributes.get("reverse", False))
    ids = _identities(op)
    shape = srcs[0].shape
    length, stride = shape[dim], row_major_strides(shape)[dim]
    base, offsets = smem_base(lw), [s.offset for s in srcs]
    outs = [lw.new_tile(r.type) for r in op.results]
    starts, positions = [], []
    valids = [lw.valid(outs[0].layout, k) for k in range(outs[0].layout.slots)]
    for k in range(outs[0].layout.slots):
        idx = result_index(lw, outs[0], k)
        if scan:
            positions.append(idx[dim])
            idx = list(idx)
            idx[dim] = "0"
        else:
            idx = idx[:dim] + ["0"] + idx[dim:]
        starts.append(lw.combine_index(idx, shape))
    accs = [[_identity_reg(lw, a, s.element) for a, s in zip(ids, srcs)] for _ in starts]
    r = fn.reg("b32")
    fn.emit(f"mov.u32 {r}, 0")
    loop = fn.label("reduce")
    fn.place(loop)
    for k, start in enumerate(starts):
        at = fn.reg("b32")
        fn.emit(f"mad.lo.s32 {at}, {r}, {stride}, {start}")
        xs = [fn.reg(reg_class(s.element)) for s in srcs]
        for x, s, off in zip(xs, srcs, offsets):
            from_shared(lw, s.element, at, off, base, x, valids[k])
        new = _run_body(lw, op, xs, accs[k])
        take = None
        if scan:
            take = fn.reg("pred")
            fn.emit(f"setp.{'ge' if reverse else 'le'}.s32 {take}, {r}, {positions[k]}")
        for acc, value, s in zip(accs[k], new, srcs):
            _copy(fn, reg_class(s.element), acc, value, take)
    fn.loop_while_below(r, length, loop)
    fn.emit("bar.sync 0")
    for i, out in enumerate(outs):
        out.regs = [accs[k][i] for k in range(len(starts))]
        if len(out.regs) == 1 and out.layout.kind == "replicated":
            pass
        lw.values[op.results[i]] = out


def _reduce_or_scan_in_registers(lw: Lowering, op: Operation) -> None:
    """reduce/scan along a dimension whose lines each lie in one thread (assign-layouts
    left the operands #blocked: targets.layout.line_in_one_thread). For shape (A, n, B),
    T threads, T | B: result slot k of a reduce is the line (a, b) with a = k*T // B, and
    its element i sits in source slot k + a*(n-1)*B/T + i*B/T of the same thread. The fold
    runs in the spec's order (i ascending; a reverse scan from the end, as the interpreter
    flips, scans and flips back), unrolled: one body per source slot, no shared memory."""
    fn = lw.fn
    srcs: list[TileRegs] = [lw.get(v) for v in op.operands]
    dim, scan = op.attributes["dim"], op.name == "scan"
    reverse = bool(op.attributes.get("reverse", False))
    ids = _identities(op)
    shape = srcs[0].shape
    n, step = shape[dim], row_major_strides(shape)[dim] // lw.threads   # step = B/T
    outs = [lw.new_tile(r.type) for r in op.results]
    lines = outs[0].layout.slots if not scan else srcs[0].layout.slots // n
    for line in range(lines):
        # the first source slot of this line: line -> (a, b-slot), a*n*step + b-slot
        a, b_slot = divmod(line, step)
        first = a * n * step + b_slot
        accs = [_identity_reg(lw, attr, s.element) for attr, s in zip(ids, srcs)]
        order = range(n - 1, -1, -1) if reverse else range(n)
        for i in order:
            slot = first + i * step
            new = _run_body(lw, op, [s.regs[slot] for s in srcs], accs)
            for acc, value, s in zip(accs, new, srcs):
                cls = reg_class(s.element)
                _copy(fn, cls, acc, value)
            if scan:
                for out, acc, s in zip(outs, accs, srcs):
                    cls = reg_class(s.element)
                    _copy(fn, cls, out.regs[slot], acc)
        if not scan:
            for out, acc in zip(outs, accs):
                out.regs[line] = acc
    for out, result in zip(outs, op.results):
        lw.values[result] = out


def _reduce_by_shuffles(lw: Lowering, op: Operation) -> None:
    """reduce along the last dimension on warp shuffles (layout.warp_plan): each thread
    folds its slots of a row, the lanes of a row combine by shfl.sync.bfly (every lane
    ends with the warp's partial), one lane per warp and row writes it to shared memory,
    and each result slot folds its row's warp partials in warp order. The combiner is one
    op whose result does not depend on the order beyond float summation order
    (layout.SHUFFLE_COMBINERS)."""
    fn = lw.fn
    src: TileRegs = lw.get(op.operands[0])
    plan = warp_plan(src.shape, op.attributes["dim"], lw.threads)
    assert plan is not None
    cls = reg_class(src.element)
    rows = src.n // plan.row
    base = smem_base(lw)
    lane_bits = plan.lanes.bit_length() - 1
    # which lane writes, and where: row r, warp w -> word r*W + w
    lane = fn.reg("b32")
    fn.emit(f"and.b32 {lane}, {lw.tid}, {plan.lanes - 1}")
    writer = fn.reg("pred")
    fn.emit(f"setp.eq.s32 {writer}, {lane}, 0")
    warp = fn.reg("b32")
    fn.emit(f"shr.u32 {warp}, {lw.tid}, 5")
    partials = []
    # a row's first slot: case L <= 32 every slot holds 32/L rows; case T | L, row r
    # starts at slot r*slots_per_row
    for first in range(0, src.layout.slots, plan.slots_per_row):
        acc = fn.reg(cls)
        fn.emit(f"mov.{_ST[cls]} {acc}, {src.regs[first]}")
        for k in range(first + 1, first + plan.slots_per_row):
            acc = _combine(lw, op, src.regs[k], acc)
        offset = plan.lanes // 2
        while offset:
            other = fn.reg(cls)
            fn.emit(f"shfl.sync.bfly.b32 {other}, {acc}, {offset}, 31, 0xffffffff")
            acc = _combine(lw, op, other, acc)
            offset //= 2
        partials.append((first, acc))
    fn.emit("bar.sync 0")  # earlier readers of the buffer are done
    for first, acc in partials:
        # row of this thread's slot `first`: (tid + T*first) >> log2(L) when L <= 32,
        # first // slots_per_row otherwise (a whole slot range is one row)
        word = fn.reg("b32")
        if plan.warps_per_row == 1:
            fn.emit(f"add.s32 {word}, {lw.tid}, {lw.threads * first}")
            fn.emit(f"shr.u32 {word}, {word}, {lane_bits}")
        else:
            fn.emit(f"add.s32 {word}, {warp}, {first // plan.slots_per_row * plan.warps_per_row}")
        addr = fn.reg("b32")
        fn.emit(f"mad.lo.s32 {addr}, {word}, 4, {base}")
        fn.emit(f"st.shared.{_ST[cls]} [{addr}], {acc}", writer)
    fn.need_shared(rows * plan.warps_per_row * 4)
    fn.emit("bar.sync 0")
    out = lw.new_tile(op.results[0].type)
    identity = _identity_reg(lw, _identities(op)[0], src.element)
    for k in range(out.layout.slots):
        valid = lw.valid(out.layout, k)
        addr = fn.reg("b32")
        if out.layout.kind == "replicated":
            fn.emit(f"mov.u32 {addr}, {base}")
        else:
            fn.emit(f"mad.lo.s32 {addr}, {lw.linear(k)}, {4 * plan.warps_per_row}, {base}")
        acc = fn.reg(cls)
        fn.emit(f"ld.shared.{_ST[cls]} {acc}, [{addr}]", valid)
        for w in range(1, plan.warps_per_row):
            x = fn.reg(cls)
            fn.emit(f"ld.shared.{_ST[cls]} {x}, [{addr}+{4 * w}]", valid)
            acc = _combine(lw, op, x, acc)
        # the identity joins last, as in the interpreter (neutral for a proper identity;
        # it keeps the sign of a float zero sum the same)
        acc = _combine(lw, op, identity, acc)
        out.regs[k] = acc
    lw.values[op.results[0]] = out


def _combine(lw: Lowering, op: Operation, x: str, acc: str) -> str:
    """A fresh register holding body(x, acc) (the reduce's combiner, lowered once more)."""
    cls = reg_class(lw.get(op.operands[0]).element)
    value = _run_body(lw, op, [x], [acc])[0]
    out = lw.fn.reg(cls)
    lw.fn.emit(f"mov.{_ST[cls]} {out}, {value}")
    return out


def _reduce_streamed(lw: Lowering, op: Operation) -> None:
    """A full reduction of a 1-D tile too large to stage whole (assign-layouts left the
    operands #blocked: ``streams_through_shared``): the tile goes through shared memory
    in chunks of at most STREAM_CHUNK_BYTES (bar.sync; every thread stores its slots of the
    chunk; bar.sync; every thread folds the chunk's elements in index order), so the fold
    keeps the spec's order across chunks. No #shared value is live at a reduce (each is
    made just before the op reading it), so the chunk buffer starts at byte 0."""
    fn = lw.fn
    srcs: list[TileRegs] = [lw.get(v) for v in op.operands]
    ids = _identities(op)
    n, threads = srcs[0].n, lw.threads
    sizes = [esize(s.element) for s in srcs]
    chunk_slots = max(1, STREAM_CHUNK_BYTES // (threads * sum(sizes)))
    chunk = chunk_slots * threads
    offsets, at = [], 0
    for size in sizes:
        offsets.append(at)
        at = (at + chunk * size + 15) // 16 * 16
    fn.need_shared(at)
    base = smem_base(lw)
    accs = [_identity_reg(lw, attr, s.element) for attr, s in zip(ids, srcs)]
    layout = srcs[0].layout
    for first in range(0, layout.slots, chunk_slots):
        fn.emit("bar.sync 0")  # readers of the previous chunk are done
        for k in range(first, min(first + chunk_slots, layout.slots)):
            index = fn.reg("b32")
            fn.emit(f"sub.s32 {index}, {lw.linear(k)}, {first * threads}")
            for s, size, off in zip(srcs, sizes, offsets):
                _store_element(lw, lw.slot(s, k), s.element, index, off, base,
                               lw.valid(layout, k))
        fn.emit("bar.sync 0")
        count = min(chunk, n - first * threads)
        r = fn.reg("b32")
        fn.emit(f"mov.u32 {r}, 0")
        loop = fn.label("stream")
        fn.place(loop)
        xs = [fn.reg(reg_class(s.element)) for s in srcs]
        for x, s, off in zip(xs, srcs, offsets):
            from_shared(lw, s.element, r, off, base, x)
        new = _run_body(lw, op, xs, accs)
        for acc, value, s in zip(accs, new, srcs):
            cls = reg_class(s.element)
            _copy(fn, cls, acc, value)
        fn.loop_while_below(r, count, loop)
    fn.emit("bar.sync 0")
    for acc, result in zip(accs, op.results):
        out = lw.new_tile(result.type)
        out.regs = [acc]
        lw.values[result] = out


def _store_element(lw: Lowering, reg: str, t: T.Type, index: str, offset: int, base: str,
                   pred: str | None) -> None:
    """st.shared of one element at ``base + index*esize + offset`` (i1 as a byte)."""
    fn = lw.fn
    addr = fn.reg("b32")
    fn.emit(f"mad.lo.s32 {addr}, {index}, {esize(t)}, {base}")
    if reg_class(t) == "pred":
        tmp = fn.reg("b32")
        fn.emit(f"selp.b32 {tmp}, 1, 0, {reg}")
        reg = tmp
    fn.emit(f"st.shared.{_ST[reg_class(t)]} [{addr}+{offset}], {reg}", pred)


# ---- matrix multiply-accumulate --------------------------------------------------------

def mma(lw: Lowering, op: Operation) -> None:
    from .lower_math import to_f32, zext

    fn = lw.fn
    lhs, rhs = shared_sources(lw, op, op.operands[:2])  # convert_layout wrote A and B
    acc = lw.get(op.operands[2])
    batched = len(lhs.shape) == 3
    m, kk = lhs.shape[-2:]
    n = rhs.shape[-1]
    is_int = op.name == "mmai"
    base, offsets = smem_base(lw), [lhs.offset, rhs.offset]
    if lower_mma.try_mma_sync(lw, op, lhs, rhs, acc):  # tensor cores (lower_mma.py)
        return
    out = lw.new_tile(op.results[0].type)
    wide = out.element.name == "f64"
    cls = "b32" if is_int else ("f64" if wide else "f32")
    sums, a_base, b_base = [], [], []
    valids = [lw.valid(out.layout, k) for k in range(out.layout.slots)]
    for k in range(out.layout.slots):
        idx = result_index(lw, out, k)
        b, i, j = (idx if batched else ["0"] + idx)
        a_base.append(lw.combine_index([b, i, "0"], (1 << 20, m, kk)))
        b_base.append(lw.combine_index([b, "0", j], (1 << 20, kk, n)))
        s = fn.reg(cls)
        src = lw.slot(acc, k)
        if is_int or wide or out.element.name == "f32":
            fn.emit(f"mov.{'b32' if is_int else cls} {s}, {src}")
        else:
            fn.emit(f"cvt.f32.{out.element.name} {s}, {src}")
        sums.append(s)
    kr = fn.reg("b32")
    fn.emit(f"mov.u32 {kr}, 0")
    loop = fn.label("mma")
    fn.place(loop)
    for k, s in enumerate(sums):
        ai, bi = fn.reg("b32"), fn.reg("b32")
        fn.emit(f"add.s32 {ai}, {a_base[k]}, {kr}")
        fn.emit(f"mad.lo.s32 {bi}, {kr}, {n}, {b_base[k]}")
        x, y = fn.reg(reg_class(lhs.element)), fn.reg(reg_class(rhs.element))
        from_shared(lw, lhs.element, ai, offsets[0], base, x, valids[k])
        from_shared(lw, rhs.element, bi, offsets[1], base, y, valids[k])
        if is_int:
            if op.attributes.get("signedness_lhs") == Signedness.unsigned:
                x = zext(lw, x, lhs.element)
            if op.attributes.get("signedness_rhs") == Signedness.unsigned:
                y = zext(lw, y, rhs.element)
            fn.emit(f"mad.lo.s32 {s}, {x}, {y}, {s}")
        else:
            x, y = _mma_float(lw, x, lhs.element, wide), _mma_float(lw, y, rhs.element, wide)
            fn.emit(f"fma.rn.{cls} {s}, {x}, {y}, {s}")
    fn.loop_while_below(kr, kk, loop)
    fn.emit("bar.sync 0")
    for k, s in enumerate(sums):
        if is_int or wide or out.element.name == "f32":
            out.regs[k] = s
        else:
            fn.emit(f"cvt.rn.{out.element.name}.f32 {out.regs[k]}, {s}")
    lw.values[op.results[0]] = out
    _ = to_f32


def _mma_float(lw: Lowering, x: str, t: T.ElementType, wide: bool) -> str:
    from .lower_convert import _f8_to_f32
    from .lower_math import to_f32

    if t.name in ("f8E4M3FN", "f8E5M2"):
        f = _f8_to_f32(lw, x, t)
    elif t.name == "tf32":
        f, bits = lw.fn.reg("f32"), lw.fn.reg("b32")
        lw.fn.emit(f"cvt.rna.tf32.f32 {bits}, {x}")
        lw.fn.emit(f"mov.b32 {f}, {bits}")
    else:
        f = to_f32(lw, x, t)
    if wide and t.name != "f64":
        d = lw.fn.reg("f64")
        lw.fn.emit(f"cvt.f64.f32 {d}, {f}")
        return d
    if not t.is_float:
        raise Unsupported(f"mmaf operand {t.name}")
    return f
