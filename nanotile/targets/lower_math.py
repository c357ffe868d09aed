"""Elementwise ops -> per-thread PTX, one instruction sequence per register slot.

``emit_scalar`` lowers one elementwise op on registers (also used for the scalar bodies
of reduce and scan). f16/bf16 arithmetic runs in f32 and is rounded once (exact for
+ - * / sqrt, since f32 has more than twice the bits). i8/i16 live sign-extended in
32-bit registers and are re-normalised after arithmetic. Transcendentals use the
``.approx`` instructions (ex2, lg2, sin, cos, tanh, rsqrt), scaled where needed. remf,
atan2 and fpowi have no PTX instruction: remf is an exact integer fmod, atan2 and fpowi
f64 sequences (``_exact_op``).
"""

from __future__ import annotations

from ..ir import types as T
from ..ir.core import Operation
from ..ir.enums import ComparisonOrdering, ComparisonPredicate, RoundingMode, Signedness
from .layout import TileRegs
from .lower import Lowering, Unsupported
from .ptx.builder import float_literal, reg_class

_RND = {RoundingMode.nearest_even: "rn", RoundingMode.zero: "rz",
        RoundingMode.negative_inf: "rm", RoundingMode.positive_inf: "rp"}
_CMP = {ComparisonPredicate.equal: "eq", ComparisonPredicate.not_equal: "ne",
        ComparisonPredicate.less_than: "lt", ComparisonPredicate.less_than_or_equal: "le",
        ComparisonPredicate.greater_than: "gt",
        ComparisonPredicate.greater_than_or_equal: "ge"}
_LOG2E = 1.4426950408889634
_LN2 = 0.6931471805599453


def elem(t: T.Type) -> T.ElementType:
    e = t.element if isinstance(t, T.TileType) else t
    return e  # type: ignore[return-value]


def ityp(t: T.Type, signed: bool = True) -> str:
    """PTX integer type of a register holding ``t`` (i8/i16 widened to 32 bits)."""
    e = elem(t)
    bits = 64 if isinstance(e, T.PointerType) or e.bitwidth == 64 else 32
    return f"{'s' if signed else 'u'}{bits}"


def to_f32(lw: Lowering, reg: str, t: T.ElementType) -> str:
    if t.name in ("f32", "tf32", "f64"):
        return reg
    if t.name not in ("f16", "bf16"):
        raise Unsupported(f"arithmetic on {t.name} is not supported by the PTX back end yet")
    r = lw.fn.reg("f32")
    lw.fn.emit(f"cvt.f32.{t.name} {r}, {reg}")
    return r


def from_f32(lw: Lowering, freg: str, t: T.ElementType, out: str, rnd: str = "rn") -> None:
    if t.name in ("f32", "tf32", "f64"):
        lw.fn.emit(f"mov.{'f64' if t.name == 'f64' else 'f32'} {out}, {freg}")
    else:
        lw.fn.emit(f"cvt.{rnd}.{t.name}.f32 {out}, {freg}")


def normalize(lw: Lowering, reg: str, t: T.ElementType) -> None:
    """Re-sign-extend an i8/i16 result held in a 32-bit register."""
    if not t.is_float and t.bitwidth in (8, 16, 4):
        lw.fn.emit(f"bfe.s32 {reg}, {reg}, 0, {t.bitwidth}")


def zext(lw: Lowering, reg: str, t: T.ElementType) -> str:
    """The zero-extended value of a sign-extended narrow integer (for unsigned ops)."""
    if t.is_float or t.bitwidth >= 32 or t.name == "i1":
        return reg
    r = lw.fn.reg("b32")
    lw.fn.emit(f"and.b32 {r}, {reg}, {(1 << t.bitwidth) - 1}")
    return r


def lower_elementwise(lw: Lowering, op: Operation) -> None:
    out = lw.new_tile(op.results[0].type)
    ins = [lw.get(v) for v in op.operands]
    if all(isinstance(t, TileRegs) and t.layout.kind == "replicated" for t in ins):
        out = TileRegs(out.element, out.shape, _rep(out), out.regs[:1])
    for k, reg in enumerate(out.regs):
        emit_scalar(lw, op, [lw.slot(t, k) for t in ins], reg)
    lw.values[op.results[0]] = out


