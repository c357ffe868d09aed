"""select-instructions for memory: global loads, stores and atomics through pointer
registers, and the CTA's shared buffer (``__nt_smem``).

Global: each register (or each group of ``nanotile.vector`` registers: one ld/st.v2/v4)
is one access at its pointer, predicated by its mask; a masked load first moves the
padding into the registers (each its own). Atomics take the op's .sem and .scope.

Shared: a distributed tile's element e sits at the buffer's offset plus
``shared_layout(e)`` elements; both layouts being linear, that is a per-thread part
(computed once from %tid.x, select_threads.thread_bits) combined with a per-register
constant, folded into the address as an immediate when their bits cannot meet.
Consecutive registers at consecutive offsets, aligned, move as one ``ld/st.shared.v2/v4``.
"""

from __future__ import annotations

from ...ir import types as T
from ...ir.core import Operation
from ...ir.enums import AtomicRMWMode, MemoryOrderingSemantics, MemoryScope
from ...ir.layouts import LinearLayout, SharedLayout
from ...ir.optable import lookup
from .builder import reg_class
from .select_instructions import Selection, Unsupported
from .select_threads import _tid_contributions, owner, thread_bits
from .shared_memory import element_bytes

_SHARED_TYPE = {1: "b8", 2: "b16", 4: "b32", 8: "b64"}


def smem(s: Selection) -> str:
    """A b32 register holding the shared address of ``__nt_smem``."""
    if "smem" not in s.cache:
        with s.fn.at_entry():
            r = s.fn.reg("b32")
            s.fn.instr("mov.u32", r, "__nt_smem")
        s.cache["smem"] = r
    return s.cache["smem"]


def descriptor_start(s: Selection, op: Operation) -> str:
    """A b32 register with the shared address a matrix descriptor op (wgmma's, tcgen05's)
    starts at: its buffer's place (allocate-shared) plus the op's ``offset``."""
    buffer = op.attributes["buffer"]
    placed: SharedLayout = buffer.layout
    if placed.offset is None:
        raise Unsupported(f"{buffer} has no place in shared memory (allocate-shared)")
    address = s.fn.reg("b32")
    s.fn.instr("add.s32", address, smem(s), str(placed.offset + op.attributes["offset"]))
    return address


def matrix_descriptor(s: Selection, address: str, bits: int) -> str:
    """A b64 register with a shared-memory matrix descriptor: the start address's bits
    17-4 in bits 13-0, or'ed with ``bits`` (strides, swizzle: the target's layout)."""
    fn = s.fn
    field = fn.reg("b32")
    fn.instr("bfe.u32", field, address, "4", "14")   # (address & 0x3FFFF) >> 4
    wide = fn.reg("b64")
    fn.instr("cvt.u64.u32", wide, field)
    out = fn.reg("b64")
    fn.instr("or.b64", out, wide, hex(bits))
    return out


def _shared_linear(buffer: SharedLayout):
    bases = buffer.linear_bases()
    if bases is None:
        raise Unsupported("padded shared layouts are not selected yet")

    def apply(flat: int) -> int:
        out, i = 0, 0
        while flat:
            if flat & 1:
                out ^= bases[i]
            flat >>= 1
            i += 1
        return out

    return apply


def _shared_type(element: T.Type, load: bool) -> str:
    """The ld/st.shared type of an element: narrow integers live sign-extended in 32-bit
    registers, so their loads sign-extend (s8, s16)."""
    size = element_bytes(element)
    cls = reg_class(element)
    if cls in ("f32", "f64"):
        return cls
    if load and size < 4 and cls == "b32":
        return {1: "s8", 2: "s16"}[size]
    if load and size == 1:
        return "u8"
    return _SHARED_TYPE[size]


