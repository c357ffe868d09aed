"""select-instructions' math sequences: the functions PTX has no exact instruction for.

``approx`` builds exp2 from ex2.approx; exp from ex2.approx with a correction for the
rounding of x*log2(e) (``_exp``); log and log2 (``_log``: lg2.approx's error is
absolute, large against log x near x = 1), sinh and cosh (``_hyperbolic``) and pow
(``_pow``) in f64; sin, cos and tan are ``trig``'s, accurate over the whole f32 range
(sin.approx is not: its error grows with the argument, 54 of 128 tan(i16) wrong on an
H200). ``exact_op`` computes remf, atan2 and fpowi, which no instruction computes:
remf as an exact integer fmod, atan2 and fpowi as f64 sequences (f32 ones through f64,
as the interpreter does).
"""

from __future__ import annotations

import math
import struct
from typing import Any

from ...ir import types as T
from ...ir.core import Operation
from .builder import float_literal
from .select_instructions import Unsupported

Lowering = Any  # the selection state (select_instructions.Selection): its ``fn`` builds

_LOG2E = 1.4426950408889634
_LN2 = 0.6931471805599453


def approx(lw: Lowering, name: str, xs: list[str], res: str) -> None:
    fn = lw.fn
    if name == "rsqrt":
        fn.emit(f"rsqrt.approx.f32 {res}, {xs[0]}")
    elif name == "exp2":
        fn.emit(f"ex2.approx.f32 {res}, {xs[0]}")
    elif name == "exp":
        _exp(lw, xs[0], res)
    elif name in ("log", "log2"):
        _log(lw, xs[0], res, name == "log")
    elif name == "tanh":
        fn.emit(f"tanh.approx.f32 {res}, {xs[0]}")
    elif name in ("sin", "cos", "tan"):
        trig(lw, name, xs[0], res)
    elif name in ("sinh", "cosh"):
        _hyperbolic(lw, name, xs[0], res)
    elif name in ("powf", "fpowf"):
        _pow(lw, xs[0], xs[1], res)
    else:
        raise Unsupported(f"'{name}' is not lowered to PTX yet")


# log2(e) as an f32 and the f32 nearest the rest: x log2(e) = x L + x L_REST to about
# 2^-48 of the product
_LOG2E_PARTS = (_LOG2E, _LOG2E - float(struct.unpack(">f", struct.pack(">f", _LOG2E))[0]))


def _exp(lw: Lowering, x: str, res: str) -> None:
    """e^x of an f32, within about 2 ulp over the whole range: x log2(e) = h + l with
    h = x L rounded and l its rounding error (an fma) plus x L_REST, so e^x = 2^h 2^l =
    2^h (1 + l ln 2) (|l| <= 2^-17). (ex2.approx of x L alone is off by the rounding of
    x L, up to 63 ulp for |x| near 88.) Where 2^h overflows, e^x does too (h = 128 and
    l < 0 still leave 2^h (1 + l ln 2) above the largest f32); infinite and NaN x give
    ex2.approx's own answer: +inf -> inf, -inf -> 0."""
    fn = lw.fn
    high, low, power, correction = (fn.reg("f32") for _ in range(4))
    special = fn.reg("pred")
    log2e, rest = (_f32(part) for part in _LOG2E_PARTS)
    fn.emit(f"mul.rn.f32 {high}, {x}, {log2e}")
    fn.emit(f"neg.f32 {low}, {high}")
    fn.emit(f"fma.rn.f32 {low}, {x}, {log2e}, {low}")  # the product's rounding error
    fn.emit(f"fma.rn.f32 {low}, {x}, {rest}, {low}")
    fn.emit(f"ex2.approx.f32 {power}, {high}")
    fn.emit(f"mul.rn.f32 {correction}, {low}, {_f32(_LN2)}")
    fn.emit(f"fma.rn.f32 {res}, {power}, {correction}, {power}")
    fn.emit(f"testp.infinite.f32 {special}, {power}")
    fn.emit(f"mov.f32 {res}, {power}", special)
    fn.emit(f"testp.notanumber.f32 {special}, {low}")
    fn.emit(f"mov.f32 {res}, {power}", special)