def _rep(t: TileRegs):
    from .layout import Layout

    return Layout("replicated", t.layout.elements, t.layout.threads)


def emit_scalar(lw: Lowering, op: Operation, ins: list[str], out: str) -> None:
    """Lower one elementwise op on registers ``ins`` into register ``out``."""
    name = op.name
    t = elem(op.operands[0].type) if op.operands else elem(op.results[0].type)
    rt = elem(op.results[0].type)
    a = op.attributes
    fn = lw.fn
    if name in _FLOAT_BINARY or name in _FLOAT_UNARY or name == "fma":
        _float_op(lw, op, t, ins, out)
    elif name in _INT_BINARY:
        _int_binary(lw, op, t, ins, out)
    elif name == "cmpi":
        signed = a.get("signedness", Signedness.signed) == Signedness.signed
        pred = _CMP[a["comparison_predicate"]]
        if t.name == "i1":
            _compare_i1(lw, pred, signed, ins, out)
            return
        x, y = ins if signed else (zext(lw, ins[0], t), zext(lw, ins[1], t))
        fn.emit(f"setp.{pred}.{ityp(t, signed)} {out}, {x}, {y}")
    elif name == "cmpf":
        pred = _CMP[a["comparison_predicate"]]
        if a.get("comparison_ordering") == ComparisonOrdering.unordered:
            pred += "u"
        ft = "f64" if t.name == "f64" else "f32"
        fn.emit(f"setp.{pred}.{ft} {out}, {to_f32(lw, ins[0], t)}, {to_f32(lw, ins[1], t)}")
    elif name == "select":
        if rt.name == "i1":
            n1, x, y = fn.reg("pred"), fn.reg("pred"), fn.reg("pred")
            fn.emit(f"and.pred {x}, {ins[0]}, {ins[1]}")
            fn.emit(f"not.pred {n1}, {ins[0]}")
            fn.emit(f"and.pred {y}, {n1}, {ins[2]}")
            fn.emit(f"or.pred {out}, {x}, {y}")
        else:
            fn.emit(f"selp.b{_bits(rt)} {out}, {ins[1]}, {ins[2]}, {ins[0]}")
    else:
        from .lower_convert import emit_convert

        emit_convert(lw, op, t, rt, ins, out)


def _compare_i1(lw: Lowering, pred: str, signed: bool, ins: list[str], out: str) -> None:
    """Compare two i1 values: unsigned they are 0/1, signed true is -1."""
    fn = lw.fn
    x, y = ins if not signed or pred in ("eq", "ne") else ins[::-1]
    if pred in ("eq", "ne"):
        fn.emit(f"xor.pred {out}, {x}, {y}")
        if pred == "eq":
            fn.emit(f"not.pred {out}, {out}")
        return
    if pred in ("gt", "ge"):  # a > b is b < a
        x, y, pred = y, x, "lt" if pred == "gt" else "le"
    n = fn.reg("pred")
    if pred == "lt":  # x < y: !x & y
        fn.emit(f"not.pred {n}, {x}")
        fn.emit(f"and.pred {out}, {n}, {y}")
    else:  # x <= y: !x | y
        fn.emit(f"not.pred {n}, {x}")
        fn.emit(f"or.pred {out}, {n}, {y}")


def _bits(t: T.Type) -> int:
    cls = reg_class(t)
    return {"b16": 16, "b32": 32, "f32": 32, "b64": 64, "f64": 64}[cls]


_FLOAT_BINARY = {"addf": "add", "subf": "sub", "mulf": "mul", "divf": "div",
                 "maxf": "max", "minf": "min", "powf": "pow", "fpowf": "pow",
                 "atan2": "atan2", "remf": "rem", "fpowi": "powi"}
_FLOAT_UNARY = {"negf", "absf", "sqrt", "rsqrt", "exp", "exp2", "log", "log2", "sin", "cos",
                "tanh", "floor", "ceil", "tan", "sinh", "cosh"}


