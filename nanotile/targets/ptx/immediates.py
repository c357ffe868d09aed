"""PTX immediates for constants: the bits of a constant's element (a dense attribute's
bytes, an integer or float attribute) written as PTX wants them (``0f3F800000`` for an
f32, ``0x3C00`` for an f16 bit pattern), and the move of one into a register."""

from __future__ import annotations

from typing import Any

from ...ir import attrs as A
from ...ir import types as T
from .builder import reg_class

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


def _mov_imm(lw: Any, r: str, imm: str, cls: str) -> None:
    if cls == "pred":
        lw.fn.emit(f"setp.ne.s32 {r}, {imm}, 0")
    else:
        lw.fn.emit(f"mov.{_MOV[cls]} {r}, {imm}")