def _log(lw: Lowering, x: str, res: str, natural: bool) -> None:
    """log (``natural``) or log2 of an f32, within an ulp: _log2_f64 (times ln 2) rounded
    once. (lg2.approx's error is absolute, so near x = 1, where the result is small,
    its relative error is large.) 0 gives -inf, a negative x or NaN gives NaN, +inf
    gives +inf."""
    fn = lw.fn
    at = fn.reg("pred")
    u = _log2_f64(lw, x)
    if natural:
        fn.emit(f"mul.rn.f64 {u}, {u}, {_f64(_LN2)}")
    fn.emit(f"cvt.rn.f32.f64 {res}, {u}")
    fn.emit(f"setp.eq.f32 {at}, {x}, 0f7F800000")
    fn.emit(f"mov.f32 {res}, 0f7F800000", at)
    fn.emit(f"setp.eq.f32 {at}, {x}, 0f00000000")  # -0 too
    fn.emit(f"mov.f32 {res}, 0fFF800000", at)
    fn.emit(f"setp.ltu.f32 {at}, {x}, 0f00000000")  # negative or NaN
    fn.emit(f"mov.f32 {res}, 0f7FFFFFFF", at)


# 1/(2k+1)! for k = 1..3: sinh a = a (1 + a^2/3! + a^4/5! + a^6/7!) for a < 1/16, where
# the first term left out is below 1e-14 of the sum
_SINH_SERIES = tuple(1.0 / math.factorial(2 * k + 1) for k in range(1, 4))


def _hyperbolic(lw: Lowering, name: str, x: str, res: str) -> None:
    """sinh or cosh of an f32, within an ulp, in f64: with a = |x| and E = e^a
    (_exp2_f64 of a log2(e), clamped at 2^130, past f32's range), cosh = (E + 1/E) / 2
    and sinh = (E - 1/E) / 2 with x's sign, but for a < 1/16, where that difference
    cancels, sinh's Taylor series; one rounding to f32. NaN gives NaN. (e^x and e^-x by
    ex2.approx in f32, as before, lost all of sinh's digits for small x: sinh(1e-7)
    came out 8.9e-8.)"""
    fn = lw.fn
    a, z, inverse, small, square = (fn.reg("f64") for _ in range(5))
    tiny, at = fn.reg("pred"), fn.reg("pred")
    fn.emit(f"cvt.f64.f32 {a}, {x}")
    fn.emit(f"abs.f64 {a}, {a}")
    fn.emit(f"mul.rn.f64 {z}, {a}, {_f64(_LOG2E)}")
    fn.emit(f"min.f64 {z}, {z}, 0d4060400000000000")  # 130
    power = _exp2_f64(lw, z)
    fn.emit(f"rcp.rn.f64 {inverse}, {power}")
    if name == "cosh":
        fn.emit(f"add.rn.f64 {power}, {power}, {inverse}")
    else:
        fn.emit(f"sub.rn.f64 {power}, {power}, {inverse}")
        fn.emit(f"mul.rn.f64 {square}, {a}, {a}")
        _series_f64(lw, small, square, _SINH_SERIES)
        fn.emit(f"fma.rn.f64 {small}, {small}, {square}, 0d3FF0000000000000")
        fn.emit(f"mul.rn.f64 {small}, {small}, {a}")
        fn.emit(f"add.rn.f64 {small}, {small}, {small}")  # doubled: halved below
        fn.emit(f"setp.lt.f64 {tiny}, {a}, 0d3FB0000000000000")  # 1/16
        fn.emit(f"mov.f64 {power}, {small}", tiny)
    fn.emit(f"mul.rn.f64 {power}, {power}, 0d3FE0000000000000")
    fn.emit(f"cvt.rn.f32.f64 {res}, {power}")
    if name == "sinh":
        fn.emit(f"copysign.f32 {res}, {x}, {res}")
    fn.emit(f"setp.nan.f32 {at}, {x}, {x}")
    fn.emit(f"mov.f32 {res}, 0f7FFFFFFF", at)