def _float_op(lw: Lowering, op: Operation, t: T.ElementType, ins: list[str], out: str) -> None:
    fn, a, name = lw.fn, op.attributes, op.name
    if not t.is_float:
        raise Unsupported(f"'{name}' on {t.name}")
    if name in ("remf", "atan2", "fpowi"):
        _exact_op(lw, op, t, ins, out)
        return
    wide = t.name == "f64"
    ft = "f64" if wide else "f32"
    xs = [to_f32(lw, r, t) for r in ins]
    res = out if t.name in ("f32", "f64", "tf32") else fn.reg("f32")
    mode = a.get("rounding_mode", RoundingMode.nearest_even)
    ftz = ".ftz" if a.get("flush_to_zero") and not wide else ""
    rnd = _RND.get(mode, "rn")
    if name in ("addf", "subf", "mulf"):
        fn.emit(f"{_FLOAT_BINARY[name]}.{rnd}{ftz}.{ft} {res}, {xs[0]}, {xs[1]}")
    elif name == "fma":
        fn.emit(f"fma.{rnd}{ftz}.{ft} {res}, {xs[0]}, {xs[1]}, {xs[2]}")
    elif name == "divf":
        if mode == RoundingMode.approx and not wide:
            fn.emit(f"div.approx{ftz}.f32 {res}, {xs[0]}, {xs[1]}")
        elif mode == RoundingMode.full and not wide:
            fn.emit(f"div.full{ftz}.f32 {res}, {xs[0]}, {xs[1]}")
        else:
            fn.emit(f"div.{rnd}{ftz}.{ft} {res}, {xs[0]}, {xs[1]}")
    elif name in ("maxf", "minf"):
        nan = ".NaN" if a.get("propagate_nan") and not wide else ""
        fn.emit(f"{_FLOAT_BINARY[name]}{ftz}{nan}.{ft} {res}, {xs[0]}, {xs[1]}")
    elif name == "negf":
        fn.emit(f"neg{ftz}.{ft} {res}, {xs[0]}")
    elif name == "absf":
        fn.emit(f"abs{ftz}.{ft} {res}, {xs[0]}")
    elif name == "sqrt":
        kind = "approx" if mode == RoundingMode.approx and not wide else rnd
        fn.emit(f"sqrt.{kind}{ftz}.{ft} {res}, {xs[0]}")
    elif name in ("floor", "ceil"):
        fn.emit(f"cvt.{'rmi' if name == 'floor' else 'rpi'}.{ft}.{ft} {res}, {xs[0]}")
    elif wide:
        raise Unsupported(f"'{name}' on f64 (no f64 approximation in PTX; full-precision "
                          "sequences are not written yet)")
    else:
        _approx(lw, name, xs, res)
    if res != out:
        # A directed rounding must also round the narrowing the same way: RP_f16(RP_f32(y))
        # is RP_f16(y) because the f16/bf16 values are f32 values (nested grids), while
        # cvt.rn would undo the direction (an RP sum could end below the exact sum).
        directed = name in _ROUNDED and rnd in ("rz", "rm", "rp")
        from_f32(lw, res, t, out, rnd if directed else "rn")


# ops whose PTX instruction takes the op's rounding mode
_ROUNDED = frozenset({"addf", "subf", "mulf", "fma", "divf", "sqrt"})


