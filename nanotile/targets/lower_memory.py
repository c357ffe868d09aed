"""Views, loads, stores and atomics -> per-thread global-memory instructions.

Views become pointer arithmetic: a partition view's tile at index (i0, i1, ...) holds the
tensor elements (i_j * tile_j + e_j); each element's address is base + sum(t_j * stride_j)
* size, guarded by the predicate 0 <= t_j < shape_j (one unsigned compare), and a load
that is out of bounds yields the view's padding value. One-element tiles are held by
every thread, so their stores and atomics run in thread 0 only (the atomic's result is
then broadcast through shared memory). Tokens become an explicit order: a write whose
result token something waits on is followed by ``bar.sync 0``, which makes it visible to
the whole CTA before any later memory op, and a write that an earlier memory op may precede
starts with ``bar.sync 0``: elements are spread over threads, so another thread may still
have to read the old value of an element this thread is about to overwrite.
Atomics take the op's .sem and .scope; f16/bf16 add is ``.add.noftz``, and a 16-bit
exchange (which PTX lacks) is an ``atom.cas.b16`` loop.
"""

from __future__ import annotations

import struct

from ..ir import types as T
from ..ir.core import Operation
from ..ir.enums import AtomicRMWMode, MemoryOrderingSemantics, MemoryScope
from .layout import TileRegs, choose_layout
from .lower import Lowering, Unsupported, ViewInfo
from .ptx.builder import reg_class

_SCOPE = {MemoryScope.tl_blk: "cta", MemoryScope.device: "gpu", MemoryScope.sys: "sys"}


def mem_type(t: T.Type) -> str:
    """The ld/st type suffix for one element of ``t`` in its register class."""
    if isinstance(t, T.PointerType):
        return "b64"
    name = t.name
    if name == "i1" or t.bitwidth == 8 or (t.is_float and t.bitwidth == 4):
        return "u8" if t.is_float else "s8"  # f4E2M1FN: one element per byte
    if name in ("f16", "bf16"):
        return "b16"
    if name == "i16":
        return "s16"
    return {"f32": "f32", "tf32": "f32", "f64": "f64", "i32": "b32", "i64": "b64"}[name]


def _order(op: Operation, store: bool) -> str:
    sem = op.attributes.get("memory_ordering_semantics", MemoryOrderingSemantics.weak)
    if sem == MemoryOrderingSemantics.weak:
        return ""
    scope = _SCOPE[op.attributes.get("memory_scope", MemoryScope.device)]
    name = sem.name
    if name == "acq_rel":
        name = "release" if store else "acquire"
    return f".{name}.{scope}"


def _groups(op: Operation) -> dict[str, list]:
    from ..ir.optable import lookup

    return {d.name: g for d, g in zip(lookup(op.name).operands, op.operand_groups())}


def make_tensor_view(lw: Lowering, op: Operation) -> None:
    g = _groups(op)
    vt = op.results[0].type
    shape, strides = list(vt.shape), list(vt.strides)
    dyn_shape = iter(lw.get(v).regs[0] for v in g["dynamicShape"])
    dyn_strides = iter(lw.get(v).regs[0] for v in g["dynamicStrides"])
    shape = [next(dyn_shape) if d is None else d for d in shape]
    strides = [next(dyn_strides) if s is None else s for s in strides]
    lw.values[op.results[0]] = ViewInfo(lw.get(g["base"][0]).regs[0], vt.element, shape,
                                        strides)


def make_partition_view(lw: Lowering, op: Operation) -> None:
    """make_partition_view / make_strided_view: tiles start tile (or stride) apart."""
    pt = op.results[0].type
    if not isinstance(pt, (T.PartitionViewType, T.StridedViewType)):
        raise Unsupported(f"view type {pt}")
    if pt.dim_map is not None and tuple(pt.dim_map) != tuple(range(len(pt.tile_shape))):
        raise Unsupported("partition views with a dim_map are not lowered yet")
    tv = lw.get(op.operands[0])
    steps = tuple(getattr(pt, "traversal_strides", pt.tile_shape))
    lw.values[op.results[0]] = ViewInfo(tv.base, tv.element, tv.shape, tv.strides,
                                        tuple(pt.tile_shape), pt.padding, steps)