# 2/pi in binary, 32 bits a word, most significant first, after a word of zeros (the
# bits of 2/pi's integer part and above): bits 32 to 255 are 2/pi's first 224 bits
_TWO_OVER_PI = (0x00000000, 0xA2F9836E, 0x4E441529, 0xFC2757D1, 0xF534DDC0, 0xDB629599,
                0x3C439041, 0xFE5163AB)
# pi/2 as three f32s (C1 ends in a zero bit, so that x - j*C1 is exact for the j below
# FAST_LIMIT; C2 and C3 are the rest, rounded to nearest: C1 + C2 + C3 is pi/2 to 1e-23)
_HALF_PI_PARTS = ("3FC90FDA", "33A22169", "A6F72CED")
_FAST_LIMIT = 105615.0  # beyond it, the reduction is _reduce_exactly's
# Taylor coefficients of sin (-1/3!, 1/5!...) and cos (-1/2!, 1/4!...): on |r| <= pi/4
# the first left out is below 2e-9 of the result
_SIN = tuple((-1) ** k / math.factorial(2 * k + 1) for k in range(1, 5))
_COS = tuple((-1) ** k / math.factorial(2 * k) for k in range(1, 6))
_QUARTER_TURN_SCALE = "3BF921FB54442D18"  # pi/2 / 2^64 as f64


def _f32(value: float) -> str:
    return float_literal(value, "f32")


def _f64(value: float) -> str:
    return float_literal(value, "f64")


def trig(lw: Lowering, name: str, x: str, res: str) -> None:
    """sin, cos or tan of an f32, within about an ulp of the true value for every input:
    x = q*pi/2 + r with |r| <= pi/4 (about), then sin r and cos r as polynomials, the
    result one of +-sin r, +-cos r or their quotient as q says (mod 4). sin(+-0) = +-0,
    inf and NaN give NaN."""
    fn = lw.fn
    r, q = _reduce(lw, x)
    r2, u, s, c = (fn.reg("f32") for _ in range(4))
    fn.emit(f"mul.rn.f32 {r2}, {r}, {r}")
    fn.emit(f"fma.rn.f32 {u}, {r2}, {_f32(_SIN[3])}, {_f32(_SIN[2])}")
    for coefficient in reversed(_SIN[:2]):
        fn.emit(f"fma.rn.f32 {u}, {u}, {r2}, {_f32(coefficient)}")
    fn.emit(f"mul.rn.f32 {u}, {u}, {r2}")
    fn.emit(f"fma.rn.f32 {s}, {u}, {r}, {r}")
    fn.emit(f"fma.rn.f32 {c}, {r2}, {_f32(_COS[4])}, {_f32(_COS[3])}")
    for coefficient in reversed(_COS[:3]):
        fn.emit(f"fma.rn.f32 {c}, {c}, {r2}, {_f32(coefficient)}")
    fn.emit(f"fma.rn.f32 {c}, {c}, {r2}, 0f3F800000")
    if name == "cos":  # cos x = sin(x + pi/2)
        fn.emit(f"add.s32 {q}, {q}, 1")
    odd, half, t = fn.reg("b32"), fn.reg("pred"), fn.reg("f32")
    fn.emit(f"and.b32 {odd}, {q}, 1")
    fn.emit(f"setp.ne.u32 {half}, {odd}, 0")
    if name == "tan":  # tan(r + pi/2) = -cos r / sin r
        fn.emit(f"neg.f32 {t}, {c}")
        fn.emit(f"selp.f32 {u}, {t}, {s}, {half}")
        fn.emit(f"selp.f32 {t}, {s}, {c}, {half}")
        fn.emit(f"div.rn.f32 {res}, {u}, {t}")
    else:  # sin(r + k pi/2) = sin r, cos r, -sin r, -cos r
        fn.emit(f"selp.f32 {res}, {c}, {s}, {half}")
        fn.emit(f"and.b32 {odd}, {q}, 2")
        fn.emit(f"setp.ne.u32 {half}, {odd}, 0")
        fn.emit(f"neg.f32 {res}, {res}", half)
    if name != "cos":  # the reduction's r is +0 for x = -0
        fn.emit(f"setp.eq.f32 {half}, {x}, 0f00000000")
        fn.emit(f"mov.f32 {res}, {x}", half)
    fn.emit(f"sub.f32 {t}, {x}, {x}")  # NaN exactly for inf and NaN
    fn.emit(f"setp.nan.f32 {half}, {t}, {t}")
    fn.emit(f"mov.f32 {res}, {t}", half)


