"""Moves and conversions: mov (including packing and unpacking vector registers), cvta
(generic <-> state-space addresses) and cvt (among integers, f16, bf16, f32, f64, the f8
formats and the packed x2 types, f32 -> tf32, and sm_100a's e2m1x2 / ue8m0x2 forms, with
PTX's rounding, saturation and relu). They sit together because each carries one value
over into another form (register layout, address space or type) rather than computing a
new one."""

from __future__ import annotations

import ml_dtypes
import numpy as np

from nanotile.ptxemu import fpmath as fp
from nanotile.ptxemu.fpmath import DTYPES, FLOATS, UINT, type_size
from nanotile.ptxemu.ops_common import F64, INT_ROUNDING, ROUNDING, WINDOWS, C, handler_registry
from nanotile.ptxemu.ptx_parser import Reg, Vec


HANDLERS: dict = {}
op = handler_registry(HANDLERS)


# ---------------------------------------------------------------- moves

@op("mov")
def _mov(c: C):
    c.nops(2)
    t = c.type()
    d, a = c.ops[0], c.ops[1]
    if isinstance(d, Vec):          # unpack: mov.b64 {lo, hi}, x
        parts = d.items
        size = type_size(t) // len(parts)
        pt = f"b{8 * size}"
        ga = c.src(a, t)
        sets = [c.dst(p, pt) for p in parts]
        shift = [np.uint64(8 * size * j) for j in range(len(parts))]

        def unpack(w, m):
            v = ga(w).astype(np.uint64)
            for s, sh in zip(sets, shift):
                s(w, m, (v >> sh).astype(UINT[size]))
        return unpack
    if isinstance(a, Vec):          # pack: mov.b64 x, {lo, hi}
        parts = a.items
        size = type_size(t) // len(parts)
        pt = f"b{8 * size}"
        gets = [c.src(p, pt) for p in parts]
        sd = c.dst(d, t)
        ut = UINT[type_size(t)]

        def pack(w, m):
            v = np.zeros(len(m), np.uint64)
            for j, g in enumerate(gets):
                v = v | (g(w).astype(np.uint64) << np.uint64(8 * size * j))
            sd(w, m, v.astype(ut))
        return pack
    if isinstance(a, Reg) and a.name in c.k.labels:
        raise c.unsupported("label address")
    copy = _register_copy(c, d, a, t)
    if copy is not None:
        return copy
    g = c.src(a, t)
    s = c.dst(d, t)
    return lambda w, m: s(w, m, g(w))


def _register_copy(c: C, d, a, t: str):
    """mov between two registers as wide as the type: the destination takes the source's
    array (registers are never changed in place) instead of viewing it as ``t`` and back.
    None where the general path is needed (predicates, other widths, registers a wgmma
    may have in flight, which are checked on every access)."""
    k = c.k
    if not (isinstance(d, Reg) and isinstance(a, Reg)) or t == "pred":
        return None
    di, si = k.reg_index.get(d.name), k.reg_index.get(a.name)
    if di is None or si is None or a.name in ("%clock", "%clock64", "%globaltimer"):
        return None
    size = type_size(t)
    if "pred" in (k.reg_type[di], k.reg_type[si]) \
            or type_size(k.reg_type[di]) != size or type_size(k.reg_type[si]) != size \
            or {di, si} & k.async_registers:
        return None
    u = UINT[size]

    def copy(w, m):
        R = w.R
        v = R[si]
        if v.dtype is not u:
            v = v.view(u)
        R[di] = v if m is w.full else np.where(m, v, R[di])
    return copy


@op("cvta")
def _cvta(c: C):
    to = c.has("to")
    space = c.space()
    t = c.type()
    base = np.uint64(WINDOWS.get(space, 0))
    ga = c.src(c.ops[1], t)
    sd = c.dst(c.ops[0], t)
    dt = DTYPES[t]
    if to:
        return lambda w, m: sd(w, m, (ga(w).astype(np.uint64) - base).astype(dt))
    return lambda w, m: sd(w, m, (ga(w).astype(np.uint64) + base).astype(dt))


# ---------------------------------------------------------------- conversions

_F8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}