def _approx(lw: Lowering, name: str, xs: list[str], res: str) -> None:
    fn = lw.fn
    if name == "rsqrt":
        fn.emit(f"rsqrt.approx.f32 {res}, {xs[0]}")
    elif name == "exp2":
        fn.emit(f"ex2.approx.f32 {res}, {xs[0]}")
    elif name == "exp":
        t = fn.reg("f32")
        fn.emit(f"mul.f32 {t}, {xs[0]}, 0f{_hex(_LOG2E)}")
        fn.emit(f"ex2.approx.f32 {res}, {t}")
    elif name in ("log", "log2"):
        if name == "log2":
            fn.emit(f"lg2.approx.f32 {res}, {xs[0]}")
        else:
            t = fn.reg("f32")
            fn.emit(f"lg2.approx.f32 {t}, {xs[0]}")
            fn.emit(f"mul.f32 {res}, {t}, 0f{_hex(_LN2)}")
    elif name in ("sin", "cos", "tanh"):
        fn.emit(f"{name}.approx.f32 {res}, {xs[0]}")
    elif name == "tan":
        s, c = fn.reg("f32"), fn.reg("f32")
        fn.emit(f"sin.approx.f32 {s}, {xs[0]}")
        fn.emit(f"cos.approx.f32 {c}, {xs[0]}")
        fn.emit(f"div.approx.f32 {res}, {s}, {c}")
    elif name in ("sinh", "cosh"):
        # e^x/2 -/+ e^-x/2 with e^x/2 = 2^(x log2 e - 1): the halving is folded into the
        # exponent so that cosh(89) = 2.24e38 does not overflow through e^89 = inf.
        t, u, p, q = fn.reg("f32"), fn.reg("f32"), fn.reg("f32"), fn.reg("f32")
        fn.emit(f"mul.f32 {t}, {xs[0]}, 0f{_hex(_LOG2E)}")
        fn.emit(f"sub.f32 {u}, {t}, 0f3F800000")
        fn.emit(f"ex2.approx.f32 {p}, {u}")
        fn.emit(f"neg.f32 {u}, {t}")
        fn.emit(f"sub.f32 {u}, {u}, 0f3F800000")
        fn.emit(f"ex2.approx.f32 {q}, {u}")
        fn.emit(f"{'sub' if name == 'sinh' else 'add'}.f32 {res}, {p}, {q}")
    elif name in ("powf", "fpowf"):
        _pow(lw, xs[0], xs[1], res)
    else:
        raise Unsupported(f"'{name}' is not lowered to PTX yet")


def _pow(lw: Lowering, x: str, y: str, res: str) -> None:
    """x**y = 2**(y * log2|x|), negated for a negative x and an odd integer y, NaN for a
    negative x and a non-integer y; x**0 = 1 (as C's pow)."""
    fn = lw.fn
    a, t, r = fn.reg("f32"), fn.reg("f32"), fn.reg("f32")
    neg, whole, odd, zero = fn.reg("pred"), fn.reg("pred"), fn.reg("pred"), fn.reg("pred")
    fn.emit(f"abs.f32 {a}, {x}")
    fn.emit(f"lg2.approx.f32 {t}, {a}")
    fn.emit(f"mul.f32 {t}, {t}, {y}")
    fn.emit(f"ex2.approx.f32 {res}, {t}")
    fn.emit(f"setp.lt.f32 {neg}, {x}, 0f00000000")
    fn.emit(f"cvt.rzi.f32.f32 {r}, {y}")
    fn.emit(f"setp.eq.f32 {whole}, {r}, {y}")
    fn.emit(f"mul.f32 {r}, {y}, 0f3F000000")
    fn.emit(f"cvt.rzi.f32.f32 {r}, {r}")
    fn.emit(f"add.f32 {r}, {r}, {r}")
    fn.emit(f"setp.neu.f32 {odd}, {r}, {y}")
    fn.emit(f"and.pred {odd}, {odd}, {whole}")
    fn.emit(f"and.pred {odd}, {odd}, {neg}")
    fn.emit(f"neg.f32 {res}, {res}", odd)
    fn.emit(f"not.pred {whole}, {whole}")
    fn.emit(f"and.pred {neg}, {neg}, {whole}")
    fn.emit(f"mov.f32 {res}, 0f7FFFFFFF", neg)
    fn.emit(f"setp.eq.f32 {zero}, {y}, 0f00000000")
    fn.emit(f"mov.f32 {res}, 0f3F800000", zero)


def _exact_op(lw: Lowering, op: Operation, t: T.ElementType, ins: list[str], out: str) -> None:
    """remf, atan2 and fpowi: no PTX instruction computes them, so each is a sequence.

    f16/bf16 compute in f32 as the interpreter does (remf is exact in any format; atan2
    and fpowi round the f64 result to f32 first, then to the 16-bit type: the
    interpreter's f32 result rounded again)."""
    fn, name = lw.fn, op.name
    wide = t.name == "f64"
    if name == "fpowi":
        x = ins[0] if wide else to_f32(lw, ins[0], t)
        res = out if t.name in ("f32", "f64", "tf32") else fn.reg("f32")
        _powi(lw, x, ins[1], elem(op.operands[1].type), res, wide)
    else:
        xs = ins if wide else [to_f32(lw, r, t) for r in ins]
        res = out if t.name in ("f32", "f64", "tf32") else fn.reg("f32")
        if name == "remf":
            _fmod(lw, xs[0], xs[1], res, wide)
        else:
            _atan2(lw, xs[0], xs[1], res, wide)
    if res != out:
        from_f32(lw, res, t, out)