def _reduce(lw: Lowering, x: str) -> tuple[str, str]:
    """(r, q) with x = q*pi/2 + r, r an f32 and q an s32 (its low two bits matter).
    Up to FAST_LIMIT, q is x*2/pi rounded and r = x - q*C1 - q*C2 - q*C3: the first
    product and difference are exact there, the others are rounded relative to r. Beyond
    it, _reduce_exactly."""
    fn = lw.fn
    a, t, j, r = (fn.reg("f32") for _ in range(4))
    q, big = fn.reg("b32"), fn.reg("pred")
    done = fn.label("trig_reduced")
    fn.emit(f"mul.rn.f32 {t}, {x}, 0f3F22F983")
    fn.emit(f"cvt.rni.f32.f32 {j}, {t}")
    fn.emit(f"fma.rn.f32 {r}, {j}, 0f{_negated(_HALF_PI_PARTS[0])}, {x}")
    fn.emit(f"fma.rn.f32 {r}, {j}, 0f{_negated(_HALF_PI_PARTS[1])}, {r}")
    fn.emit(f"fma.rn.f32 {r}, {j}, 0f{_negated(_HALF_PI_PARTS[2])}, {r}")
    fn.emit(f"cvt.rzi.s32.f32 {q}, {j}")
    fn.emit(f"abs.f32 {a}, {x}")
    fn.emit(f"setp.gt.f32 {big}, {a}, {_f32(_FAST_LIMIT)}")
    fn.emit(f"@!{big} bra {done}")
    _reduce_exactly(lw, x, r, q)
    fn.place(done)
    return r, q


def _negated(bits: str) -> str:
    return f"{int(bits, 16) ^ 0x80000000:08X}"


