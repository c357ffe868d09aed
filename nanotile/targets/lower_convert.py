"""Casts and pointer arithmetic on registers: exti, trunci, itof, ftoi, ftof (f16, bf16,
f32, f64, f8 through f16x2), bitcast, offset, and pointer <-> integer moves."""

from __future__ import annotations

from ..ir import types as T
from ..ir.core import Operation
from ..ir.enums import RoundingMode, Signedness
from .lower import Lowering, Unsupported
from .ptx import reg_class

_F8 = {"f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}
_KNOWN_FLOATS = {"f16", "bf16", "f32", "tf32", "f64", *_F8}
_RND = {RoundingMode.nearest_even: "rn", RoundingMode.zero: "rz",
        RoundingMode.negative_inf: "rm", RoundingMode.positive_inf: "rp"}


def _cvt_name(t: T.ElementType, signed: bool = True) -> str:
    if t.is_float:
        return "f32" if t.name == "tf32" else t.name
    if t.name == "i1":
        return "pred"
    return f"{'s' if signed else 'u'}{max(t.bitwidth, 32) if t.bitwidth < 32 else t.bitwidth}"


def emit_convert(lw: Lowering, op: Operation, t, rt, ins: list[str], out: str) -> None:
    fn, name = lw.fn, op.name
    signed = op.attributes.get("signedness", Signedness.signed) == Signedness.signed
    x = ins[0]
    for e in (t, rt):
        if getattr(e, "is_float", False) and e.name not in _KNOWN_FLOATS:
            raise Unsupported(f"conversions of {e.name} are not lowered to PTX yet")
    if name == "offset":
        pointee = rt.pointee
        size = max(1, getattr(pointee, "bitwidth", 8) // 8)
        off_t = op.operands[1].type.element
        if off_t.bitwidth == 64:
            fn.emit(f"mad.lo.s64 {out}, {ins[1]}, {size}, {x}")
        else:
            w = fn.reg("b64")
            fn.emit(f"mul.wide.s32 {w}, {ins[1]}, {size}")
            fn.emit(f"add.s64 {out}, {x}, {w}")
    elif name in ("int_to_ptr", "ptr_to_int", "ptr_to_ptr"):
        fn.emit(f"mov.b64 {out}, {x}")
    elif name == "exti":
        _exti(lw, t, rt, x, out, signed)
    elif name == "trunci":
        if rt.name == "i1":
            tmp = fn.reg(reg_class(t))
            fn.emit(f"and.b{64 if t.bitwidth == 64 else 32} {tmp}, {x}, 1")
            fn.emit(f"setp.ne.{'s64' if t.bitwidth == 64 else 's32'} {out}, {tmp}, 0")
        elif t.bitwidth == 64 and rt.bitwidth <= 32:
            fn.emit(f"cvt.u32.u64 {out}, {x}")
            if rt.bitwidth < 32:
                fn.emit(f"bfe.s32 {out}, {out}, 0, {rt.bitwidth}")
        else:
            fn.emit(f"bfe.s32 {out}, {x}, 0, {rt.bitwidth}")
    elif name == "itof":
        _itof(lw, t, rt, x, out, signed, op)
    elif name == "ftoi":
        _ftoi(lw, t, rt, x, out, signed)
    elif name == "ftof":
        _ftof(lw, t, rt, x, out, op)
    elif name == "bitcast":
        _bitcast(lw, t, rt, x, out)
    else:
        raise Unsupported(f"the PTX back end cannot lower '{name}' yet")


def _exti(lw: Lowering, t, rt, x: str, out: str, signed: bool) -> None:
    fn = lw.fn
    if t.name == "i1":
        one = -1 if signed else 1
        fn.emit(f"selp.b{64 if rt.bitwidth == 64 else 32} {out}, {one}, 0, {x}")
        if rt.bitwidth < 32:
            fn.emit(f"bfe.s32 {out}, {out}, 0, {rt.bitwidth}")
        return
    src = x
    if not signed and t.bitwidth < 32:
        src = fn.reg("b32")
        fn.emit(f"and.b32 {src}, {x}, {(1 << t.bitwidth) - 1}")
    if rt.bitwidth == 64:
        fn.emit(f"cvt.{'s64.s32' if signed or t.bitwidth < 32 else 'u64.u32'} {out}, {src}")
    else:
        fn.emit(f"mov.b32 {out}, {src}")
        if rt.bitwidth < 32:
            fn.emit(f"bfe.s32 {out}, {out}, 0, {rt.bitwidth}")


def _itof(lw: Lowering, t, rt, x: str, out: str, signed: bool, op: Operation) -> None:
    fn = lw.fn
    rnd = _RND.get(op.attributes.get("rounding_mode", RoundingMode.nearest_even), "rn")
    if t.name == "i1":
        src = fn.reg("b32")
        fn.emit(f"selp.b32 {src}, {-1 if signed else 1}, 0, {x}")
        t = T.I32
        x = src
    elif not signed and t.bitwidth < 32:
        src = fn.reg("b32")
        fn.emit(f"and.b32 {src}, {x}, {(1 << t.bitwidth) - 1}")
        x = src
    if rt.name in _F8:
        f = fn.reg("f32")
        fn.emit(f"cvt.{rnd}.f32.{_cvt_name(t, signed)} {f}, {x}")
        _f32_to_f8(lw, f, rt, out)
        return
    fn.emit(f"cvt.{rnd}.{_cvt_name(rt)}.{_cvt_name(t, signed)} {out}, {x}")


def _ftoi(lw: Lowering, t, rt, x: str, out: str, signed: bool) -> None:
    fn = lw.fn
    if t.name in _F8:
        x, t = _f8_to_f32(lw, x, t), T.F32
    if rt.name == "i1":
        r = fn.reg("b32")
        fn.emit(f"cvt.rzi.s32.{_cvt_name(t)} {r}, {x}")
        fn.emit(f"setp.ne.s32 {out}, {r}, 0")
        return
    if rt.bitwidth < 32:
        fn.emit(f"cvt.rzi.sat.{'s' if signed else 'u'}{rt.bitwidth}.{_cvt_name(t)} {out}, {x}")
        return
    fn.emit(f"cvt.rzi.{_cvt_name(rt, signed)}.{_cvt_name(t)} {out}, {x}")


def _ftof(lw: Lowering, t, rt, x: str, out: str, op: Operation) -> None:
    fn = lw.fn
    rnd = _RND.get(op.attributes.get("rounding_mode", RoundingMode.nearest_even), "rn")
    if t.name in _F8:
        x, t = _f8_to_f32(lw, x, t), T.F32
    if rt.name in _F8:
        if t.name != "f32":
            f = fn.reg("f32")
            fn.emit(f"cvt.f32.{_cvt_name(t)} {f}, {x}")
            x = f
        _f32_to_f8(lw, x, rt, out)
        return
    if rt.name == "tf32" and t.name != "tf32":
        _f32_to_tf32(lw, x, t, op, out)
        return
    a, b = _cvt_name(t), _cvt_name(rt)
    if a == b:
        fn.emit(f"mov.{'b16' if reg_class(rt) == 'b16' else b} {out}, {x}")
    elif t.bitwidth > rt.bitwidth or (t.name, rt.name) in (("f16", "bf16"), ("bf16", "f16")):
        if t.bitwidth == 16:  # f16 <-> bf16 goes through f32
            f = fn.reg("f32")
            fn.emit(f"cvt.f32.{a} {f}, {x}")
            x, a = f, "f32"
        fn.emit(f"cvt.{rnd}.{b}.{a} {out}, {x}")
    else:
        fn.emit(f"cvt.{b}.{a} {out}, {x}")


_TF32_RND = {RoundingMode.nearest_even: "rn", RoundingMode.zero: "rz",
             RoundingMode.nearest_away: "rna"}


def _f32_to_tf32(lw: Lowering, x: str, t, op: Operation, out: str) -> None:
    """ftof to tf32 rounds to 10 mantissa bits (cvt.{rn,rz,rna}.tf32.f32; the tf32 lives in
    an f32 register with its 13 low bits zero). f16 and bf16 widen to f32 exactly first."""
    fn = lw.fn
    rnd = _TF32_RND.get(op.attributes.get("rounding_mode", RoundingMode.nearest_even))
    if rnd is None or t.name not in ("f16", "bf16", "f32"):
        raise Unsupported(f"ftof {t.name} -> tf32 with this rounding mode is not lowered yet")
    if t.name != "f32":
        f = fn.reg("f32")
        fn.emit(f"cvt.f32.{t.name} {f}, {x}")
        x = f
    bits = fn.reg("b32")
    fn.emit(f"cvt.{rnd}.tf32.f32 {bits}, {x}")
    fn.emit(f"mov.b32 {out}, {bits}")


def _f8_to_f32(lw: Lowering, x: str, t) -> str:
    """One f8 value (low byte of a b16 register) -> f32, through cvt's f16x2 form."""
    fn = lw.fn
    pair, lo, hi, f = fn.reg("b32"), fn.reg("b16"), fn.reg("b16"), fn.reg("f32")
    fn.emit(f"cvt.rn.f16x2.{_F8[t.name]}x2 {pair}, {x}")
    fn.emit(f"mov.b32 {{{lo}, {hi}}}, {pair}")
    fn.emit(f"cvt.f32.f16 {f}, {lo}")
    return f


def _f32_to_f8(lw: Lowering, x: str, rt, out: str) -> None:
    """f32 -> one f8 in the low byte of ``out`` (satfinite, as the spec's ftof)."""
    fn = lw.fn
    zero = fn.reg("f32")
    fn.emit(f"mov.f32 {zero}, 0f00000000")
    fn.emit(f"cvt.rn.satfinite.{_F8[rt.name]}x2.f32 {out}, {zero}, {x}")


def _bitcast(lw: Lowering, t, rt, x: str, out: str) -> None:
    fn = lw.fn
    a, b = reg_class(t), reg_class(rt)
    if a == b:
        fn.emit(f"mov.b{16 if a == 'b16' else 64 if '64' in a else 32} {out}, {x}")
    elif {a, b} <= {"b32", "f32"}:
        fn.emit(f"mov.b32 {out}, {x}")
    elif {a, b} <= {"b64", "f64"}:
        fn.emit(f"mov.b64 {out}, {x}")
    elif a == "b16" and b == "b32":
        fn.emit(f"cvt.s32.s16 {out}, {x}")
    elif a == "b32" and b == "b16":
        fn.emit(f"cvt.u16.u32 {out}, {x}")
    else:
        raise Unsupported(f"bitcast {t} -> {rt}")