# (bits, mantissa bits, exponent mask, exponent bias + mantissa bits, smallest normal
#  exponent, chunk of exponent difference reduced per 64-bit remainder)
_FMOD = {False: (32, 23, 0xFF, 150, -126, 39), True: (64, 52, 0x7FF, 1075, -1022, 11)}


def _fmod(lw: Lowering, x: str, y: str, res: str, wide: bool) -> None:
    """C fmod, exact: x = mx * 2^(ex-B), y = my * 2^(ey-B) with integer significands;
    the remainder is (mx * 2^(ex-ey)) mod my, scaled by 2^(ey-B), with x's sign. The
    power of two is applied a chunk at a time (rem.u64 of r << s with r < my, so r << s
    stays below 2^64). NaN for y = 0, x infinite or either NaN; x itself if |x| < |y|."""
    fn = lw.fn
    bits, mant, emask, bias, emin, chunk = _FMOD[wide]
    b, ft, cls = f"b{bits}", f"f{bits}", f"b{bits}"
    u = f"u{bits}"
    sign = 1 << (bits - 1)
    inf = emask << mant
    ux, uy, ax, ay, sx, r = (fn.reg(cls) for _ in range(6))
    pn, ps, pt = fn.reg("pred"), fn.reg("pred"), fn.reg("pred")
    done = fn.label("fmod_done")
    fn.emit(f"mov.{b} {ux}, {x}")
    fn.emit(f"mov.{b} {uy}, {y}")
    fn.emit(f"and.{b} {ax}, {ux}, {sign - 1}")
    fn.emit(f"and.{b} {ay}, {uy}, {sign - 1}")
    fn.emit(f"and.{b} {sx}, {ux}, {sign}")
    fn.emit(f"setp.eq.{u} {pn}, {ay}, 0")
    fn.emit(f"setp.gt.{u} {pt}, {ay}, {inf}")
    fn.emit(f"or.pred {pn}, {pn}, {pt}")
    fn.emit(f"setp.ge.{u} {pt}, {ax}, {inf}")
    fn.emit(f"or.pred {pn}, {pn}, {pt}")
    fn.emit(f"setp.lt.{u} {ps}, {ax}, {ay}")
    fn.emit(f"mov.{b} {r}, {ux}")
    fn.emit(f"mov.{b} {r}, {(1 << (bits - 1)) - 1}", pn)
    fn.emit(f"or.pred {ps}, {ps}, {pn}")
    fn.emit(f"@{ps} bra {done}")
    exps, mants = [], []
    for a in (ax, ay):
        e, m, e32 = fn.reg(cls), fn.reg(cls), fn.reg("b32")
        fn.emit(f"shr.{u} {e}, {a}, {mant}")
        fn.emit(f"and.{b} {m}, {a}, {(1 << mant) - 1}")
        if wide:
            fn.emit(f"cvt.u32.u64 {e32}, {e}")
        else:
            fn.emit(f"mov.b32 {e32}, {e}")
        fn.emit(f"setp.eq.u32 {pt}, {e32}, 0")
        fn.emit(f"mov.u32 {e32}, 1", pt)
        fn.emit(f"or.{b} {m}, {m}, {1 << mant}", "!" + pt)
        m64 = m
        if not wide:
            m64 = fn.reg("b64")
            fn.emit(f"cvt.u64.u32 {m64}, {m}")
        exps.append(e32)
        mants.append(m64)
    (ex, ey), (mx, my) = exps, mants
    d, s, rem = fn.reg("b32"), fn.reg("b32"), fn.reg("b64")
    top, end = fn.label("fmod_loop"), fn.label("fmod_end")
    fn.emit(f"sub.s32 {d}, {ex}, {ey}")
    fn.emit(f"rem.u64 {rem}, {mx}, {my}")
    fn.place(top)
    fn.emit(f"setp.le.s32 {pt}, {d}, 0")
    fn.emit(f"@{pt} bra {end}")
    fn.emit(f"min.s32 {s}, {d}, {chunk}")
    fn.emit(f"shl.b64 {rem}, {rem}, {s}")
    fn.emit(f"rem.u64 {rem}, {rem}, {my}")
    fn.emit(f"sub.s32 {d}, {d}, {s}")
    fn.emit(f"bra {top}")
    fn.place(end)
    # result = rem * 2^(ey - bias): rem < 2^(mant+1) converts exactly, and the product is
    # representable (the remainder of two floats is), so the multiply is exact
    e, hi, lo, one = fn.reg("b32"), fn.reg(cls), fn.reg(cls), fn.reg(cls)
    rf, sc = fn.reg(ft), fn.reg(ft)
    fn.emit(f"sub.s32 {e}, {ey}, {bias}")
    t32 = fn.reg("b32")
    fn.emit(f"cvt.rn.{ft}.u64 {rf}, {rem}")
    # normal scale: (e + bias') << mant with bias' = -emin + 1; subnormal: 1 << (e - emin + mant)
    fn.emit(f"add.s32 {t32}, {e}, {1 - emin}")
    if wide:
        fn.emit(f"cvt.u64.u32 {hi}, {t32}")
        fn.emit(f"shl.b64 {hi}, {hi}, {mant}")
    else:
        fn.emit(f"shl.b32 {hi}, {t32}, {mant}")
    fn.emit(f"add.s32 {t32}, {e}, {mant - emin}")
    fn.emit(f"mov.{b} {one}, 1")
    fn.emit(f"shl.{b} {lo}, {one}, {t32}")
    fn.emit(f"setp.ge.s32 {pt}, {e}, {emin}")
    fn.emit(f"selp.{b} {hi}, {hi}, {lo}, {pt}")
    fn.emit(f"mov.{b} {sc}, {hi}")
    fn.emit(f"mul.rn.{ft} {rf}, {rf}, {sc}")
    fn.emit(f"mov.{b} {r}, {rf}")
    fn.emit(f"or.{b} {r}, {r}, {sx}")
    fn.place(done)
    fn.emit(f"mov.{b} {res}, {r}")