def _reduce_exactly(lw: Lowering, x: str, r: str, q: str) -> None:
    """Payne-Hanek: |x| = m * 2^E with m the 24-bit significand, so |x| * 2/pi mod 4 needs
    only the 96 bits of 2/pi from weight 2^(1-E) on (the bits above make multiples of 4,
    those below change the result by less than 2^-70): W, read from _TWO_OVER_PI at bit
    e - 120 for the biased exponent e. m * W mod 2^96 is the quarter turns as a fixed
    point number with 94 fraction bits: q its top two bits, r its fraction (64 bits of
    it, centred on zero) times pi/2, through f64. Negative x: both negated."""
    fn = lw.fn
    ix, e, m, p, k, b, nb = (fn.reg("b32") for _ in range(7))
    fn.emit(f"mov.b32 {ix}, {x}")
    fn.emit(f"bfe.u32 {e}, {ix}, 23, 8")
    fn.emit(f"and.b32 {m}, {ix}, 8388607")
    fn.emit(f"or.b32 {m}, {m}, 8388608")
    fn.emit(f"sub.s32 {p}, {e}, 120")
    fn.emit(f"shr.u32 {k}, {p}, 5")
    fn.emit(f"and.b32 {b}, {p}, 31")
    fn.emit(f"sub.s32 {nb}, 32, {b}")
    # the words k..k+3 of the table (k is 0 to 4 for finite x)
    words = [fn.reg("b32") for _ in range(4)]
    for i, w in enumerate(words):
        fn.emit(f"mov.b32 {w}, 0x{_TWO_OVER_PI[i]:08X}")
    at = fn.reg("pred")
    for start in range(1, 5):
        fn.emit(f"setp.eq.u32 {at}, {k}, {start}")
        for i, w in enumerate(words):
            fn.emit(f"mov.b32 {w}, 0x{_TWO_OVER_PI[start + i]:08X}", at)
    # W = the 96 bits from bit b of those 128 (shifts of 32 give 0 in PTX)
    window = []
    for high, low in zip(words, words[1:]):
        part, rest = fn.reg("b32"), fn.reg("b32")
        fn.emit(f"shl.b32 {part}, {high}, {b}")
        fn.emit(f"shr.u32 {rest}, {low}, {nb}")
        fn.emit(f"or.b32 {part}, {part}, {rest}")
        window.append(part)
    w2, w1, w0 = window
    p0, p1, lo, hi64, f = (fn.reg("b64") for _ in range(5))
    hi, p2 = fn.reg("b32"), fn.reg("b32")
    carry = fn.reg("pred")
    fn.emit(f"mul.wide.u32 {p0}, {m}, {w0}")
    fn.emit(f"mul.wide.u32 {p1}, {m}, {w1}")
    fn.emit(f"mul.lo.u32 {p2}, {m}, {w2}")
    fn.emit(f"shl.b64 {lo}, {p1}, 32")
    fn.emit(f"add.u64 {lo}, {lo}, {p0}")
    fn.emit(f"setp.lt.u64 {carry}, {lo}, {p0}")
    fn.emit(f"shr.u64 {hi64}, {p1}, 32")
    fn.emit(f"cvt.u32.u64 {hi}, {hi64}")
    fn.emit(f"add.u32 {hi}, {hi}, {p2}")
    fn.emit(f"add.u32 {hi}, {hi}, 1", carry)
    # the fraction's top 64 bits, read as signed: a fraction of a half or more is the
    # next quarter turn minus the rest
    fn.emit(f"cvt.u64.u32 {hi64}, {hi}")
    fn.emit(f"shl.b64 {hi64}, {hi64}, 34")
    fn.emit(f"shr.u64 {f}, {lo}, 30")
    fn.emit(f"or.b64 {f}, {f}, {hi64}")
    fn.emit(f"shr.u32 {q}, {hi}, 30")
    fn.emit(f"setp.lt.s64 {carry}, {f}, 0")
    fn.emit(f"add.u32 {q}, {q}, 1", carry)
    wide = fn.reg("f64")
    fn.emit(f"cvt.rn.f64.s64 {wide}, {f}")
    fn.emit(f"mul.rn.f64 {wide}, {wide}, 0d{_QUARTER_TURN_SCALE}")
    fn.emit(f"cvt.rn.f32.f64 {r}, {wide}")
    fn.emit(f"setp.lt.f32 {carry}, {x}, 0f00000000")
    fn.emit(f"neg.f32 {r}, {r}", carry)
    fn.emit(f"neg.s32 {q}, {q}", carry)


