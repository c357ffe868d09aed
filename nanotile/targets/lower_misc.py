"""Constants, iota, grid queries, assumes, tokens and globals -> registers.

Splat constants become one replicated register (a move of an immediate); other dense
constants become a read-only global array indexed by each slot's linear index. Token
ops vanish (the order they expressed is made explicit by the memory lowering).
"""

from __future__ import annotations

from ..ir import attrs as A
from ..ir import types as T
from ..ir.core import Operation
from .layout import Layout, TileRegs
from .lower import Lowering, Unsupported
from .ptx.builder import reg_class

_MOV = {"b16": "b16", "b32": "b32", "f32": "f32", "b64": "b64", "f64": "f64"}


def constant_bits(attr, t: T.Type) -> str:
    """An immediate for an IntegerAttr/FloatAttr of element type ``t``."""
    if isinstance(attr, A.FloatAttr):
        return _float_bits(attr.bits, t)
    value = int(getattr(attr, "value", attr))
    if isinstance(value, bool):
        value = int(value)
    return str(value)


def _float_bits(bits: int, t: T.Type) -> str:
    cls = reg_class(t)
    if cls == "f32":
        return f"0f{bits:08X}"
    if cls == "f64":
        return f"0d{bits:016X}"
    return f"0x{bits:04X}"


def _element_bits(data: bytes, i: int, t: T.ElementType) -> int:
    size = max(1, -(-t.bitwidth // 8))
    if t.name == "tf32":
        size = 3
    raw = int.from_bytes(data[i * size:(i + 1) * size], "little")
    if t.name == "tf32":
        return raw << 13
    return raw


def _immediate(data: bytes, i: int, t: T.ElementType, splat: bool) -> str:
    if t.name == "i1":
        if splat:
            return "1" if data[0] else "0"
        return str((data[i // 8] >> (i % 8)) & 1)
    bits = _element_bits(data, i, t)
    if t.is_float:
        return _float_bits(bits, t)
    if bits >= 1 << (t.bitwidth - 1):
        bits -= 1 << t.bitwidth
    return str(bits)


def constant(lw: Lowering, op: Operation) -> None:
    attr: A.DenseElementsAttr = op.attributes["value"]
    rt = op.results[0].type
    t = rt.element
    cls = reg_class(t)
    if attr.splat or rt.num_elements == 1:
        r = lw.fn.reg(cls)
        _mov_imm(lw, r, _immediate(attr.data, 0, t, bool(attr.splat)), cls)
        lw.values[op.results[0]] = TileRegs(t, rt.shape, Layout("replicated", rt.num_elements,
                                                                 lw.threads), [r])
        return
    _constant_array(lw, op, attr, rt)


def _mov_imm(lw: Lowering, r: str, imm: str, cls: str) -> None:
    if cls == "pred":
        lw.fn.emit(f"setp.ne.s32 {r}, {imm}, 0")
    else:
        lw.fn.emit(f"mov.{_MOV[cls]} {r}, {imm}")


def _constant_array(lw: Lowering, op: Operation, attr, rt: T.TileType) -> None:
    t = rt.element
    cls = reg_class(t)
    width = {"b16": 2, "b32": 4, "f32": 4, "b64": 8, "f64": 8, "pred": 4}[cls]
    name = f"__nt_const_{lw.fn.name}_{len(lw.fn.decls)}"
    items = []
    for i in range(rt.num_elements):
        imm = _immediate(attr.data, i, t, False)
        if cls in ("f32", "f64"):
            imm = str(int("0x" + imm[2:], 0))  # 0f/0d + hex digits
        elif cls == "b16":
            imm = str(int(imm, 16))
        value = int(imm) & ((1 << (8 * width)) - 1)
        items += [str(b) for b in value.to_bytes(width, "little")]
    lw.fn.decls.append(f".global .align 8 .b8 {name}[{len(items)}] = {{{', '.join(items)}}};")
    out = lw.new_tile(rt)
    base = lw.fn.reg("b64")
    lw.fn.emit(f"mov.u64 {base}, {name}")
    for k, reg in enumerate(out.regs):
        linear = lw.linear(k) if out.layout.kind == "blocked" else "0"
        addr = lw.fn.reg("b64")
        lw.fn.emit(f"mul.wide.s32 {addr}, {linear}, {width}")
        lw.fn.emit(f"add.s64 {addr}, {addr}, {base}")
        p = lw.valid(out.layout, k)
        if cls == "pred":
            tmp = lw.fn.reg("b32")
            lw.fn.emit(f"mov.u32 {tmp}, 0")
            lw.fn.emit(f"ld.global.nc.b32 {tmp}, [{addr}]", p)
            lw.fn.emit(f"setp.ne.s32 {reg}, {tmp}, 0")
        else:
            lw.fn.emit(f"ld.global.nc.{_MOV[cls]} {reg}, [{addr}]", p)
    lw.values[op.results[0]] = out


def iota(lw: Lowering, op: Operation) -> None:
    out = lw.new_tile(op.results[0].type)
    for k, reg in enumerate(out.regs):
        linear = lw.linear(k) if out.layout.kind == "blocked" else "0"
        if reg_class(out.element) == "b64":
            lw.fn.emit(f"cvt.s64.s32 {reg}, {linear}")
        elif out.element.bitwidth < 32:
            lw.fn.emit(f"bfe.s32 {reg}, {linear}, 0, {out.element.bitwidth}")
        else:
            lw.fn.emit(f"mov.u32 {reg}, {linear}")
    lw.values[op.results[0]] = out


def grid_query(lw: Lowering, op: Operation) -> None:
    special = "%ctaid" if op.name == "get_tile_block_id" else "%nctaid"
    for axis, res in zip("xyz", op.results):
        out = lw.new_tile(res.type)
        lw.fn.emit(f"mov.u32 {out.regs[0]}, {special}.{axis}")
        lw.values[res] = out


def alias(lw: Lowering, op: Operation) -> None:
    """assume: the value itself (its facts are for the optimiser)."""
    lw.values[op.results[0]] = lw.get(op.operands[0])


def token(lw: Lowering, op: Operation) -> None:
    """make_token / join_tokens: no code; order is explicit in the memory lowering."""
    lw.values[op.results[0]] = None


def grid_dependency(lw: Lowering, op: Operation) -> None:
    """gdc_wait_tko / gdc_launch_dependents_tko: programmatic dependent launch control."""
    what = "wait" if op.name == "gdc_wait_tko" else "launch_dependents"
    lw.fn.emit(f"griddepcontrol.{what}")
    lw.values[op.results[0]] = None


def get_global(lw: Lowering, op: Operation) -> None:
    out = lw.new_tile(op.results[0].type)
    name = op.attributes.get("name")
    name = getattr(name, "value", name)
    if not isinstance(name, str):
        raise Unsupported("get_global without a symbol name")
    lw.fn.emit(f"mov.u64 {out.regs[0]}, {name.lstrip('@')}")
    lw.values[op.results[0]] = out