def _powi(lw: Lowering, x: str, n: str, nt: T.ElementType, res: str, wide: bool) -> None:
    """x ** n for an integer n, as the interpreter: n is first converted to x's compute
    type (f32, or f64 for f64), then x^|n| by binary powering in f64, 1/that for n < 0,
    rounded once to the compute type. n = 0 gives 1 (also for NaN x)."""
    fn = lw.fn
    ft = "f64" if wide else "f32"
    it = f"s{64 if nt.bitwidth == 64 else 32}"
    nf, m, bit = fn.reg(ft), fn.reg("b64"), fn.reg("b64")
    b, r = fn.reg("f64"), fn.reg("f64")
    pneg, pt = fn.reg("pred"), fn.reg("pred")
    fn.emit(f"cvt.rn.{ft}.{it} {nf}, {n}")
    fn.emit(f"setp.lt.{ft} {pneg}, {nf}, 0{'d' if wide else 'f'}{'0' * (16 if wide else 8)}")
    fn.emit(f"abs.{ft} {nf}, {nf}")
    fn.emit(f"cvt.rzi.u64.{ft} {m}, {nf}")
    if wide:
        fn.emit(f"mov.f64 {b}, {x}")
    else:
        fn.emit(f"cvt.f64.f32 {b}, {x}")
    fn.emit(f"mov.f64 {r}, 0d3FF0000000000000")
    top, end = fn.label("powi_loop"), fn.label("powi_end")
    fn.place(top)
    fn.emit(f"setp.eq.u64 {pt}, {m}, 0")
    fn.emit(f"@{pt} bra {end}")
    fn.emit(f"and.b64 {bit}, {m}, 1")
    fn.emit(f"setp.ne.u64 {pt}, {bit}, 0")
    fn.emit(f"mul.rn.f64 {r}, {r}, {b}", pt)
    fn.emit(f"mul.rn.f64 {b}, {b}, {b}")
    fn.emit(f"shr.u64 {m}, {m}, 1")
    fn.emit(f"bra {top}")
    fn.place(end)
    fn.emit(f"rcp.rn.f64 {r}, {r}", pneg)
    if wide:
        fn.emit(f"mov.f64 {res}, {r}")
    else:
        fn.emit(f"cvt.rn.f32.f64 {res}, {r}")