def _pow(lw: Lowering, x: str, y: str, res: str) -> None:
    """x**y as C's powf: 2**(y * log2|x|) in f64 (_power_of_abs), rounded once to f32;
    negated for an odd integer y and x of sign bit set, NaN for a finite negative x and a
    non-integer y; |x| = 0 or inf give 0 or inf as y's sign says; NaN for a NaN operand,
    but x = 1, (-1)**(+-inf) and y = 0 give 1."""
    fn = lw.fn
    a, r = fn.reg("f32"), fn.reg("f32")
    neg, whole, odd, at = fn.reg("pred"), fn.reg("pred"), fn.reg("pred"), fn.reg("pred")
    below = fn.reg("pred")
    fn.emit(f"abs.f32 {a}, {x}")
    _power_of_abs(lw, a, y, res)
    fn.emit(f"setp.lt.f32 {below}, {y}, 0f00000000")
    fn.emit(f"setp.eq.f32 {at}, {a}, 0f00000000")  # 0**y: 0, or inf for y < 0
    fn.emit(f"selp.f32 {r}, 0f7F800000, 0f00000000, {below}")
    fn.emit(f"mov.f32 {res}, {r}", at)
    fn.emit(f"setp.eq.f32 {at}, {a}, 0f7F800000")  # inf**y: inf, or 0 for y < 0
    fn.emit(f"selp.f32 {r}, 0f00000000, 0f7F800000, {below}")
    fn.emit(f"mov.f32 {res}, {r}", at)
    fn.emit(f"setp.nan.f32 {at}, {x}, {y}")  # NaN in, NaN out (but for the 1s below)
    fn.emit(f"mov.f32 {res}, 0f7FFFFFFF", at)
    fn.emit(f"abs.f32 {r}, {y}")  # (-1)**(+-inf) = 1
    fn.emit(f"setp.eq.f32 {at}, {r}, 0f7F800000")
    fn.emit(f"setp.eq.and.f32 {at}, {a}, 0f3F800000, {at}")
    fn.emit(f"mov.f32 {res}, 0f3F800000", at)
    fn.emit(f"setp.eq.f32 {at}, {x}, 0f3F800000")  # 1**y = 1, y NaN too
    fn.emit(f"mov.f32 {res}, 0f3F800000", at)
    # an odd integer y keeps x's sign (of -0 and -inf too)
    sign = fn.reg("b32")
    fn.emit(f"mov.b32 {sign}, {x}")
    fn.emit(f"setp.lt.s32 {neg}, {sign}, 0")
    fn.emit(f"cvt.rzi.f32.f32 {r}, {y}")
    fn.emit(f"setp.eq.f32 {whole}, {r}, {y}")
    fn.emit(f"mul.f32 {r}, {y}, 0f3F000000")
    fn.emit(f"cvt.rzi.f32.f32 {r}, {r}")
    fn.emit(f"add.f32 {r}, {r}, {r}")
    fn.emit(f"setp.neu.f32 {odd}, {r}, {y}")
    fn.emit(f"and.pred {odd}, {odd}, {whole}")
    fn.emit(f"and.pred {odd}, {odd}, {neg}")
    fn.emit(f"neg.f32 {res}, {res}", odd)
    # a finite negative x and a non-integer y: NaN
    fn.emit(f"setp.lt.f32 {neg}, {x}, 0f00000000")
    fn.emit(f"setp.ne.f32 {at}, {a}, 0f7F800000")
    fn.emit(f"and.pred {neg}, {neg}, {at}")
    fn.emit(f"not.pred {whole}, {whole}")
    fn.emit(f"and.pred {neg}, {neg}, {whole}")
    fn.emit(f"mov.f32 {res}, 0f7FFFFFFF", neg)
    fn.emit(f"setp.eq.f32 {at}, {y}, 0f00000000")
    fn.emit(f"mov.f32 {res}, 0f3F800000", at)


# 1/(2k+1) for k = 1..7: ln m = 2s (1 + s^2/3 + s^4/5 + ...) with s = (m-1)/(m+1), |s| <=
# 0.172 for m in [sqrt(2)/2, sqrt(2)]; the first term left out is below 1e-12 of the sum
_LOG_SERIES = tuple(1.0 / (2 * k + 1) for k in range(1, 8))
# 1/k! for k = 2..10: 2^f = e^t with t = f ln 2, |t| <= 0.35; the first left out < 1e-11
_EXP_SERIES = tuple(1.0 / math.factorial(k) for k in range(2, 11))