def get_index_space_shape(lw: Lowering, op: Operation) -> None:
    view = lw.get(op.operands[0])
    for d, size, res in zip(view.tile_shape, view.shape, op.results):
        out = lw.new_tile(res.type)
        r = out.regs[0]
        if isinstance(size, int):
            lw.fn.emit(f"mov.u32 {r}, {-(-size // d)}")
        else:
            lw.fn.emit(f"add.s32 {r}, {size}, {d - 1}")
            lw.fn.emit(f"div.u32 {r}, {r}, {d}")
        lw.values[res] = out


def get_tensor_shape(lw: Lowering, op: Operation) -> None:
    view = lw.get(op.operands[0])
    for size, res in zip(view.shape, op.results):
        out = lw.new_tile(res.type)
        lw.fn.emit(f"mov.u32 {out.regs[0]}, {size}")
        lw.values[res] = out


def _view_address(lw: Lowering, view: ViewInfo, index: list[str], k: int, shape, kind: str):
    """(address b64 register, in-bounds predicate) of slot ``k`` of a view tile."""
    fn = lw.fn
    linear = lw.linear(k) if kind == "blocked" else "0"
    inner = lw.split_index(linear, shape) if kind == "blocked" else ["0"] * len(shape)
    inb = fn.reg("pred")
    fn.emit(f"setp.eq.s32 {inb}, 0, 0")
    offset = fn.reg("b64")
    fn.emit(f"mov.u64 {offset}, 0")
    steps = view.steps or shape
    for idx, e, d, size, stride in zip(index, inner, steps, view.shape, view.strides):
        t = fn.reg("b32")
        fn.emit(f"mad.lo.s32 {t}, {idx}, {d}, {e}")
        fn.emit(f"setp.lt.and.u32 {inb}, {t}, {size}, {inb}")
        w = fn.reg("b64")
        if isinstance(stride, int):
            fn.emit(f"mul.wide.s32 {w}, {t}, {stride}")
        else:
            fn.emit(f"mul.wide.s32 {w}, {t}, {stride}")
        fn.emit(f"add.s64 {offset}, {offset}, {w}")
    addr = fn.reg("b64")
    fn.emit(f"mad.lo.s64 {addr}, {offset}, {max(1, view.element.bitwidth // 8)}, {view.base}")
    return addr, inb


def zero_imm(t: T.Type) -> str:
    """A zero immediate for a register of ``t``'s class (float moves need 0f/0d forms)."""
    return {"f32": "0f00000000", "f64": "0d0000000000000000"}.get(reg_class(t), "0")


def _pad_bits(t: T.Type, padding) -> str:
    if padding is None or padding == T.PaddingValue.zero or not t.is_float:
        return zero_imm(t)
    value = {T.PaddingValue.neg_zero: -0.0, T.PaddingValue.nan: float("nan"),
             T.PaddingValue.pos_inf: float("inf"), T.PaddingValue.neg_inf: float("-inf")}[padding]
    if t.name == "f64":
        return "0d" + struct.pack(">d", value).hex().upper()
    if t.name == "f32":
        return "0f" + struct.pack(">f", value).hex().upper()
    import ml_dtypes
    import numpy as np

    dtype = {"f16": np.float16, "bf16": ml_dtypes.bfloat16}.get(t.name)
    if dtype is None:
        raise Unsupported(f"padding of {t.name} views")
    return hex(int(np.array(value, dtype=dtype).view(np.uint16)))


