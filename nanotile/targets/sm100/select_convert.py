"""sm_100a's own conversion rules: the cvt forms PTX 8.6 added for the element types only
Blackwell has, which sm_90a lacks (ptxas: "not supported on .target 'sm_90a'").

    cvt.rn.f16x2.e2m1x2 d, a;                      a .b8: two f4E2M1FN -> two f16 (exact)
    cvt.rn.satfinite.e2m1x2.f32 d, a, b;           d .b8: a -> d[7:4], b -> d[3:0]
    cvt.rn.bf16x2.ue8m0x2 d, a;                    a .b16: two f8E8M0FNU -> two bf16 (exact)
    cvt.{rz,rp}.satfinite.ue8m0x2.f32 d, a, b;     d .b16: a -> d[15:8], b -> d[7:0]

They fill the hooks ``decode_narrow_float`` and ``encode_narrow_float`` of instruction
selection (target.SELECT_HOOKS; the shared path is ptx/select_convert.py's integer bit
manipulation, which sm_90 uses). A hardware form is used only where, with the fix-ups
written here, its result equals the interpreter's (nanotile/interp: ml_dtypes, and its own
directed roundings for f8E8M0FNU) for every input:

- f4E2M1FN -> f32: f16x2.e2m1x2 then cvt.f32.f16; every e2m1 value (-0 too) is an f16.
- f8E8M0FNU -> f32: bf16x2.ue8m0x2 then cvt.f32.bf16; 2^-127 (bits 0) is a bf16
  subnormal, 0xFF a NaN.
- f32 -> f4E2M1FN (any rounding mode: the interpreter always rounds to nearest even,
  saturating at +-6): e2m1x2.f32 with a zero partner. It rounds and saturates alike, but
  turns NaN into +6 (the CUDA headers: "NaN converts to positive FP4_MAXNORM") where the
  interpreter (ml_dtypes) gives -0 for a NaN with its sign clear and +0 for one with it
  set: that case is patched.
- f32 -> f8E8M0FNU, modes zero / positive_inf: ue8m0x2.f32 rz / rp with .satfinite
  (finite values above 2^127 give 2^127, as the interpreter clamps), patched where the
  interpreter has rules of its own: +-0 gives 1.0 (bits 127, the instruction 2^-127),
  negatives and -inf NaN (CUDA's cuda_fp8.hpp has the instruction read |x|; the patch
  makes that moot), and under positive_inf +inf gives NaN (.satfinite: 2^127).
- f32 -> f8E8M0FNU, nearest modes: the shared path. cvt has only .rz and .rp for
  ue8m0x2 (ptxas: "Illegal rounding modifier" for .rn), neither of which is the
  interpreter's nearest rounding (an exponent tie goes up).
- f16 / bf16 sources are widened to f32 (exactly) first and take the rules above; f64
  sources too, narrowed as the shared code does, except in the directed e8m0 modes (the
  shared path reads the f64's own exponent). f8E5M3FNU (Rubin's, not sm_100's): the
  shared path.
"""

from __future__ import annotations

from typing import Any

from ...ir.enums import RoundingMode

Lowering = Any  # the selection state (ptx/select_instructions.Selection): ``fn`` builds


def decode_narrow_float(lw: Lowering, x: str, t: Any) -> str | None:
    """An f32 register with the value of f4E2M1FN / f8E8M0FNU ``x`` (its bits in the low
    bits of a b16 register; higher bits ignored), or None (another type: shared path)."""
    fn = lw.fn
    if t.name == "f4E2M1FN":
        lo8, hi8, pair = fn.reg("b8"), fn.reg("b8"), fn.reg("b32")
        lo, hi, f = fn.reg("b16"), fn.reg("b16"), fn.reg("f32")
        fn.emit(f"mov.b16 {{{lo8}, {hi8}}}, {x}")
        fn.emit(f"cvt.rn.f16x2.e2m1x2 {pair}, {lo8}")  # d[15:0] from a[3:0]
        fn.emit(f"mov.b32 {{{lo}, {hi}}}, {pair}")
        fn.emit(f"cvt.f32.f16 {f}, {lo}")
        return f
    if t.name == "f8E8M0FNU":
        pair, lo, hi, f = fn.reg("b32"), fn.reg("b16"), fn.reg("b16"), fn.reg("f32")
        fn.emit(f"cvt.rn.bf16x2.ue8m0x2 {pair}, {x}")  # d[15:0] from a[7:0]
        fn.emit(f"mov.b32 {{{lo}, {hi}}}, {pair}")
        fn.emit(f"cvt.f32.bf16 {f}, {lo}")
        return f
    return None