def _power_of_abs(lw: Lowering, a: str, y: str, res: str) -> None:
    """|x|**y for the f32 a = |x| > 0 finite, in f64: z = y log2 a (_log2_f64) clamped
    to [-160, 130] (beyond f32's range either way), 2^z (_exp2_f64), one rounding to f32
    at the end (subnormal results included, as the interpreter's powf and unlike
    ex2.approx, which flushes them)."""
    fn = lw.fn
    z = fn.reg("f64")
    log2a = _log2_f64(lw, a)
    fn.emit(f"cvt.f64.f32 {z}, {y}")
    fn.emit(f"mul.rn.f64 {z}, {z}, {log2a}")
    fn.emit(f"max.f64 {z}, {z}, 0dC064000000000000")  # -160
    fn.emit(f"min.f64 {z}, {z}, 0d4060400000000000")  # 130
    fn.emit(f"cvt.rn.f32.f64 {res}, {_exp2_f64(lw, z)}")


def _log2_f64(lw: Lowering, a: str) -> str:
    """log2 of the f32 ``a`` > 0 finite, as an f64 register: a = m 2^e with m in
    [sqrt(2)/2, sqrt(2)] (a subnormal a is a normal f64), log2 a = e + log2 m, log m by
    the atanh series (relative error below 1e-12)."""
    fn = lw.fn
    d, m, s, s2, u, z = (fn.reg("f64") for _ in range(6))
    bits, e64 = fn.reg("b64"), fn.reg("b64")
    e, big = fn.reg("b32"), fn.reg("pred")
    fn.emit(f"cvt.f64.f32 {d}, {a}")
    fn.emit(f"mov.b64 {bits}, {d}")
    fn.emit(f"shr.u64 {e64}, {bits}, 52")
    fn.emit(f"cvt.u32.u64 {e}, {e64}")
    fn.emit(f"and.b64 {bits}, {bits}, 0x000FFFFFFFFFFFFF")
    fn.emit(f"or.b64 {bits}, {bits}, 0x3FF0000000000000")
    fn.emit(f"mov.b64 {m}, {bits}")
    fn.emit(f"setp.gt.f64 {big}, {m}, {_f64(math.sqrt(2))}")
    fn.emit(f"mul.rn.f64 {m}, {m}, 0d3FE0000000000000", big)
    fn.emit(f"add.s32 {e}, {e}, 1", big)
    fn.emit(f"sub.s32 {e}, {e}, 1023")
    fn.emit(f"sub.rn.f64 {s}, {m}, 0d3FF0000000000000")
    fn.emit(f"add.rn.f64 {u}, {m}, 0d3FF0000000000000")
    fn.emit(f"div.rn.f64 {s}, {s}, {u}")
    fn.emit(f"mul.rn.f64 {s2}, {s}, {s}")
    _series_f64(lw, u, s2, _LOG_SERIES)
    fn.emit(f"fma.rn.f64 {u}, {u}, {s2}, 0d3FF0000000000000")
    fn.emit(f"mul.rn.f64 {u}, {u}, {s}")
    fn.emit(f"mul.rn.f64 {u}, {u}, {_f64(2 / math.log(2))}")  # log2 m
    fn.emit(f"cvt.rn.f64.s32 {z}, {e}")
    fn.emit(f"add.rn.f64 {u}, {u}, {z}")  # log2 a
    return u


def _series_f64(lw: Lowering, total: str, x: str, coefficients) -> None:
    """``total`` = c0 + c1 x + c2 x^2 + ... for the f64 ``coefficients``, by Horner's
    rule (an fma a coefficient, the highest first)."""
    fn = lw.fn
    fn.emit(f"mov.f64 {total}, {_f64(coefficients[-1])}")
    for coefficient in reversed(coefficients[:-1]):
        fn.emit(f"fma.rn.f64 {total}, {total}, {x}, {_f64(coefficient)}")