def _to_float(x64: np.ndarray, t: str, mode: str, satfinite: bool, relu: bool) -> np.ndarray:
    if relu:
        x64 = np.where(np.isnan(x64), x64, np.maximum(x64, 0.0))
    if t in _F8_MAX:
        if satfinite:
            x64 = np.where(np.isnan(x64), x64, np.clip(x64, -_F8_MAX[t], _F8_MAX[t]))
        if mode != "rn":
            raise ValueError("f8 conversions only round to nearest")
        return x64.astype(np.float32).astype(DTYPES[t])
    r = fp.round_to(x64, None, t, mode)
    if satfinite:
        fmax = float(np.finfo(DTYPES[t]).max) if t != "bf16" else 3.3895313892515355e38
        r = np.where(np.isinf(r.astype(F64)), np.sign(r.astype(F64)) * fmax, r).astype(DTYPES[t])
    return r


def _cvt_tf32(c: C):
    """cvt.rna/.rn/.rz{.satfinite}.tf32.f32: round an f32 to 10 mantissa bits, the result
    kept in f32 format with its 13 low bits zero. Infinities and NaNs pass through (with
    .satfinite NaN stays NaN and infinities and overflows become the largest finite tf32)."""
    mode = next((m for m in c.mods if m in ("rna", "rn", "rz")), None)
    if mode is None:
        raise c.unsupported("cvt to tf32 rounds with .rna, .rn or .rz")
    satfinite = c.has("satfinite")
    if c.has("relu"):
        raise c.unsupported("cvt.relu to tf32")
    ga, sd = c.src(c.ops[1], "b32"), c.dst(c.ops[0], "b32")
    low = np.uint64(0x1FFF)

    def tf32(w, m):
        b = ga(w).astype(np.uint32).astype(np.uint64)
        finite = (b & np.uint64(0x7F800000)) != np.uint64(0x7F800000)
        if mode == "rna":
            up = np.uint64(0x1000)
        elif mode == "rn":
            up = np.uint64(0xFFF) + ((b >> np.uint64(13)) & np.uint64(1))
        else:
            up = np.uint64(0)
        sign, mag = b & np.uint64(0x80000000), b & np.uint64(0x7FFFFFFF)
        r = np.minimum((mag + up) & ~low, np.uint64(0x7F800000))  # a carry may reach inf
        r = np.where(finite, r | sign, b)
        if satfinite:
            inf = (r & np.uint64(0x7FFFFFFF)) == np.uint64(0x7F800000)
            r = np.where(inf, (r & np.uint64(0x80000000)) | np.uint64(0x7F7FE000), r)
        return sd(w, m, r.astype(np.uint32))
    return tf32


