"""select-instructions for elementwise ops: one instruction sequence per register.

``emit_scalar`` selects the instructions of one elementwise op on registers. f16/bf16
arithmetic reaches here only as the ops PTX has on 16-bit registers (add.rn.f16,
min.bf16, ...): widen-narrow-floats has moved the rest to f32. i8/i16 live
sign-extended in 32-bit registers and are re-normalised after arithmetic. Transcendentals,
remf, atan2 and fpowi are sequences of select_math. A target's ``elementwise`` rule
(target.SELECT_HOOKS) is asked first; none of nanotile's targets has one.
"""

from __future__ import annotations

from typing import Any

from ...ir import types as T
from ...ir.core import Operation
from ...ir.enums import ComparisonOrdering, ComparisonPredicate, RoundingMode, Signedness
from .builder import reg_class
from .select_instructions import Unsupported
from .select_math import approx, exact_op
from .widen_narrow_floats import NARROW, is_native

Lowering = Any  # the selection state (select_instructions.Selection): its ``fn`` builds

_RND = {RoundingMode.nearest_even: "rn", RoundingMode.zero: "rz",
        RoundingMode.negative_inf: "rm", RoundingMode.positive_inf: "rp"}
_CMP = {ComparisonPredicate.equal: "eq", ComparisonPredicate.not_equal: "ne",
        ComparisonPredicate.less_than: "lt", ComparisonPredicate.less_than_or_equal: "le",
        ComparisonPredicate.greater_than: "gt",
        ComparisonPredicate.greater_than_or_equal: "ge"}


def elem(t: T.Type) -> T.ElementType:
    e = t.element if isinstance(t, T.TileType) else t
    return e  # type: ignore[return-value]


def ityp(t: T.Type, signed: bool = True) -> str:
    """PTX integer type of a register holding ``t`` (i8/i16 widened to 32 bits)."""
    e = elem(t)
    bits = 64 if isinstance(e, T.PointerType) or e.bitwidth == 64 else 32
    return f"{'s' if signed else 'u'}{bits}"


def float_type(op: Operation, t: T.ElementType) -> str:
    """The PTX type float arithmetic on ``t`` runs in: f32 (for tf32 too) or f64, and f16
    or bf16 for widen-narrow-floats' native ops; the other 16-bit float arithmetic has
    been widened to f32 by then."""
    if t.name in NARROW and is_native(op):
        return t.name
    if t.name in NARROW:
        raise Unsupported(f"'{op.name}' on {t.name}: widen-narrow-floats computes 16-bit "
                          "float arithmetic in f32 before instruction selection")
    if t.name not in ("f32", "tf32", "f64"):
        raise Unsupported(f"arithmetic on {t.name} is not supported by the PTX back end yet")
    return "f64" if t.name == "f64" else "f32"


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


def emit_scalar(lw: Lowering, op: Operation, ins: list[str], out: str) -> None:
    """Lower one elementwise op on registers ``ins`` into register ``out``."""
    rule = lw.target.select_rule("elementwise")
    if rule is not None and rule(lw, op, ins, out):
        return  # the target's own rule (target.SELECT_HOOKS)
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
        fn.emit(f"setp.{pred}.{float_type(op, t)} {out}, {ins[0]}, {ins[1]}")
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
        from .select_convert import emit_convert

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
    ft = float_type(op, t)
    if name in ("remf", "atan2", "fpowi"):
        exact_op(lw, op, t, ins, out)
        return
    wide = t.name == "f64"
    xs, res = ins, out
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
        approx(lw, name, xs, res)


_INT_BINARY = {"addi": "add", "subi": "sub", "muli": "mul.lo", "divi": "div", "remi": "rem",
               "andi": "and", "ori": "or", "xori": "xor", "shli": "shl", "shri": "shr",
               "maxi": "max", "mini": "min", "mulhii": "mul.hi", "negi": "neg", "absi": "abs"}


def _int_binary(lw: Lowering, op: Operation, t: T.ElementType, ins: list[str], out: str) -> None:
    fn, name = lw.fn, op.name
    signed = op.attributes.get("signedness", Signedness.signed) == Signedness.signed
    base = _INT_BINARY[name]
    if name == "mulhii":
        _mulhi(lw, t, ins, out)
        return
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
    elif name in ("divi", "remi", "maxi", "mini"):
        xs = ins if signed else [zext(lw, r, t) for r in ins]
        fn.emit(f"{base}.{ityp(t, signed)} {out}, {xs[0]}, {xs[1]}")
        rounding = op.attributes.get("rounding")
        if name == "divi" and rounding not in (None, RoundingMode.zero):
            _round_quotient(lw, out, xs, t, rounding, signed)
    else:
        fn.emit(f"{base}.s{bits} {out}, {ins[0]}, {ins[1]}")
    normalize(lw, out, t)


def _mulhi(lw: Lowering, t: T.ElementType, ins: list[str], out: str) -> None:
    """mulhii: the high half of the *unsigned* double-width product (Ops.td defines it
    for unsigned integers only; it has no signedness attribute). i8/i16, held
    sign-extended in 32-bit registers, are zero-extended and multiplied in 32 bits,
    where their product fits; i1's product fits in its low half, so its high half is 0."""
    fn = lw.fn
    if t.name == "i1":
        fn.emit(f"mov.pred {out}, 0")
        return
    if t.bitwidth >= 32:
        fn.emit(f"mul.hi.{ityp(t, False)} {out}, {ins[0]}, {ins[1]}")
        return
    x, y = (zext(lw, r, t) for r in ins)
    fn.emit(f"mul.lo.u32 {out}, {x}, {y}")
    fn.emit(f"shr.u32 {out}, {out}, {t.bitwidth}")
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
    """A shift amount as PTX's u32 (which shl/shr clamp to the register's width). An i64
    amount is clamped to 64 first: its low 32 bits alone would make 2^32 + 1 a shift by
    1, where the amount, read as unsigned, is past the width (the result 0 or the sign).
    Narrower amounts need nothing: one held sign-extended that is negative is >= 2^31 as
    u32, past the width as its unsigned value is."""
    if t.bitwidth != 64:
        return reg
    clamped, r = lw.fn.reg("b64"), lw.fn.reg("b32")
    lw.fn.emit(f"min.u64 {clamped}, {reg}, 64")
    lw.fn.emit(f"cvt.u32.u64 {r}, {clamped}")
    return r


ELEMENTWISE = sorted(set(_FLOAT_BINARY) | _FLOAT_UNARY | set(_INT_BINARY) |
                     {"fma", "cmpi", "cmpf", "select", "exti", "trunci", "ftof", "ftoi", "itof",
                      "bitcast", "offset", "int_to_ptr", "ptr_to_int", "ptr_to_ptr"})