def shared_access(s: Selection, op: Operation, store: bool) -> None:
    """shared_store / shared_load of a distributed tile ``of`` in ``buffer``."""
    fn = s.fn
    tile: T.TileType = op.attributes["of"]
    buffer: T.TileType = op.attributes["buffer"]
    layout: LinearLayout = tile.layout
    placed: SharedLayout = buffer.layout
    if placed.offset is None:
        raise Unsupported(f"{buffer} has no place in shared memory (allocate-shared)")
    element = tile.element
    size = element_bytes(element)
    offset_of = _shared_linear(placed)
    thread, possible = thread_bits(s, _tid_contributions(layout, s.threads // 32, offset_of),
                                   ("shared", layout, placed.shape, placed.swizzle,
                                    placed.order, placed.block))
    base = s.cache.get(("shared base", thread, size))
    if base is None:
        start = smem(s)
        with fn.at_entry():
            base = fn.reg("b32")
            fn.instr("mad.lo.s32", base, thread, str(size), start)
        s.cache[("shared base", thread, size)] = base
    constants = [offset_of(layout.register_part(k)) for k in range(layout.registers)]
    guard = owner(s, layout) if store and op.attributes.get("owners_only") else None
    values = s.get(op.operands[0]) if store else s.fresh(op.results[0].type)
    ty = _shared_type(element, load=not store)
    k = 0
    while k < len(constants):
        width = _vector(constants, k, possible, size, element)
        c = constants[k]
        if c & possible:  # the register's bits meet the thread's: xor, then address
            moved = fn.reg("b32")
            fn.instr("xor.b32", moved, thread, str(c))
            addr = fn.reg("b32")
            fn.instr("mad.lo.s32", addr, moved, str(size), smem(s))
            where = f"[{addr}+{placed.offset}]"
        else:
            where = f"[{base}+{placed.offset + c * size}]"
        regs = values[k:k + width] if len(values) > 1 else values * width
        _shared_move(s, store, ty, where, regs, element, guard)
        k += width
    if not store:
        s.values[op.results[0]] = values


def _vector(constants: list[int], k: int, possible: int, size: int, element) -> int:
    """How many registers from k on move with one vector access (1, 2 or 4)."""
    if reg_class(element) == "pred":
        return 1
    for width in (4, 2):
        if width * size > 16 or k % width or k + width > len(constants):
            continue
        c = constants[k]
        # the thread's bits may meet the register's (an xor swizzle), but not below the
        # vector: then thread ^ (c + i) = (thread ^ c) + i for every i < width
        if c % width or possible & (width - 1):
            continue
        if all(constants[k + i] == c + i for i in range(width)):
            return width
    return 1


def _shared_move(s: Selection, store: bool, ty: str, where: str, regs: list[str],
                 element, guard: str | None) -> None:
    fn = s.fn
    vec = f".v{len(regs)}" if len(regs) > 1 else ""
    if reg_class(element) == "pred":
        if store:
            tmp = fn.reg("b32")
            fn.instr("selp.b32", tmp, "1", "0", regs[0])
            fn.instr("st.shared.b8", where, tmp, pred=guard)
        else:
            tmp = fn.reg("b32")
            fn.instr("ld.shared.u8", tmp, where)
            fn.instr("setp.ne.s32", regs[0], tmp, "0")
        return
    group = regs[0] if len(regs) == 1 else "{" + ", ".join(regs) + "}"
    if store:
        fn.instr(f"st.shared{vec}.{ty}", where, group, pred=guard)
    else:
        fn.instr(f"ld.shared{vec}.{ty}", group, where)


def shared_store(s: Selection, op: Operation) -> None:
    shared_access(s, op, store=True)


def shared_load(s: Selection, op: Operation) -> None:
    shared_access(s, op, store=False)


def shared_gather(s: Selection, op: Operation) -> None:
    """Register k reads element indices[k] of a row-major buffer seen as a dense array of
    the result's type. A 4-bit result read from a buffer of bytes (unpack) takes two
    elements per byte, low nibble first; from a buffer of 4-bit elements, one per byte
    (element_bytes: how they are stored). With ``vector = N`` (distribute_gather's
    run_length: proven consecutive and aligned), registers k .. k+N-1, k a multiple of N,
    read elements indices[k] .. indices[k]+N-1 with one ld.shared.vN; the other indices
    are not read."""
    buffer: T.TileType = op.attributes["buffer"]
    placed: SharedLayout = buffer.layout
    if placed.swizzle is not None or placed.padding is not None or placed.offset is None \
            or placed.block is not None:
        raise Unsupported(f"a gather from {buffer} (row-major, placed buffers only)")
    element = op.results[0].type.element
    size = element_bytes(element)
    ty = _shared_type(element, load=True)
    outs = s.fresh(op.results[0].type)
    indices = s.get(op.operands[0])
    width = op.attributes.get("vector", 1)
    if len(indices) == 1 or len(outs) % width:
        width = 1
    done: dict[str, list[str]] = {}
    for k in range(0, len(outs), width):
        run = outs[k:k + width]
        index = indices[k if len(indices) > 1 else 0]
        if index in done:  # the same elements again: one load
            for out, prior in zip(run, done[index]):
                s.fn.instr(f"mov.{_mov(element)}", out, prior)
            continue
        if element.bitwidth == 4 and buffer.element.bitwidth != 4:
            _gather_nibble(s, index, placed.offset, run[0])
        else:
            addr = s.fn.reg("b32")
            s.fn.instr("mad.lo.s32", addr, index, str(size), smem(s))
            _shared_move(s, False, ty, f"[{addr}+{placed.offset}]", run, element, None)
        done[index] = run
    s.values[op.results[0]] = outs


def _gather_nibble(s: Selection, index: str, offset: int, out: str) -> None:
    """A 4-bit element of a dense buffer: nibble ``index`` (two per byte, low first)."""
    fn = s.fn
    addr, byte, shift = fn.reg("b32"), fn.reg("b32"), fn.reg("b32")
    fn.instr("shr.u32", addr, index, "1")
    fn.instr("add.s32", addr, addr, smem(s))
    fn.instr("ld.shared.u8", byte, f"[{addr}+{offset}]")
    fn.instr("and.b32", shift, index, "1")
    fn.instr("shl.b32", shift, shift, "2")
    fn.instr("shr.u32", byte, byte, shift)
    fn.instr("and.b32", byte, byte, "15")
    fn.instr("cvt.u16.u32", out, byte)


def _mov(element) -> str:
    return {"b16": "b16", "b32": "b32", "f32": "f32", "b64": "b64", "f64": "f64",
            "pred": "pred"}[reg_class(element)]


# ---- global memory ------------------------------------------------------------------


def load(s: Selection, op: Operation) -> None:
    from .vectorize_memory import vector_of

    fn = s.fn
    groups = op.operand_groups()
    pointers = s.get(groups[0][0])
    mask = s.get(groups[1][0]) if len(groups) > 1 and groups[1] else None
    pad = s.get(groups[2][0]) if len(groups) > 2 and groups[2] else None
    t = op.results[0].type
    element = t.element
    outs = s.fresh(t)
    order = _order(op, store=False)
    width = vector_of(op)
    cls = reg_class(element)
    for k in range(0, len(outs), width):
        regs = outs[k:k + width]
        guard = _at(mask, k)
        # i1 is one byte per element in memory: load the bytes, then compare with zero
        loaded = [fn.reg("b32") for _ in regs] if cls == "pred" else regs
        for i, reg in enumerate(loaded):
            if cls == "pred" and _at(pad, k + i):
                fn.instr("selp.b32", reg, "1", "0", _at(pad, k + i))
            elif cls == "pred":
                fn.instr("mov.u32", reg, "0")
            else:
                fn.instr(f"mov.{_mov(element)}", reg, _at(pad, k + i) or zero_imm(element))
        group = loaded[0] if width == 1 else "{" + ", ".join(loaded) + "}"
        vec = f".v{width}" if width > 1 else ""
        ty = "u8" if cls == "pred" else mem_type(element)
        fn.instr(f"ld{order}.global{vec}.{ty}", group, f"[{_at(pointers, k)}]", pred=guard)
        if cls == "pred":
            for reg, byte in zip(regs, loaded):
                fn.instr("setp.ne.s32", reg, byte, "0")
    s.values[op.results[0]] = outs


def store(s: Selection, op: Operation) -> None:
    from .vectorize_memory import vector_of

    fn = s.fn
    groups = op.operand_groups()
    pointers, values = s.get(groups[0][0]), s.get(groups[1][0])
    mask = s.get(groups[2][0]) if len(groups) > 2 and groups[2] else None
    element = op.operands[1].type.element
    n = s.count(op.operands[1].type)
    order = _order(op, store=True)
    width = vector_of(op)
    ty = mem_type(element).replace("s8", "b8").replace("s16", "b16").replace("u8", "b8")
    for k in range(0, n, width):
        guard = _at(mask, k)
        regs = [_at(values, k + i) for i in range(width)]
        if reg_class(element) == "pred":  # one byte per element in memory
            bytes_ = [fn.reg("b32") for _ in regs]
            for byte, reg in zip(bytes_, regs):
                fn.instr("selp.b32", byte, "1", "0", reg)
            regs, ty = bytes_, "b8"
        group = regs[0] if width == 1 else "{" + ", ".join(regs) + "}"
        vec = f".v{width}" if width > 1 else ""
        fn.instr(f"st{order}.global{vec}.{ty}", f"[{_at(pointers, k)}]", group, pred=guard)


def _at(regs: list[str] | None, k: int) -> str | None:
    if regs is None:
        return None
    return regs[k if len(regs) > 1 else 0]


def atomic(s: Selection, op: Operation) -> None:
    """atom per register; a masked-off lane returns cmp (cas, as the spec says) or 0."""
    from ...ir.enums import AtomicRMWMode

    fn = s.fn
    groups = op.operand_groups()
    names = [o.name for o in lookup(op.name).operands]
    g = dict(zip(names, groups))
    pointers = s.get(g["pointers"][0])
    mask = s.get(g["mask"][0]) if g.get("mask") else None
    t = op.results[0].type
    element = t.element
    if element.bitwidth not in (32, 64) and element.name not in ("f16", "bf16"):
        raise Unsupported(f"atomics on {element.name}")
    bits = 64 if element.bitwidth == 64 else 32 if element.bitwidth == 32 else 16
    exchange16 = False
    if op.name == "atomic_cas_tko":
        args = [s.get(g["cmp"][0]), s.get(g["val"][0])]
        what = f"cas.b{bits}"
    else:
        args = [s.get(g["arg"][0])]
        exchange16 = bits == 16 and op.attributes["mode"] == AtomicRMWMode.xchg
        what = "" if exchange16 else _atom_kind(op, element)
    outs = s.fresh(t)
    for k, reg in enumerate(outs):
        guard = _at(mask, k)
        if mask is not None:
            init = _at(args[0], k) if op.name == "atomic_cas_tko" else zero_imm(element)
            fn.instr(f"mov.{_mov(element)}", reg, init)
        if exchange16:
            _exchange16(s, op, reg, _at(pointers, k), _at(args[0], k), guard)
            continue
        fn.instr(f"atom{_atom_order(op)}.global.{what}", reg, f"[{_at(pointers, k)}]",
                 *(_at(a, k) for a in args), pred=guard)
    s.values[op.results[0]] = outs


def ldmatrix(s: Selection, op: Operation) -> None:
    """One ldmatrix per listed register of the address layout: the lane's row starts at
    that register's element (in this lane)."""
    fn = s.fn
    buffer: T.TileType = op.attributes["buffer"]
    addresses: LinearLayout = op.attributes["of"].layout
    placed: SharedLayout = buffer.layout
    if placed.offset is None:
        raise Unsupported(f"{buffer} has no place in shared memory (allocate-shared)")
    size = element_bytes(buffer.element)
    offset_of = _shared_linear(placed)
    thread, possible = thread_bits(s, _tid_contributions(addresses, s.threads // 32,
                                                         offset_of),
                                   ("ldmatrix", addresses, placed.shape, placed.swizzle,
                                    placed.order, placed.block))
    count = op.attributes["count"]
    trans = ".trans" if op.attributes.get("trans") else ""
    outs = s.fresh(op.results[0].type)
    for i, r in enumerate(op.attributes["instructions"]):
        c = offset_of(addresses.register_part(r))
        moved = fn.reg("b32")
        fn.instr("xor.b32" if c & possible else "add.s32", moved, thread, str(c))
        addr = fn.reg("b32")
        fn.instr("mad.lo.s32", addr, moved, str(size), smem(s))
        regs = outs[count * i:count * (i + 1)]
        fn.instr(f"ldmatrix.sync.aligned.m8n8.x{count}{trans}.shared.b16",
                 "{" + ", ".join(regs) + "}", f"[{addr}+{placed.offset}]")
    s.values[op.results[0]] = outs


def mma_sync(s: Selection, op: Operation) -> None:
    """One mma.sync; tf32 operands are first rounded to nearest (the interpreter's)."""
    fn = s.fn
    instruction = op.attributes["instruction"]
    a, b, c = (list(s.get(v)) for v in op.operands)
    if ".tf32." in instruction:
        for regs in (a, b):
            for i, reg in enumerate(regs):
                rounded = fn.reg("b32")
                fn.instr("cvt.rn.tf32.f32", rounded, reg)
                regs[i] = rounded
    out = s.fresh(op.results[0].type)
    fn.instr(instruction, "{" + ", ".join(out) + "}", "{" + ", ".join(a) + "}",
             "{" + ", ".join(b) + "}", "{" + ", ".join(c) + "}")
    s.values[op.results[0]] = out


# ---- PTX forms of memory ops ----------------------------------------------------------

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


def zero_imm(t: T.Type) -> str:
    """A zero immediate for a register of ``t``'s class (float moves need 0f/0d forms)."""
    return {"f32": "0f00000000", "f64": "0d0000000000000000"}.get(reg_class(t), "0")


_RMW = {AtomicRMWMode.and_: ("and", "b"), AtomicRMWMode.or_: ("or", "b"),
        AtomicRMWMode.xor: ("xor", "b"), AtomicRMWMode.add: ("add", "u"),
        AtomicRMWMode.addf: ("add", "f"), AtomicRMWMode.max: ("max", "s"),
        AtomicRMWMode.min: ("min", "s"), AtomicRMWMode.umax: ("max", "u"),
        AtomicRMWMode.umin: ("min", "u"), AtomicRMWMode.xchg: ("exch", "b")}


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


def _exchange16(lw, op: Operation, out: str, addr: str, val: str,
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