_PI = 3.141592653589793
_SQRT3 = 1.7320508075688772


def _atan2(lw: Lowering, a: str, b: str, res: str, wide: bool) -> None:
    """atan2(a, b) (a the numerator) in f64: t = min(|a|,|b|) / max(|a|,|b|) in [0, 1],
    reduced to |u| <= tan(pi/12) by atan(t) = pi/6 + atan((t*sqrt3 - 1) / (t + sqrt3)),
    atan(u) by its Taylor series to u^33 (error below 2^-60); then pi/2 - r when |a| > |b|,
    pi - r when b is negative (-0 included), and a's sign. 0/0 counts as 0 and inf/inf
    as 1 (atan2(+-0, +-0) and atan2(+-inf, +-inf)); NaN in, NaN out."""
    fn = lw.fn
    if not wide:
        a64, b64 = fn.reg("f64"), fn.reg("f64")
        fn.emit(f"cvt.f64.f32 {a64}, {a}")
        fn.emit(f"cvt.f64.f32 {b64}, {b}")
        a, b = a64, b64
    aa, ab, mn, mx, t, u, w, z, p, off = (fn.reg("f64") for _ in range(10))
    pt, big, steep, neg, nan = (fn.reg("pred") for _ in range(5))

    def d(v: float) -> str:
        return float_literal(v, "f64")

    fn.emit(f"abs.f64 {aa}, {a}")
    fn.emit(f"abs.f64 {ab}, {b}")
    fn.emit(f"min.f64 {mn}, {aa}, {ab}")
    fn.emit(f"max.f64 {mx}, {aa}, {ab}")
    fn.emit(f"div.rn.f64 {t}, {mn}, {mx}")
    fn.emit(f"setp.eq.f64 {pt}, {mx}, {d(0.0)}")
    fn.emit(f"mov.f64 {t}, {d(0.0)}", pt)
    fn.emit(f"setp.eq.f64 {pt}, {mn}, {d(float('inf'))}")
    fn.emit(f"mov.f64 {t}, {d(1.0)}", pt)
    fn.emit(f"setp.gt.f64 {big}, {t}, {d(0.2679491924311227)}")
    fn.emit(f"fma.rn.f64 {w}, {t}, {d(_SQRT3)}, {d(-1.0)}")
    fn.emit(f"add.rn.f64 {z}, {t}, {d(_SQRT3)}")
    fn.emit(f"div.rn.f64 {w}, {w}, {z}")
    fn.emit(f"selp.f64 {u}, {w}, {t}, {big}")
    fn.emit(f"selp.f64 {off}, {d(_PI / 6)}, {d(0.0)}, {big}")
    fn.emit(f"mul.rn.f64 {z}, {u}, {u}")
    terms = 17
    fn.emit(f"mov.f64 {p}, {d((-1) ** terms / (2 * terms + 1))}")
    for k in range(terms - 1, -1, -1):
        fn.emit(f"fma.rn.f64 {p}, {p}, {z}, {d((-1) ** k / (2 * k + 1))}")
    fn.emit(f"fma.rn.f64 {p}, {p}, {u}, {off}")
    fn.emit(f"setp.gt.f64 {steep}, {aa}, {ab}")
    fn.emit(f"sub.rn.f64 {p}, {d(_PI / 2)}, {p}", steep)
    sb = fn.reg("b64")
    fn.emit(f"mov.b64 {sb}, {b}")
    fn.emit(f"setp.lt.s64 {neg}, {sb}, 0")
    fn.emit(f"sub.rn.f64 {p}, {d(_PI)}, {p}", neg)
    sa, bits = fn.reg("b64"), fn.reg("b64")
    fn.emit(f"mov.b64 {sa}, {a}")
    fn.emit(f"and.b64 {sa}, {sa}, {1 << 63}")
    fn.emit(f"mov.b64 {bits}, {p}")
    fn.emit(f"or.b64 {bits}, {bits}, {sa}")
    fn.emit(f"mov.b64 {p}, {bits}")
    fn.emit(f"setp.nan.f64 {nan}, {a}, {b}")
    fn.emit(f"add.rn.f64 {p}, {a}, {b}", nan)
    if wide:
        fn.emit(f"mov.f64 {res}, {p}")
    else:
        fn.emit(f"cvt.rn.f32.f64 {res}, {p}")


