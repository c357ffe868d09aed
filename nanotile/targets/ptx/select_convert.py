"""Casts and pointer arithmetic on registers: exti, trunci, itof, ftoi, ftof (f16, bf16,
f32, f64, f8 through f16x2), bitcast, offset, and pointer <-> integer moves.

f8E8M0FNU, f4E2M1FN and f8E5M3FNU (no cvt form on sm_90a) are decoded to f32 and encoded
from f32 with integer bit manipulation, rounding as the interpreter does (see ``_encode``).
An f64 source is first narrowed to f32 with round-to-odd, which keeps the later single
rounding exact (f8E8M0FNU's nearest modes instead round f64 -> f32 -> e8m0, as the
interpreter). A target with cvt forms for them (sm_100a's e2m1x2 / ue8m0x2) supplies its own
decoding and encoding through the hooks ``decode_narrow_float`` / ``encode_narrow_float``
(target.SELECT_HOOKS; sm100/select_convert.py), asked first; this file's bit manipulation
is the fallback where the target has no rule or declines."""

from __future__ import annotations

from typing import Any

from ...ir import types as T
from ...ir.core import Operation
from ...ir.enums import RoundingMode, Signedness
from .builder import float_literal, reg_class
from .select_instructions import Unsupported

Lowering = Any  # the selection state (select_instructions.Selection): its ``fn`` builds

_F8 = {"f8E4M3FN": "e4m3", "f8E5M2": "e5m2"}
_NARROW = {"f8E8M0FNU", "f4E2M1FN", "f8E5M3FNU"}
_KNOWN_FLOATS = {"f16", "bf16", "f32", "tf32", "f64", *_F8, *_NARROW}
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
    if rt.name in _NARROW:  # the interpreter goes through f64
        d = fn.reg("f64")
        fn.emit(f"cvt.rn.f64.{_cvt_name(t, signed)} {d}, {x}")
        _encode(lw, d, "f64", rt, op, out)
        return
    fn.emit(f"cvt.{rnd}.{_cvt_name(rt)}.{_cvt_name(t, signed)} {out}, {x}")