def _load_into(lw: Lowering, out: str, t: T.Type, addr: str, pred: str | None, order: str,
               pad: str) -> None:
    fn = lw.fn
    mt = mem_type(t)
    if reg_class(t) == "pred":
        tmp = fn.reg("b32")
        fn.emit(f"mov.u32 {tmp}, 0")
        fn.emit(f"ld{order}.global.u8 {tmp}, [{addr}]", pred)
        fn.emit(f"setp.ne.s32 {out}, {tmp}, 0")
        return
    mov = {"b16": "b16", "b32": "b32", "b64": "b64", "f32": "f32", "f64": "f64"}[reg_class(t)]
    fn.emit(f"mov.{mov} {out}, {pad}")
    fn.emit(f"ld{order}.global.{mt} {out}, [{addr}]", pred)


def _store_from(lw: Lowering, reg: str, t: T.Type, addr: str, pred: str | None,
                order: str) -> None:
    fn = lw.fn
    mt = mem_type(t).replace("s8", "b8").replace("s16", "b16").replace("u8", "b8")
    if reg_class(t) == "pred":
        tmp = fn.reg("b32")
        fn.emit(f"selp.b32 {tmp}, 1, 0, {reg}")
        reg, mt = tmp, "b8"
    fn.emit(f"st{order}.global.{mt} [{addr}], {reg}", pred)


def _and(lw: Lowering, *preds: str | None) -> str | None:
    live = [p for p in preds if p]
    if not live:
        return None
    acc = live[0]
    for p in live[1:]:
        r = lw.fn.reg("pred")
        lw.fn.emit(f"and.pred {r}, {acc}, {p}")
        acc = r
    return acc


def load_view(lw: Lowering, op: Operation) -> None:
    g = _groups(op)
    view = lw.get(g["view"][0])
    index = [lw.get(v).regs[0] for v in g["index"]]
    out = lw.new_tile(op.results[0].type)
    pad = _pad_bits(view.element, view.padding)
    order = _order(op, store=False)
    for k, reg in enumerate(out.regs):
        addr, inb = _view_address(lw, view, index, k, view.tile_shape, out.layout.kind)
        _load_into(lw, reg, view.element, addr, _and(lw, inb, lw.valid(out.layout, k)), order,
                   pad)
    lw.values[op.results[0]] = out
    _token_result(lw, op)


def store_view(lw: Lowering, op: Operation) -> None:
    _before_write(lw, op)
    g = _groups(op)
    view = lw.get(g["view"][0])
    index = [lw.get(v).regs[0] for v in g["index"]]
    value: TileRegs = lw.get(g["tile"][0])
    layout = choose_layout(value.shape, lw.threads)
    order = _order(op, store=True)
    only = lw.first_thread() if layout.kind == "replicated" else None
    for k in range(layout.slots):
        addr, inb = _view_address(lw, view, index, k, view.tile_shape, layout.kind)
        _store_from(lw, lw.slot(value, k), view.element, addr,
                    _and(lw, inb, lw.valid(layout, k), only), order)
    _token_result(lw, op, wrote=True)


def load_ptr(lw: Lowering, op: Operation) -> None:
    g = _groups(op)
    ptrs = lw.get(g["source"][0])
    mask = lw.get(g["mask"][0]) if g["mask"] else None
    pad = lw.get(g["paddingValue"][0]) if g["paddingValue"] else None
    out = lw.new_tile(op.results[0].type)
    order = _order(op, store=False)
    for k, reg in enumerate(out.regs):
        p = _and(lw, lw.slot(mask, k) if mask else None, lw.valid(out.layout, k))
        _load_into(lw, reg, out.element, lw.slot(ptrs, k), p, order,
                   lw.slot(pad, k) if pad else zero_imm(out.element))
    lw.values[op.results[0]] = out
    _token_result(lw, op)


def store_ptr(lw: Lowering, op: Operation) -> None:
    _before_write(lw, op)
    g = _groups(op)
    ptrs, value = lw.get(g["destination"][0]), lw.get(g["value"][0])
    mask = lw.get(g["mask"][0]) if g["mask"] else None
    layout = choose_layout(value.shape, lw.threads)
    only = lw.first_thread() if layout.kind == "replicated" else None
    order = _order(op, store=True)
    for k in range(layout.slots):
        p = _and(lw, lw.slot(mask, k) if mask else None, lw.valid(layout, k), only)
        _store_from(lw, lw.slot(value, k), value.element, lw.slot(ptrs, k), p, order)
    _token_result(lw, op, wrote=True)


