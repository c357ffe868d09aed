"""sm_100's own conversion rules (nanotile/targets/sm100/select_convert.py): ftof between
f4E2M1FN / f8E8M0FNU and f16 / bf16 / f32 uses the cvt forms sm_100a has (e2m1x2,
ue8m0x2) where they round as the interpreter does, and sm_90 keeps the shared integer
lowering. The emulated sm_100 PTX must equal the interpreter bit for bit (a NaN result
only as a NaN: the interpreter's NaN is ml_dtypes' 0x7FC00000, PTX's the canonical
0x7FFFFFFF, on both targets), and ptxas must accept it.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from nanotile.interp import run
from nanotile.ir.parser import parse_text
from nanotile.targets.compile import assemble, compile_to_ptx, ptxas_path

from .test_ptx_ops import kernel

N = 1024


def _f32_inputs() -> np.ndarray:
    """Specials (zeros, infinities, NaNs of both signs, f32 subnormals, 2^-127 and its
    neighbours, the largest f32, every tie of e2m1, powers of two of every binade), then
    random values over many binades."""
    bits = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0x00000001, 0x80000001, 0x00400000,
                     0x00400001, 0x003FFFFF, 0x00600000, 0x007FFFFF, 0x7F7FFFFF, 0xFF7FFFFF,
                     0x7F000000, 0x7F000001], np.uint32).view(np.float32)
    with np.errstate(invalid="ignore"):  # the signalling NaN 0x7F800001
        grid = np.concatenate([
            bits, [0.0, -0.0, np.inf, -np.inf, 6.0, -6.0, 6.5, 7.0, 1e30, -1e30],
            np.arange(-64, 65) / 8.0, np.arange(-16, 17) * 0.25 + 0.125,
            np.exp2(np.arange(-149, 128.0)), 1.5 * np.exp2(np.arange(-140, 128.0)),
            -np.exp2(np.arange(-20, 20.0))]).astype(np.float32)
    rng = np.random.default_rng(31)
    rand = rng.standard_normal(N - grid.size) * np.exp2(rng.integers(-40, 40, N - grid.size))
    return np.concatenate([grid, rand.astype(np.float32)])


def _bytes() -> np.ndarray:
    return (np.arange(N) % 256).astype(np.uint8).view(np.int8)


# name -> (input type, output type, body, the cvt forms its sm_100 PTX has, inputs (made
# the input type by the test))
CASES = {
    "f32_f4_f32": ("f32", "f32", """
        %v = ftof %x0 : tile<1024xf32> -> tile<1024xf4E2M1FN>
        %y = ftof %v : tile<1024xf4E2M1FN> -> tile<1024xf32>""",
        ["cvt.rn.satfinite.e2m1x2.f32", "cvt.rn.f16x2.e2m1x2"], _f32_inputs),
    "f32_f4_bits": ("f32", "i8", """
        %v = ftof %x0 : tile<1024xf32> -> tile<1024xf4E2M1FN>
        %b = bitcast %v : tile<1024xf4E2M1FN> -> tile<1024xi4>
        %y = exti %b unsigned : tile<1024xi4> -> tile<1024xi8>""",
        ["cvt.rn.satfinite.e2m1x2.f32"], _f32_inputs),
    "f16_f4_f16": ("f16", "f16", """
        %v = ftof %x0 : tile<1024xf16> -> tile<1024xf4E2M1FN>
        %y = ftof %v : tile<1024xf4E2M1FN> -> tile<1024xf16>""",
        ["cvt.rn.satfinite.e2m1x2.f32", "cvt.rn.f16x2.e2m1x2"],
        _f32_inputs),
    "e8m0_f32": ("i8", "f32", """
        %v = bitcast %x0 : tile<1024xi8> -> tile<1024xf8E8M0FNU>
        %y = ftof %v : tile<1024xf8E8M0FNU> -> tile<1024xf32>""",
        ["cvt.rn.bf16x2.ue8m0x2"], _bytes),
    "e8m0_bf16": ("i8", "bf16", """
        %v = bitcast %x0 : tile<1024xi8> -> tile<1024xf8E8M0FNU>
        %y = ftof %v : tile<1024xf8E8M0FNU> -> tile<1024xbf16>""",
        ["cvt.rn.bf16x2.ue8m0x2"], _bytes),
    "f32_e8m0_zero": ("f32", "i8", """
        %v = ftof %x0 rounding<zero> : tile<1024xf32> -> tile<1024xf8E8M0FNU>
        %y = bitcast %v : tile<1024xf8E8M0FNU> -> tile<1024xi8>""",
        ["cvt.rz.satfinite.ue8m0x2.f32"], _f32_inputs),
    "f32_e8m0_positive_inf": ("f32", "i8", """
        %v = ftof %x0 rounding<positive_inf> : tile<1024xf32> -> tile<1024xf8E8M0FNU>
        %y = bitcast %v : tile<1024xf8E8M0FNU> -> tile<1024xi8>""",
        ["cvt.rp.satfinite.ue8m0x2.f32"], _f32_inputs),
    "bf16_e8m0_positive_inf": ("bf16", "i8", """
        %v = ftof %x0 rounding<positive_inf> : tile<1024xbf16> -> tile<1024xf8E8M0FNU>
        %y = bitcast %v : tile<1024xf8E8M0FNU> -> tile<1024xi8>""",
        ["cvt.rp.satfinite.ue8m0x2.f32"],
        _f32_inputs),
    # no cvt form rounds f32 -> ue8m0 to nearest: the shared path on sm_100 too
    "f32_e8m0_nearest": ("f32", "i8", """
        %v = ftof %x0 : tile<1024xf32> -> tile<1024xf8E8M0FNU>
        %y = bitcast %v : tile<1024xf8E8M0FNU> -> tile<1024xi8>""",
        [], _f32_inputs),
}
_DTYPE = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16, "i8": np.int8}


def _dtype(et: str):
    return _DTYPE[et]


def _text(case: str) -> str:
    src, dst, body, _, _ = CASES[case]
    return kernel([((N,), src)], ((N,), dst), body)


@pytest.mark.parametrize("case", CASES)
def test_sm100_uses_its_cvt_forms_and_sm90_does_not(case):
    forms = CASES[case][3]
    sm100 = compile_to_ptx(parse_text(_text(case), "<k>"), "sm_100")
    sm90 = compile_to_ptx(parse_text(_text(case), "<k>"), "sm_90", check_target=False)
    for form in forms:
        assert form in sm100, form
    if not forms:
        assert "ue8m0x2.f32" not in sm100 and "e2m1x2.f32" not in sm100
    assert "e2m1x2" not in sm90 and "ue8m0x2" not in sm90
    if ptxas_path() is not None:
        assemble(sm100, "sm_100")
        assemble(sm90, "sm_90")


def _same(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Bit for bit; a NaN only as a NaN."""
    size = got.dtype.itemsize
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32}[size]
    same = got.view(u) == want.view(u)
    if got.dtype.kind == "f" or "bfloat16" in str(got.dtype):
        g, w = got.astype(np.float64), want.astype(np.float64)
        same |= np.isnan(g) & np.isnan(w)
    return same