def _ftoi(lw: Lowering, t, rt, x: str, out: str, signed: bool) -> None:
    fn = lw.fn
    if t.name in _F8 or t.name in _NARROW:
        x, t = to_f32_any(lw, x, t), T.F32
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
    src, src_t = x, t
    if t.name in _F8 or t.name in _NARROW:
        x, t = to_f32_any(lw, x, t), T.F32
    if rt.name in _NARROW:
        if t.name in ("f16", "bf16"):
            f = fn.reg("f32")
            fn.emit(f"cvt.f32.{t.name} {f}, {x}")
            x, t = f, T.F32
        if rt.name == "f4E2M1FN" and src_t.name in _NAN_SIGN_BIT:
            _keep_nan_sign(lw, x, src, src_t)
        _encode(lw, x, "f64" if t.name == "f64" else "f32", rt, op, out)
        return
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
    an f32 register with its 13 low bits zero). f16 and bf16 widen to f32 exactly first;
    f64 narrows to f32 with the same rounding first, as tileiras does (F2F.F32.F64 then
    F2FP.TF32.F32, both .RZ for zero), which only nearest_even and zero have."""
    fn = lw.fn
    rnd = _TF32_RND.get(op.attributes.get("rounding_mode", RoundingMode.nearest_even))
    if rnd is None or t.name not in ("f16", "bf16", "f32", "f64"):
        raise Unsupported(f"ftof {t.name} -> tf32 with this rounding mode is not lowered yet")
    if t.name == "f64":
        if rnd == "rna":  # tileiras refuses it too
            raise Unsupported("ftof f64 -> tf32: only 'nearest_even' and 'zero' are supported "
                              "for narrowing conversions to standard types")
        f = fn.reg("f32")
        fn.emit(f"cvt.{rnd}.f32.f64 {f}, {x}")
        x = f
    elif t.name != "f32":
        f = fn.reg("f32")
        fn.emit(f"cvt.f32.{t.name} {f}, {x}")
        x = f
    bits = fn.reg("b32")
    fn.emit(f"cvt.{rnd}.tf32.f32 {bits}, {x}")
    fn.emit(f"mov.b32 {out}, {bits}")


# the sign bit of a NaN of each 16-bit-register float type that has signed NaNs
_NAN_SIGN_BIT = {"f16": 15, "bf16": 15, "f8E4M3FN": 7, "f8E5M2": 7}


def _keep_nan_sign(lw: Lowering, f: str, x: str, t) -> None:
    """f32 register ``f``, just converted from ``x`` of type ``t`` (_NAN_SIGN_BIT): if it is
    a NaN, one with the sign of ``x``. cvt may make a NaN the canonical (positive) one, and
    f4E2M1FN encodes a NaN by its sign, as the interpreter (ml_dtypes) does."""
    fn = lw.fn
    p, s = fn.reg("pred"), fn.reg("b32")
    fn.emit(f"setp.nan.f32 {p}, {f}, {f}")
    fn.emit(f"cvt.u32.u16 {s}, {x}")
    fn.emit(f"shl.b32 {s}, {s}, {31 - _NAN_SIGN_BIT[t.name]}")
    fn.emit(f"or.b32 {s}, {s}, 2143289344")  # 0x7FC00000: a NaN with that sign
    fn.emit(f"mov.b32 {f}, {s}", p)


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


def to_f32_any(lw: Lowering, x: str, t) -> str:
    """An f32 register holding the value of float ``x`` of any 16-bit-or-narrower type."""
    fn = lw.fn
    if t.name in ("f32", "tf32"):
        return x
    if t.name in _F8:
        return _f8_to_f32(lw, x, t)
    if t.name in ("f16", "bf16"):
        f = fn.reg("f32")
        fn.emit(f"cvt.f32.{t.name} {f}, {x}")
        return f
    if t.name not in _NARROW:
        raise Unsupported(f"{t.name} values are not lowered to PTX yet")
    rule = lw.target.select_rule("decode_narrow_float")
    if rule is not None and (decoded := rule(lw, x, t)) is not None:
        return decoded
    f = fn.reg("f32")
    b, r, e, m, p = fn.reg("b32"), fn.reg("b32"), fn.reg("b32"), fn.reg("b32"), fn.reg("pred")
    fn.emit(f"cvt.u32.u16 {b}, {x}")
    if t.name == "f8E8M0FNU":  # 2^(b-127); 0 is 2^-127 (an f32 subnormal), 0xFF NaN
        fn.emit(f"and.b32 {b}, {b}, 255")
        fn.emit(f"shl.b32 {r}, {b}, 23")
        fn.emit(f"setp.eq.u32 {p}, {b}, 0")
        fn.emit(f"mov.b32 {r}, 4194304", p)
        fn.emit(f"setp.eq.u32 {p}, {b}, 255")
        fn.emit(f"mov.b32 {r}, 2147483647", p)
    elif t.name == "f4E2M1FN":  # s eem: e = 0: m * 0.5, else (1 + m/2) * 2^(e-1)
        s = fn.reg("b32")
        fn.emit(f"and.b32 {m}, {b}, 1")
        fn.emit(f"bfe.u32 {e}, {b}, 1, 2")
        fn.emit(f"bfe.u32 {s}, {b}, 3, 1")
        fn.emit(f"add.s32 {r}, {e}, 126")
        fn.emit(f"shl.b32 {r}, {r}, 23")
        fn.emit(f"shl.b32 {m}, {m}, 22")
        fn.emit(f"or.b32 {r}, {r}, {m}")
        fn.emit(f"setp.eq.u32 {p}, {e}, 0")
        fn.emit(f"and.b32 {e}, {b}, 1")  # e = 0: 0.5 * m
        fn.emit(f"mul.lo.u32 {e}, {e}, 1056964608")
        fn.emit(f"mov.b32 {r}, {e}", p)
        fn.emit(f"shl.b32 {s}, {s}, 31")
        fn.emit(f"or.b32 {r}, {r}, {s}")
    else:  # f8E5M3FNU, unsigned, bias 15: e = 0: m * 2^-17, else (8 + m) * 2^(e-18)
        sub, scale = fn.reg("f32"), fn.reg("f32")
        fn.emit(f"and.b32 {b}, {b}, 255")
        fn.emit(f"shr.u32 {e}, {b}, 3")
        fn.emit(f"and.b32 {m}, {b}, 7")
        fn.emit(f"add.s32 {r}, {e}, 112")
        fn.emit(f"shl.b32 {r}, {r}, 23")
        fn.emit(f"shl.b32 {m}, {m}, 20")
        fn.emit(f"or.b32 {r}, {r}, {m}")
        fn.emit(f"and.b32 {m}, {b}, 7")
        fn.emit(f"cvt.rn.f32.u32 {sub}, {m}")
        fn.emit(f"mov.f32 {scale}, 0f37000000")  # 2^-17
        fn.emit(f"mul.rn.f32 {sub}, {sub}, {scale}")
        fn.emit(f"setp.eq.u32 {p}, {e}, 0")
        fn.emit(f"mov.b32 {r}, {sub}", p)
        fn.emit(f"setp.eq.u32 {p}, {b}, 255")
        fn.emit(f"mov.b32 {r}, 2147483647", p)
    fn.emit(f"mov.b32 {f}, {r}")
    return f


def _round_to_odd_f32(lw: Lowering, d: str) -> str:
    """f64 -> f32 with round-to-odd (truncate, then set the last bit if inexact): a later
    rounding to a format with at most 21 significant bits is then exactly the rounding
    of the f64 value."""
    fn = lw.fn
    f, back, b, p = fn.reg("f32"), fn.reg("f64"), fn.reg("b32"), fn.reg("pred")
    fn.emit(f"cvt.rz.f32.f64 {f}, {d}")
    fn.emit(f"cvt.f64.f32 {back}, {f}")
    fn.emit(f"setp.neu.f64 {p}, {back}, {d}")
    fn.emit(f"mov.b32 {b}, {f}")
    fn.emit(f"or.b32 {b}, {b}, 1", p)
    fn.emit(f"mov.b32 {f}, {b}")
    return f


def _encode(lw: Lowering, x: str, xt: str, rt, op: Operation, out: str) -> None:
    """An f32 or f64 register -> f8E8M0FNU / f4E2M1FN / f8E5M3FNU bits in b16 ``out``,
    as the interpreter rounds (ml_dtypes, or its own rules):

    - f8E8M0FNU, nearest modes: the f32 exponent plus one if its mantissa is >= 1/2
      (ties up; an f32 subnormal gives 1 above 2^-127, else 0); zero, negatives, infinities and NaN are NaN (0xFF). Modes zero and
      positive_inf: floor (ceil) of log2 x clamped to [0, 254]; +inf 254 (NaN); NaN and
      negatives NaN; +-0 counts as 1.0 (bits 127).
    - f4E2M1FN: nearest even, saturating at 6; NaN gives 8 (sign inverted).
    - f8E5M3FNU: nearest even, saturating at 114688; +-0 -> 0, negatives and NaN 0xFF.
    """
    fn = lw.fn
    mode = op.attributes.get("rounding_mode", RoundingMode.nearest_even)
    rule = lw.target.select_rule("encode_narrow_float")
    if rt.name == "f8E8M0FNU" and mode in (RoundingMode.zero, RoundingMode.positive_inf):
        if xt == "f32" and rule is not None and rule(lw, x, rt, mode, out):
            return
        r = fn.reg("b32")
        _encode_e8m0_directed(lw, x, xt, mode == RoundingMode.positive_inf, r)
        fn.emit(f"cvt.u16.u32 {out}, {r}")
        return
    if xt == "f64":
        if rt.name == "f8E8M0FNU":
            f = fn.reg("f32")
            fn.emit(f"cvt.rn.f32.f64 {f}, {x}")
            x = f
        else:
            d, x = x, _round_to_odd_f32(lw, x)
            if rt.name == "f4E2M1FN":  # a NaN keeps its sign (see _keep_nan_sign)
                nan, hi, lo = fn.reg("pred"), fn.reg("b32"), fn.reg("b32")
                fn.emit(f"setp.nan.f64 {nan}, {d}, {d}")
                fn.emit(f"mov.b64 {{{lo}, {hi}}}, {d}")
                fn.emit(f"or.b32 {hi}, {hi}, 2143289344")
                fn.emit(f"mov.b32 {x}, {hi}", nan)
    if rule is not None and rule(lw, x, rt, mode, out):
        return
    r, p, q = fn.reg("b32"), fn.reg("pred"), fn.reg("pred")
    u = fn.reg("b32")
    fn.emit(f"mov.b32 {u}, {x}")
    if rt.name == "f8E8M0FNU":
        fn.emit(f"add.u32 {r}, {u}, 4194304")
        fn.emit(f"shr.u32 {r}, {r}, 23")
        fn.emit(f"setp.lt.u32 {p}, {u}, 8388608")  # f32 subnormal: 1 above 2^-127, else 0
        fn.emit(f"setp.gt.u32 {q}, {u}, 4194304")
        fn.emit(f"selp.u32 {u}, 1, 0, {q}")
        fn.emit(f"mov.u32 {r}, {u}", p)
        fn.emit(f"mov.b32 {u}, {x}")
        fn.emit(f"setp.eq.u32 {p}, {u}, 0")
        fn.emit(f"setp.ge.u32 {q}, {u}, 2139095040")  # inf, NaN, negative (-0 too)
        fn.emit(f"or.pred {p}, {p}, {q}")
        fn.emit(f"mov.u32 {r}, 255", p)
    elif rt.name == "f4E2M1FN":
        a, c = fn.reg("f32"), fn.reg("b32")
        fn.emit(f"abs.f32 {a}, {x}")
        fn.emit(f"mov.u32 {r}, 0")
        # midpoints between 0 0.5 1 1.5 2 3 4 6; '>' where the tie goes down (even below)
        for cmp, mid in (("gt", 0.25), ("ge", 0.75), ("gt", 1.25), ("ge", 1.75), ("gt", 2.5),
                         ("ge", 3.5), ("gt", 5.0)):
            fn.emit(f"setp.{cmp}.f32 {p}, {a}, {float_literal(mid, 'f32')}")
            fn.emit(f"selp.u32 {c}, 1, 0, {p}")
            fn.emit(f"add.u32 {r}, {r}, {c}")
        fn.emit(f"shr.u32 {c}, {u}, 31")
        fn.emit(f"shl.b32 {c}, {c}, 3")
        fn.emit(f"or.b32 {r}, {r}, {c}")
        fn.emit(f"setp.nan.f32 {p}, {x}, {x}")
        fn.emit(f"xor.b32 {c}, {c}, 8")
        fn.emit(f"mov.b32 {r}, {c}", p)
    else:  # f8E5M3FNU
        e, rem, t, sub = fn.reg("b32"), fn.reg("b32"), fn.reg("b32"), fn.reg("f32")
        fn.emit(f"shr.u32 {e}, {u}, 23")
        fn.emit(f"sub.s32 {r}, {e}, 112")
        fn.emit(f"shl.b32 {r}, {r}, 3")
        fn.emit(f"bfe.u32 {t}, {u}, 20, 3")
        fn.emit(f"or.b32 {r}, {r}, {t}")
        fn.emit(f"and.b32 {rem}, {u}, 1048575")
        fn.emit(f"and.b32 {t}, {r}, 1")
        fn.emit(f"add.u32 {rem}, {rem}, {t}")  # ties: up only from an odd code
        fn.emit(f"setp.gt.u32 {p}, {rem}, 524288")
        fn.emit(f"selp.u32 {t}, 1, 0, {p}")
        fn.emit(f"add.u32 {r}, {r}, {t}")
        fn.emit(f"min.u32 {r}, {r}, 254")
        fn.emit(f"mul.rn.f32 {sub}, {x}, 0f48000000")  # below 2^-14: m = rni(x * 2^17)
        fn.emit(f"cvt.rni.u32.f32 {t}, {sub}")
        fn.emit(f"setp.lt.u32 {p}, {u}, 947912704")  # 2^-14
        fn.emit(f"mov.b32 {r}, {t}", p)
        fn.emit(f"setp.eq.f32 {p}, {x}, 0f00000000")
        fn.emit(f"mov.u32 {r}, 0", p)
        fn.emit(f"setp.lt.f32 {p}, {x}, 0f00000000")
        fn.emit(f"setp.nan.f32 {q}, {x}, {x}")
        fn.emit(f"or.pred {p}, {p}, {q}")
        fn.emit(f"mov.u32 {r}, 255", p)
    fn.emit(f"cvt.u16.u32 {out}, {r}")


def _encode_e8m0_directed(lw: Lowering, x: str, xt: str, up: bool, r: str) -> None:
    """f8E8M0FNU with rounding zero / positive_inf, from the bits of an f32 or f64."""
    fn = lw.fn
    wide = xt == "f64"
    bits, mant, bias = (64, 52, 1023) if wide else (32, 23, 127)
    cls, b = f"b{bits}", f"b{bits}"
    u, ax, m, e64 = fn.reg(cls), fn.reg(cls), fn.reg(cls), fn.reg(cls)
    k, e, z = fn.reg("b32"), fn.reg("b32"), fn.reg("b32")
    p, sub, pow2 = fn.reg("pred"), fn.reg("pred"), fn.reg("pred")
    fn.emit(f"mov.{b} {u}, {x}")
    fn.emit(f"and.{b} {ax}, {u}, {(1 << (bits - 1)) - 1}")
    fn.emit(f"and.{b} {m}, {u}, {(1 << mant) - 1}")
    fn.emit(f"shr.u{bits} {e64}, {ax}, {mant}")
    fn.emit(f"cvt.u32.u{bits} {e}, {e64}" if wide else f"mov.b32 {e}, {e64}")
    fn.emit(f"sub.s32 {k}, {e}, {bias}")
    fn.emit(f"setp.eq.u{bits} {pow2}, {m}, 0")
    fn.emit(f"setp.eq.u32 {sub}, {e}, 0")
    if wide:  # f64 subnormals are far below 2^-127: any k below -128 clamps to 0
        fn.emit(f"mov.u32 {k}, -2000", sub)
    else:  # floor(log2(m * 2^-149)) = 31 - clz(m) - 149; a power of two if one bit is set
        pc = fn.reg("b32")
        fn.emit(f"clz.b32 {z}, {m}")
        fn.emit(f"mov.u32 {k}, -118", sub)
        fn.emit(f"sub.s32 {k}, {k}, {z}", sub)
        fn.emit(f"popc.b32 {pc}, {m}")
        fn.emit(f"setp.eq.u32 {pow2}, {pc}, 1", sub)
    if up:
        fn.emit(f"add.s32 {k}, {k}, 1", "!" + pow2)
    fn.emit(f"add.s32 {k}, {k}, 127")
    fn.emit(f"max.s32 {k}, {k}, 0")
    fn.emit(f"min.s32 {r}, {k}, 254")
    fn.emit(f"setp.eq.u{bits} {p}, {ax}, 0")  # +-0: as 1.0
    fn.emit(f"mov.u32 {r}, 127", p)
    fn.emit(f"setp.eq.u{bits} {p}, {ax}, {((1 << (bits - 1 - mant)) - 1) << mant}")  # inf
    fn.emit(f"mov.u32 {r}, {255 if up else 254}", p)
    fn.emit(f"setp.nan.{'f64' if wide else 'f32'} {p}, {x}, {x}")
    fn.emit(f"mov.u32 {r}, 255", p)
    fn.emit(f"setp.lt.{'f64' if wide else 'f32'} {p}, {x}, {'0d0000000000000000' if wide else '0f00000000'}")
    fn.emit(f"mov.u32 {r}, 255", p)


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
        if rt.bitwidth < 16:  # an 8/4-bit float's bits -> the sign-extended integer
            fn.emit(f"bfe.s32 {out}, {out}, 0, {rt.bitwidth}")
    elif a == "b32" and b == "b16":
        fn.emit(f"cvt.u16.u32 {out}, {x}")
        if rt.bitwidth < 16:  # keep only the float's bits (the integer is sign-extended)
            fn.emit(f"and.b16 {out}, {out}, {(1 << rt.bitwidth) - 1}")
    else:
        raise Unsupported(f"bitcast {t} -> {rt}")