_RMW = {AtomicRMWMode.and_: ("and", "b"), AtomicRMWMode.or_: ("or", "b"),
        AtomicRMWMode.xor: ("xor", "b"), AtomicRMWMode.add: ("add", "u"),
        AtomicRMWMode.addf: ("add", "f"), AtomicRMWMode.max: ("max", "s"),
        AtomicRMWMode.min: ("min", "s"), AtomicRMWMode.umax: ("max", "u"),
        AtomicRMWMode.umin: ("min", "u"), AtomicRMWMode.xchg: ("exch", "b")}


_MOV = {"b16": "b16", "b32": "b32", "b64": "b64", "f32": "f32", "f64": "f64"}


def _atom_order(op: Operation) -> str:
    sem = op.attributes.get("memory_ordering_semantics", MemoryOrderingSemantics.relaxed)
    scope = _SCOPE[op.attributes.get("memory_scope", MemoryScope.device)]
    name = "relaxed" if sem == MemoryOrderingSemantics.weak else sem.name
    return f".{name}.{scope}"


def _atom_kind(op: Operation, t: T.ElementType) -> str:
    """The ``{op}.{type}`` part of atom/red for an rmw mode on ``t``; f16/bf16 add is
    ``add.noftz.f16`` / ``add.noftz.bf16`` (the only 16-bit rmw PTX has; ``xchg`` on
    16 bits is a compare-and-swap loop, see ``_exchange16``)."""
    kind, ty = _RMW[op.attributes["mode"]]
    if t.bitwidth == 16:
        if t.name in ("f16", "bf16") and kind == "add" and ty == "f":
            return f"add.noftz.{t.name}"
        raise Unsupported(f"atomic {op.attributes['mode'].name} on {t.name}")
    ty = "f" if t.is_float and ty != "b" else ty
    return f"{kind}.{ty}{t.bitwidth}"


def atomic(lw: Lowering, op: Operation) -> None:
    _before_write(lw, op)
    g = _groups(op)
    ptrs = lw.get(g["pointers"][0])
    mask = lw.get(g["mask"][0]) if g["mask"] else None
    out = lw.new_tile(op.results[0].type)
    t = out.element
    bits = 64 if t.bitwidth == 64 else 32 if t.bitwidth == 32 else 16
    if t.bitwidth not in (32, 64) and t.name not in ("f16", "bf16"):
        raise Unsupported(f"atomics on {t.name}")
    exchange16 = False
    if op.name == "atomic_cas_tko":
        args = [lw.get(g["cmp"][0]), lw.get(g["val"][0])]
        what = f"cas.b{bits}"
    else:
        args = [lw.get(g["arg"][0])]
        exchange16 = bits == 16 and op.attributes["mode"] == AtomicRMWMode.xchg
        what = "" if exchange16 else _atom_kind(op, t)
    only = lw.first_thread() if out.layout.kind == "replicated" else None
    for k, reg in enumerate(out.regs):
        p = _and(lw, lw.slot(mask, k) if mask else None, lw.valid(out.layout, k), only)
        if mask is not None:  # a masked-off lane returns cmp (cas, as the spec says) or 0
            init = lw.slot(args[0], k) if op.name == "atomic_cas_tko" else zero_imm(t)
            lw.fn.emit(f"mov.{_MOV[reg_class(t)]} {reg}, {init}")
        if exchange16:
            _exchange16(lw, op, reg, lw.slot(ptrs, k), lw.slot(args[0], k), p)
            continue
        srcs = ", ".join(lw.slot(a, k) for a in args)
        lw.fn.emit(f"atom{_atom_order(op)}.global.{what} {reg}, [{lw.slot(ptrs, k)}], {srcs}", p)
    if only is not None:
        from .lower_shared import broadcast_thread0

        broadcast_thread0(lw, out.regs[0], t)
    lw.values[op.results[0]] = out
    _token_result(lw, op, wrote=True)