def _hex(x: float) -> str:
    import struct

    return struct.pack(">f", x).hex().upper()


_INT_BINARY = {"addi": "add", "subi": "sub", "muli": "mul.lo", "divi": "div", "remi": "rem",
               "andi": "and", "ori": "or", "xori": "xor", "shli": "shl", "shri": "shr",
               "maxi": "max", "mini": "min", "mulhii": "mul.hi", "negi": "neg", "absi": "abs"}


def _int_binary(lw: Lowering, op: Operation, t: T.ElementType, ins: list[str], out: str) -> None:
    fn, name = lw.fn, op.name
    signed = op.attributes.get("signedness", Signedness.signed) == Signedness.signed
    base = _INT_BINARY[name]
    if t.name == "i1":
        if name not in ("andi", "ori", "xori"):
            raise Unsupported(f"'{name}' on i1")
        fn.emit(f"{base}.pred {out}, {ins[0]}, {ins[1]}")
        return
    bits = ityp(t)[1:]
    if name in ("andi", "ori", "xori", "shli"):
        fn.emit(f"{base}.b{bits} {out}, {ins[0]}, {ins[1] if name != 'shli' else _u32(lw, ins[1], t)}")
    elif name == "shri":
        x = ins[0] if signed else zext(lw, ins[0], t)
        fn.emit(f"shr.{ityp(t, signed)} {out}, {x}, {_u32(lw, ins[1], t)}")
    elif name in ("negi", "absi"):
        fn.emit(f"{base}.s{bits} {out}, {ins[0]}")
    elif name in ("divi", "remi", "maxi", "mini", "mulhii"):
        xs = ins if signed else [zext(lw, r, t) for r in ins]
        if name == "mulhii" and t.bitwidth < 32:
            raise Unsupported("mulhii on narrow integers")
        fn.emit(f"{base}.{ityp(t, signed)} {out}, {xs[0]}, {xs[1]}")
        rounding = op.attributes.get("rounding")
        if name == "divi" and rounding not in (None, RoundingMode.zero):
            _round_quotient(lw, out, xs, t, rounding, signed)
    else:
        fn.emit(f"{base}.s{bits} {out}, {ins[0]}, {ins[1]}")
    normalize(lw, out, t)


def _round_quotient(lw: Lowering, q: str, xs: list[str], t: T.ElementType, rounding,
                    signed: bool) -> None:
    """Adjust a truncated quotient to floor (negative_inf) or ceiling (positive_inf)."""
    fn = lw.fn
    ty = ityp(t, signed)
    cls = "b64" if t.bitwidth == 64 else "b32"
    r, p, s = fn.reg(cls), fn.reg("pred"), fn.reg("pred")
    fn.emit(f"rem.{ty} {r}, {xs[0]}, {xs[1]}")
    fn.emit(f"setp.ne.{ty} {p}, {r}, 0")
    if signed:
        x = fn.reg(cls)
        fn.emit(f"xor.b{t.bitwidth if t.bitwidth == 64 else 32} {x}, {r}, {xs[1]}")
        cmp = "lt" if rounding == RoundingMode.negative_inf else "ge"
        fn.emit(f"setp.{cmp}.{ty} {s}, {x}, 0")
        fn.emit(f"and.pred {p}, {p}, {s}")
    elif rounding == RoundingMode.negative_inf:
        return
    fn.emit(f"add.{ty} {q}, {q}, {-1 if rounding == RoundingMode.negative_inf else 1}", pred=p)


def _u32(lw: Lowering, reg: str, t: T.ElementType) -> str:
    """Shift amounts are u32 in PTX."""
    if t.bitwidth != 64:
        return reg
    r = lw.fn.reg("b32")
    lw.fn.emit(f"cvt.u32.u64 {r}, {reg}")
    return r


ELEMENTWISE = sorted(set(_FLOAT_BINARY) | _FLOAT_UNARY | set(_INT_BINARY) |
                     {"fma", "cmpi", "cmpf", "select", "exti", "trunci", "ftof", "ftoi", "itof",
                      "bitcast", "offset", "int_to_ptr", "ptr_to_int", "ptr_to_ptr"})