def _exp2_f64(lw: Lowering, z: str) -> str:
    """2^z for the f64 ``z`` in [-160, 130], as an f64 register: 2^n e^((z-n) ln 2) with
    n = z rounded, e^t by its Taylor series (|t| <= 0.35), 2^n built in the exponent
    field."""
    fn = lw.fn
    f, n, u, d = (fn.reg("f64") for _ in range(4))
    bits, e = fn.reg("b64"), fn.reg("b32")
    fn.emit(f"cvt.rni.f64.f64 {n}, {z}")
    fn.emit(f"sub.rn.f64 {f}, {z}, {n}")
    fn.emit(f"mul.rn.f64 {f}, {f}, {_f64(math.log(2))}")
    _series_f64(lw, u, f, _EXP_SERIES)
    fn.emit(f"fma.rn.f64 {u}, {u}, {f}, 0d3FF0000000000000")
    fn.emit(f"fma.rn.f64 {u}, {u}, {f}, 0d3FF0000000000000")
    # 2^n: n + 1023 in the exponent field (n is in [-160, 130])
    fn.emit(f"cvt.rzi.s32.f64 {e}, {n}")
    fn.emit(f"add.s32 {e}, {e}, 1023")
    fn.emit(f"cvt.u64.u32 {bits}, {e}")
    fn.emit(f"shl.b64 {bits}, {bits}, 52")
    fn.emit(f"mov.b64 {d}, {bits}")
    fn.emit(f"mul.rn.f64 {u}, {u}, {d}")
    return u


def exact_op(lw: Lowering, op: Operation, t: T.ElementType, ins: list[str], out: str) -> None:
    """remf, atan2 and fpowi: no PTX instruction computes them, so each is a sequence
    (f32 ones through f64 where the interpreter does: see _fmod, _atan2, _powi)."""
    wide = t.name == "f64"
    if op.name == "fpowi":
        _powi(lw, ins[0], ins[1], op.operands[1].type.element, out, wide)
    elif op.name == "remf":
        _fmod(lw, ins[0], ins[1], out, wide)
    else:
        _atan2(lw, ins[0], ins[1], out, wide)


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

    fn.emit(f"abs.f64 {aa}, {a}")
    fn.emit(f"abs.f64 {ab}, {b}")
    fn.emit(f"min.f64 {mn}, {aa}, {ab}")
    fn.emit(f"max.f64 {mx}, {aa}, {ab}")
    fn.emit(f"div.rn.f64 {t}, {mn}, {mx}")
    fn.emit(f"setp.eq.f64 {pt}, {mx}, {_f64(0.0)}")
    fn.emit(f"mov.f64 {t}, {_f64(0.0)}", pt)
    fn.emit(f"setp.eq.f64 {pt}, {mn}, {_f64(float('inf'))}")
    fn.emit(f"mov.f64 {t}, {_f64(1.0)}", pt)
    fn.emit(f"setp.gt.f64 {big}, {t}, {_f64(0.2679491924311227)}")
    fn.emit(f"fma.rn.f64 {w}, {t}, {_f64(_SQRT3)}, {_f64(-1.0)}")
    fn.emit(f"add.rn.f64 {z}, {t}, {_f64(_SQRT3)}")
    fn.emit(f"div.rn.f64 {w}, {w}, {z}")
    fn.emit(f"selp.f64 {u}, {w}, {t}, {big}")
    fn.emit(f"selp.f64 {off}, {_f64(_PI / 6)}, {_f64(0.0)}, {big}")
    fn.emit(f"mul.rn.f64 {z}, {u}, {u}")
    _series_f64(lw, p, z, [(-1) ** k / (2 * k + 1) for k in range(18)])
    fn.emit(f"fma.rn.f64 {p}, {p}, {u}, {off}")
    fn.emit(f"setp.gt.f64 {steep}, {aa}, {ab}")
    fn.emit(f"sub.rn.f64 {p}, {_f64(_PI / 2)}, {p}", steep)
    sb = fn.reg("b64")
    fn.emit(f"mov.b64 {sb}, {b}")
    fn.emit(f"setp.lt.s64 {neg}, {sb}, 0")
    fn.emit(f"sub.rn.f64 {p}, {_f64(_PI)}, {p}", neg)
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