@op("cvt")
def _cvt(c: C):
    if len(c.types) != 2:
        raise c.unsupported("expected destination and source types")
    dtn, stn = c.types
    if dtn == "tf32" and stn == "f32":
        return _cvt_tf32(c)
    if "tf32" in (dtn, stn):
        raise c.unsupported("tf32 conversions other than cvt.{rna,rn,rz}.tf32.f32")
    ftz, sat = c.has("ftz"), c.has("sat")
    satfinite, relu = c.has("satfinite"), c.has("relu")
    irnd = next((INT_ROUNDING[m] for m in c.mods if m in INT_ROUNDING), None)
    frnd = next((m for m in c.mods if m in ROUNDING), None)
    sd = c.dst(c.ops[0], dtn)
    if "e2m1x2" in (dtn, stn) or "ue8m0x2" in (dtn, stn):
        if ftz or sat or irnd is not None:
            raise c.unsupported(".ftz, .sat and integer rounding with e2m1x2 / ue8m0x2")
        return _cvt_block_scale(c, dtn, stn, frnd, satfinite, relu, sd)
    # packed destinations: two f32 inputs (a -> high half, b -> low half)
    if dtn in ("f16x2", "bf16x2", "e4m3x2", "e5m2x2") and stn == "f32":
        et = dtn[:-2]
        half = 16 if et in ("f16", "bf16") else 8
        ga, gb = c.src(c.ops[1], "f32"), c.src(c.ops[2], "f32")
        mode = frnd or "rn"
        u = UINT[half // 8]
        out_t = np.uint32 if half == 16 else np.uint16

        def pack2(w, m):
            hi = _to_float(ga(w).astype(F64), et, mode, satfinite, relu).view(u).astype(out_t)
            lo = _to_float(gb(w).astype(F64), et, mode, satfinite, relu).view(u).astype(out_t)
            return sd(w, m, (hi << out_t(half)) | lo)
        return pack2
    if stn in ("e4m3x2", "e5m2x2") and dtn == "f16x2":
        et = stn[:-2]
        ga = c.src(c.ops[1], "b16")

        def unpack2(w, m):
            a = ga(w)
            lo = (a & np.uint16(0xFF)).astype(np.uint8).view(DTYPES[et]).astype(np.float16)
            hi = (a >> np.uint16(8)).astype(np.uint8).view(DTYPES[et]).astype(np.float16)
            return sd(w, m, lo.view(np.uint16).astype(np.uint32)
                      | (hi.view(np.uint16).astype(np.uint32) << np.uint32(16)))
        return unpack2
    if dtn not in DTYPES or stn not in DTYPES or "x2" in dtn or "x2" in stn:
        raise c.unsupported()
    ga = c.src(c.ops[1], stn)
    dfl, sfl = dtn in FLOATS, stn in FLOATS
    ddt = DTYPES[dtn]
    if not dfl and not sfl:
        return _cvt_int(c, ga, sd, dtn, stn, sat)
    if sfl and not dfl:
        mode = irnd or "rz"
        lo, hi = np.iinfo(ddt).min, np.iinfo(ddt).max

        def f2i(w, m):
            x = ga(w)
            if ftz:
                x = fp.flush(x, stn)
            x = x.astype(F64)
            r = {"rn": np.rint, "rz": np.trunc, "rm": np.floor, "rp": np.ceil}[mode](x)
            r = np.where(np.isnan(r), 0.0, r)
            small = np.clip(r, float(lo), float(hi))
            out = np.array([lo if v <= lo else hi if v >= hi else int(v) for v in small],
                           dtype=ddt) if ddt.itemsize == 8 else small.astype(ddt)
            return sd(w, m, out)
        return f2i
    if not sfl and dfl:
        mode = frnd or "rn"

        def i2f(w, m):
            x = ga(w)
            s = x.astype(F64)
            if ddt.itemsize >= 4 and mode == "rn" and dtn != "bf16":
                r = x.astype(ddt)
            else:
                e = np.array([float(int(v) - int(sv)) if np.isfinite(sv) else 0.0
                              for v, sv in zip(x, s)], dtype=F64)
                r = fp.round_to(s, e, dtn, mode)
            if sat:
                r = fp.saturate(r)
            return sd(w, m, r)
        return i2f
    # float -> float
    widen = DTYPES[dtn].itemsize >= DTYPES[stn].itemsize and not (
        dtn == "f16" and stn == "bf16" or dtn == "bf16" and stn == "f16")
    mode = frnd or "rn"
    if not widen and frnd is None and irnd is None:
        raise c.error(f"'{c.ins.opcode}': a narrowing float conversion needs a rounding modifier")

    def f2f(w, m):
        x = ga(w)
        if ftz:
            x = fp.flush(x, stn)
        x64 = x.astype(F64)
        if irnd is not None:
            x64 = {"rn": np.rint, "rz": np.trunc, "rm": np.floor, "rp": np.ceil}[irnd](x64)
        r = _to_float(x64, dtn, mode, satfinite, relu) if dtn not in ("f32", "f64") or \
            not widen else x64.astype(ddt)
        if ftz:
            r = fp.flush(r, dtn)
        if sat:
            r = fp.saturate(r)
        if dtn in fp.CANONICAL_NAN and dtn != "f64":
            r = fp.canon_nan(r, dtn)
        return sd(w, m, r)
    return f2f


def _cvt_int(c: C, ga, sd, dtn: str, stn: str, sat: bool):
    ddt = DTYPES[dtn]
    if not sat:
        return lambda w, m: sd(w, m, ga(w).astype(ddt))
    lo, hi = int(np.iinfo(ddt).min), int(np.iinfo(ddt).max)

    def sat_cvt(w, m):
        vals = [min(max(int(v), lo), hi) for v in ga(w)]
        return sd(w, m, np.array(vals, dtype=ddt))
    return sat_cvt


# ---------------------------------------------------------------- e2m1x2 / ue8m0x2 (sm_100a)
#
# PTX 8.6's forms for Blackwell's block-scale types (ptxas refuses them for sm_90a):
#   cvt.rn.satfinite{.relu}.e2m1x2.f32   d, a, b;   d .b8:  a -> d[7:4], b -> d[3:0]
#   cvt.rn{.relu}.f16x2.e2m1x2           d, a;      a .b8:  a[7:4] -> d[31:16], a[3:0] -> d[15:0]
#   cvt.{rz,rp}{.satfinite}.ue8m0x2.f32  d, a, b;   d .b16: a -> d[15:8], b -> d[7:0]
#   cvt.{rz,rp}{.satfinite}.ue8m0x2.bf16x2 d, a;    a's high bf16 -> d[15:8], low -> d[7:0]
#   cvt.rn.bf16x2.ue8m0x2                d, a;      a .b16: a[15:8] -> d[31:16], a[7:0] -> d[15:0]
# e2m1 is s.ee.m (bias 1, no inf or NaN, largest 6); ue8m0 is 2^(bits - 127), bits 0xFF NaN.
# Where the ISA's text does not spell a special case out (a NaN to e2m1, the sign of a
# ue8m0 input, ue8m0's subnormal and overflow rounding), these follow NVIDIA's CUDA 13
# cuda_fp4.hpp / cuda_fp8.hpp, whose host code stands in for the same instructions.
# Not run on an sm_100 GPU.


def e2m1_codes(x: np.ndarray, relu: bool = False) -> np.ndarray:
    """cvt.rn.satfinite{.relu} of float values to e2m1 codes (uint8, 0..15): nearest even,
    +-inf and overflows saturating to +-6; NaN gives +6 (0x7: "NaN converts to positive
    FP4_MAXNORM"); an underflow keeps its sign (-0, 0x8). .relu (not checked on hardware):
    a result with the sign set becomes +0, NaN still +6."""
    x64 = np.asarray(x, F64)
    nan = np.isnan(x64)
    x64 = np.clip(np.where(nan, 0.0, x64), -6.0, 6.0)
    codes = x64.astype(ml_dtypes.float4_e2m1fn).view(np.uint8) & np.uint8(0xF)
    if relu:
        codes = np.where(codes & np.uint8(8), np.uint8(0), codes)
    return np.where(nan, np.uint8(7), codes).astype(np.uint8)


def e2m1_to_f16(codes: np.ndarray, relu: bool = False) -> np.ndarray:
    """e2m1 codes (low 4 bits) -> f16 (exact); .relu: a value with the sign set -> +0."""
    codes = np.asarray(codes, np.uint8) & np.uint8(0xF)
    if relu:
        codes = np.where(codes & np.uint8(8), np.uint8(0), codes)
    return codes.view(ml_dtypes.float4_e2m1fn).astype(np.float16)


def ue8m0_codes(x: np.ndarray, up: bool, satfinite: bool) -> np.ndarray:
    """cvt.rz / cvt.rp{.satfinite} of f32 (or bf16) values to ue8m0 codes (uint8): floor
    (rz) or ceil (rp) of log2 |x| + 127, clamped below to 0 (2^-127); the sign is ignored
    (cuda_fp8.hpp's host code reads |x|), +-0 gives 0; +-inf and results above 254 give
    255, or 254 with .satfinite; NaN gives 255."""
    u = np.asarray(x, np.float32).view(np.uint32) & np.uint32(0x7FFFFFFF)
    nan = u > np.uint32(0x7F800000)
    e = (u >> np.uint32(23)).astype(np.int64)   # the biased exponent: floor(log2 |x|) + 127
    if up:
        inexact = ((u & np.uint32(0x7FFFFF)) != 0) & (e < 255)
        # subnormals: above 2^-127 (0x00400000) round up to 2^-126, the rest to 2^-127
        e = np.where(e == 0, (u > np.uint32(0x00400000)).astype(np.int64), e + inexact)
    code = np.minimum(e, 255)
    if satfinite:
        code = np.where(code == 255, 254, code)
    return np.where(nan, 255, code).astype(np.uint8)


def ue8m0_to_bf16_bits(codes: np.ndarray) -> np.ndarray:
    """ue8m0 codes (low 8 bits) -> bf16 bits (exact): 2^-127 for 0 (the bf16 subnormal
    0x0040), the canonical NaN 0x7FFF for 0xFF."""
    codes = np.asarray(codes).astype(np.uint16) & np.uint16(0xFF)
    bits = codes << np.uint16(7)
    bits = np.where(codes == 0, np.uint16(0x0040), bits)
    return np.where(codes == 0xFF, np.uint16(0x7FFF), bits).astype(np.uint16)


def _halves_f32(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A bf16x2 register's (high, low) halves as f32 values (exact)."""
    v = v.astype(np.uint32)
    hi = (v >> np.uint32(16)) << np.uint32(16)
    lo = (v & np.uint32(0xFFFF)) << np.uint32(16)
    return hi.view(np.float32), lo.view(np.float32)


def _cvt_block_scale(c: C, dtn: str, stn: str, frnd: str | None, satfinite: bool, relu: bool,
                     sd):
    if dtn == "e2m1x2" and stn == "f32":
        if frnd != "rn" or not satfinite:
            raise c.unsupported("cvt to .e2m1x2 from .f32 is .rn.satfinite")
        c.nops(3)
        ga, gb = c.src(c.ops[1], "f32"), c.src(c.ops[2], "f32")

        def to_e2m1x2(w, m):
            hi, lo = e2m1_codes(ga(w), relu), e2m1_codes(gb(w), relu)
            return sd(w, m, ((hi << np.uint8(4)) | lo).astype(np.uint8))
        return to_e2m1x2
    if dtn == "f16x2" and stn == "e2m1x2":
        if frnd != "rn" or satfinite:
            raise c.unsupported("cvt from .e2m1x2 is .rn{.relu}.f16x2")
        ga = c.src(c.ops[1], "e2m1x2")

        def from_e2m1x2(w, m):
            a = ga(w)
            lo = e2m1_to_f16(a, relu).view(np.uint16).astype(np.uint32)
            hi = e2m1_to_f16(a >> np.uint8(4), relu).view(np.uint16).astype(np.uint32)
            return sd(w, m, (hi << np.uint32(16)) | lo)
        return from_e2m1x2
    if dtn == "ue8m0x2" and stn in ("f32", "bf16x2"):
        if frnd not in ("rz", "rp") or relu:
            raise c.unsupported("cvt to .ue8m0x2 rounds with .rz or .rp (no .relu)")
        up = frnd == "rp"
        if stn == "f32":
            c.nops(3)
            ga, gb = c.src(c.ops[1], "f32"), c.src(c.ops[2], "f32")

            def pair(w):
                return ga(w), gb(w)
        else:
            gv = c.src(c.ops[1], "b32")

            def pair(w):
                return _halves_f32(gv(w))

        def to_ue8m0x2(w, m):
            a, b = pair(w)
            hi = ue8m0_codes(a, up, satfinite).astype(np.uint16)
            lo = ue8m0_codes(b, up, satfinite).astype(np.uint16)
            return sd(w, m, (hi << np.uint16(8)) | lo)
        return to_ue8m0x2
    if dtn == "bf16x2" and stn == "ue8m0x2":
        if frnd != "rn" or satfinite or relu:
            raise c.unsupported("cvt from .ue8m0x2 is .rn.bf16x2")
        ga = c.src(c.ops[1], "ue8m0x2")

        def from_ue8m0x2(w, m):
            a = ga(w)
            lo = ue8m0_to_bf16_bits(a).astype(np.uint32)
            hi = ue8m0_to_bf16_bits(a >> np.uint16(8)).astype(np.uint32)
            return sd(w, m, (hi << np.uint32(16)) | lo)
        return from_ue8m0x2
    raise c.unsupported(f"cvt between .{dtn} and .{stn}")