def _exchange16(lw: Lowering, op: Operation, out: str, addr: str, val: str,
                pred: str | None) -> None:
    """16-bit atomic exchange (PTX has none): atom.cas.b16 until the value compared
    against is the one memory held; the first guess is 0, each failure returns the
    current value to try next. Every attempt has the op's .sem and .scope."""
    fn = lw.fn
    skip, top = fn.label("xchg_skip"), fn.label("xchg_loop")
    guess, p = fn.reg("b16"), fn.reg("pred")
    if pred is not None:
        fn.emit(f"bra {skip}", "!" + pred if not pred.startswith("!") else pred[1:])
    fn.emit(f"mov.b16 {guess}, 0")
    fn.place(top)
    fn.emit(f"atom{_atom_order(op)}.global.cas.b16 {out}, [{addr}], {guess}, {val}")
    fn.emit(f"setp.ne.b16 {p}, {out}, {guess}")
    fn.emit(f"mov.b16 {guess}, {out}")
    fn.emit(f"bra {top}", p)
    fn.place(skip)


def atomic_red_view(lw: Lowering, op: Operation) -> None:
    """atomic_red_view_tko: ``red`` per element of the view tile (no result)."""
    _before_write(lw, op)
    g = _groups(op)
    view = lw.get(g["view"][0])
    index = [lw.get(v).regs[0] for v in g["index"]]
    value: TileRegs = lw.get(g["value"][0])
    t = value.element
    if isinstance(t, T.PointerType) or (t.bitwidth not in (32, 64)
                                        and t.name not in ("f16", "bf16")):
        raise Unsupported(f"atomic reductions on {t}")
    what = _atom_kind(op, t)
    layout = choose_layout(value.shape, lw.threads)
    only = lw.first_thread() if layout.kind == "replicated" else None
    for k in range(layout.slots):
        addr, inb = _view_address(lw, view, index, k, view.tile_shape, layout.kind)
        p = _and(lw, inb, lw.valid(layout, k), only)
        lw.fn.emit(f"red{_atom_order(op)}.global.{what} [{addr}], {lw.slot(value, k)}", p)
    _token_result(lw, op, wrote=True)


def _token_result(lw: Lowering, op: Operation, wrote: bool = False) -> None:
    """Memory order (tile-ordered: program order): after a write that another memory op
    may follow, a CTA barrier makes it visible to every thread before that op."""
    if wrote and _memory_follows(op):
        lw.fn.emit("bar.sync 0")


def _before_write(lw: Lowering, op: Operation) -> None:
    """Memory order for a write after a read (WAR): the read may have been another
    thread's read of an element this write changes, so every thread must be past it."""
    if _memory_follows(op, before=True):
        lw.fn.emit("bar.sync 0")


def _memory_follows(op: Operation, before: bool = False) -> bool:
    """True if a memory op may run after ``op`` (later in its block or an enclosing one,
    or in a later iteration of an enclosing loop); with ``before``, one that may run
    before it (earlier in its block or an enclosing one, or in an earlier iteration)."""
    from ..ir.optable import lookup

    def has_memory(o: Operation) -> bool:
        return any("memory" in getattr(lookup(x.name), "traits", ()) for x in o.walk())

    while op is not None and op.parent is not None:
        block = op.parent
        at = block.ops.index(op)
        if any(has_memory(o) for o in (block.ops[:at] if before else block.ops[at + 1:])):
            return True
        parent = getattr(block, "parent", None)
        owner = getattr(parent, "parent", None)  # block -> region -> op
        if owner is None or not isinstance(owner, Operation):
            return False
        if owner.name in ("for", "loop") and has_memory(owner):
            return True
        op = owner
    return False