@pytest.mark.parametrize("case", CASES)
def test_sm100_emulation_equals_the_interpreter(case):
    from nanotile.ptxemu import run_ptx

    src, dst, _, _, inputs = CASES[case]
    with np.errstate(over="ignore", invalid="ignore"):  # f16: large values become inf
        x = np.asarray(inputs()).astype(_dtype(src))
    text = _text(case)
    want, got = np.zeros(N, _dtype(dst)), np.zeros(N, _dtype(dst))
    run(parse_text(text, "<k>"), "k", (1,), x.copy(), want)
    ptx = compile_to_ptx(parse_text(text, "<k>"), "sm_100")
    run_ptx(ptx, "k", grid=(1,), args=[x.copy(), got])
    ok = _same(got, want)
    assert ok.all(), list(zip(x[~ok][:6], got[~ok][:6], want[~ok][:6]))
    if dst == "f32" and src != "i8":  # f4 has no NaN: every bit equal, NaN inputs too
        assert (got.view(np.uint32) == want.view(np.uint32)).all()


def test_targets_register_their_rules():
    from nanotile.targets.sm90 import SM90
    from nanotile.targets.sm100 import SM100
    from nanotile.targets.sm100 import select_convert as sm100_rules
    from nanotile.targets.target import SELECT_HOOKS

    # sm_90's own rules are wgmma's (the mma plan and its ops); no narrow-float cvt forms
    assert set(SM90.select_overrides) == {"plan_mma", "op"}
    assert SM90.select_rule("decode_narrow_float") is None
    # every hook but ``elementwise``, which no target sets (labs/05-lowering does): the
    # conversions and tcgen05's (its mma plan and its ops)
    assert set(SM100.select_overrides) == set(SELECT_HOOKS) - {"elementwise"}
    assert SM100.select_rule("encode_narrow_float") is sm100_rules.encode_narrow_float
    with pytest.raises(AssertionError):
        SM100.select_rule("no_such_hook")