def encode_narrow_float(lw: Lowering, x: str, rt: Any, mode: RoundingMode, out: str) -> bool:
    """f32 register ``x`` -> the bits of ``rt`` in b16 register ``out`` (upper bits zero),
    as the interpreter rounds; False where sm_100a has no form that does (shared path)."""
    if rt.name == "f4E2M1FN":
        _encode_e2m1(lw, x, out)
        return True
    if rt.name == "f8E8M0FNU" and mode in (RoundingMode.zero, RoundingMode.positive_inf):
        _encode_ue8m0_directed(lw, x, mode == RoundingMode.positive_inf, out)
        return True
    return False


def _encode_e2m1(lw: Lowering, x: str, out: str) -> None:
    fn = lw.fn
    zero, byte, r = fn.reg("f32"), fn.reg("b8"), fn.reg("b16")
    nan, bits = fn.reg("pred"), fn.reg("b32")
    fn.emit(f"mov.f32 {zero}, 0f00000000")
    fn.emit(f"cvt.rn.satfinite.e2m1x2.f32 {byte}, {zero}, {x}")  # x -> the low nibble
    fn.emit(f"cvt.u16.u8 {r}, {byte}")
    # NaN: the instruction gives +6 (0x7); the interpreter 0x8 (-0) for a NaN with the
    # sign clear, 0x0 for one with it set: ((~bits) >> 28) & 8
    fn.emit(f"setp.nan.f32 {nan}, {x}, {x}")
    fn.emit(f"mov.b32 {bits}, {x}")
    fn.emit(f"not.b32 {bits}, {bits}")
    fn.emit(f"shr.u32 {bits}, {bits}, 28")
    fn.emit(f"and.b32 {bits}, {bits}, 8")
    fn.emit(f"cvt.u16.u32 {r}, {bits}", nan)
    fn.emit(f"mov.b16 {out}, {r}")


def _encode_ue8m0_directed(lw: Lowering, x: str, up: bool, out: str) -> None:
    """Modes zero (up False) and positive_inf (up True): floor / ceil of log2 x, clamped to
    [2^-127, 2^127]; the interpreter's rules for +-0 (1.0), negatives (NaN) and, rounding
    up, +inf (NaN) patched after the instruction."""
    fn = lw.fn
    zero, r, p = fn.reg("f32"), fn.reg("b16"), fn.reg("pred")
    fn.emit(f"mov.f32 {zero}, 0f00000000")
    # the zero partner goes to the high byte: bits 0 in both modes, so d = code(x)
    fn.emit(f"cvt.{'rp' if up else 'rz'}.satfinite.ue8m0x2.f32 {r}, {zero}, {x}")
    fn.emit(f"setp.eq.f32 {p}, {x}, 0f00000000")  # +-0: 1.0
    fn.emit(f"mov.b16 {r}, 127", p)
    fn.emit(f"setp.lt.f32 {p}, {x}, 0f00000000")  # negatives and -inf: NaN
    fn.emit(f"mov.b16 {r}, 255", p)
    if up:
        fn.emit(f"setp.eq.f32 {p}, {x}, 0f7F800000")  # +inf: NaN (.satfinite gave 254)
        fn.emit(f"mov.b16 {r}, 255", p)
    fn.emit(f"mov.b16 {out}, {r}")
