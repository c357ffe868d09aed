"""sm_100a's cvt forms for the block-scale types (PTX 8.6), as the emulator runs them:

    cvt.rn.satfinite{.relu}.e2m1x2.f32    d, a, b;    cvt.rn{.relu}.f16x2.e2m1x2  d, a;
    cvt.{rz,rp}{.satfinite}.ue8m0x2.f32   d, a, b;    cvt.rn.bf16x2.ue8m0x2       d, a;
    cvt.{rz,rp}{.satfinite}.ue8m0x2.bf16x2 d, a;

on special values (zeros, subnormals and the smallest values, the largest, overflow to
saturation, infinities, NaN, ties) and on sweeps checked against ml_dtypes' float4_e2m1fn /
float8_e8m0fnu (rounding to nearest) or an exact floor / ceil of log2 (ue8m0's rz / rp).
Every kernel is checked with ptxas for sm_100a (when installed); ptxas refuses the forms
for sm_90a.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from tests.ptxemu import ptxkit
from tests.ptxemu.ptxkit import elementwise

SM100 = ".version 8.6\n.target sm_100a\n.address_size 64\n"
NAN = np.float32(np.nan)
NEG_NAN = np.array([0xFFC00000], np.uint32).view(np.float32)[0]
TINY = np.array([1], np.uint32).view(np.float32)[0]                 # 2^-149
MAX = np.finfo(np.float32).max


@pytest.fixture(autouse=True)
def sm100_header(monkeypatch):
    monkeypatch.setattr(ptxkit, "HEADER", SM100)


def _f32(values) -> np.ndarray:
    return np.array(values, np.float32)


# ---------------------------------------------------------------- f32 -> e2m1x2


def _to_e2m1x2(a: np.ndarray, b: np.ndarray, relu: bool = False) -> np.ndarray:
    instr = (f"cvt.rn.satfinite{'.relu' if relu else ''}.e2m1x2.f32 %t8, {{a}}, {{b}};\n"
             "cvt.u16.u8 {d}, %t8;")
    return elementwise(instr, ["f32", "f32"], "b16", a, b, extra=".reg .b8 %t8;")


def _e2m1_reference(x: np.ndarray) -> np.ndarray:
    """ml_dtypes' rounding (nearest even, saturating at +-6); NaN -> +6 (0x7)."""
    codes = x.astype(ml_dtypes.float4_e2m1fn).view(np.uint8) & 0xF
    return np.where(np.isnan(x), 7, codes)


def test_e2m1x2_special_values():
    cases = [  # (value, e2m1 code)
        (0.0, 0x0), (-0.0, 0x8), (TINY, 0x0), (-TINY, 0x8),          # zeros, underflow
        (0.25, 0x0), (-0.25, 0x8), (0.25000003, 0x1), (0.5, 0x1),    # half the smallest: tie
        (0.75, 0x2), (1.25, 0x2), (1.75, 0x4), (2.5, 0x4), (3.5, 0x6), (5.0, 0x6),  # ties
        (1.5, 0x3), (-3.0, 0xD), (6.0, 0x7), (-6.0, 0xF),            # exact, the largest
        (6.5, 0x7), (7.0, 0x7), (MAX, 0x7), (-1e30, 0xF),            # saturation
        (np.inf, 0x7), (-np.inf, 0xF), (NAN, 0x7), (NEG_NAN, 0x7),   # NaN: +MAX_NORM
    ]
    x = _f32([v for v, _ in cases])
    want = np.array([c for _, c in cases])
    lo = _to_e2m1x2(np.zeros_like(x), x)          # b -> the low nibble
    hi = _to_e2m1x2(x, np.full_like(x, 1.0))      # a -> the high nibble (1.0: code 2)
    np.testing.assert_array_equal(lo, want)
    np.testing.assert_array_equal(hi, (want << 4) | 0x2)
    np.testing.assert_array_equal(want[~np.isnan(x)], _e2m1_reference(x)[~np.isnan(x)])


def test_e2m1x2_sweep_matches_ml_dtypes():
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(1024) * np.exp2(rng.integers(-6, 5, 1024))).astype(np.float32)
    x[:128] = np.arange(-64, 64) / 8.0  # every multiple of 1/8 in [-8, 8): all the ties
    y = x[::-1].copy()
    got = _to_e2m1x2(x, y)
    np.testing.assert_array_equal(got, (_e2m1_reference(x) << 4) | _e2m1_reference(y))


def test_e2m1x2_relu():
    x = _f32([-1.0, -0.0, -TINY, -np.inf, 1.0, 7.0, NAN])
    got = _to_e2m1x2(np.zeros_like(x), x, relu=True)
    np.testing.assert_array_equal(got, [0, 0, 0, 0, 0x2, 0x7, 0x7])


# ---------------------------------------------------------------- e2m1x2 -> f16x2


def _from_e2m1x2(byte: np.ndarray, relu: bool = False) -> np.ndarray:
    instr = ("mov.b16 {{%t8, %u8}}, {a};\n"
             f"cvt.rn{'.relu' if relu else ''}.f16x2.e2m1x2 {{d}}, %t8;")
    return elementwise(instr, ["b16"], "b32", byte, extra=".reg .b8 %t8, %u8;")


def test_f16x2_from_e2m1x2_every_pair():
    byte = np.arange(256, dtype=np.uint16) | 0xAB00  # the high byte is not converted
    got = _from_e2m1x2(byte)
    nib = np.arange(256, dtype=np.uint8)
    lo = (nib & 0xF).view(ml_dtypes.float4_e2m1fn).astype(np.float16).view(np.uint16)
    hi = (nib >> 4).view(ml_dtypes.float4_e2m1fn).astype(np.float16).view(np.uint16)
    np.testing.assert_array_equal(got & 0xFFFF, lo)
    np.testing.assert_array_equal(got >> 16, hi)
    # the values: +-0, the subnormal 0.5 and the largest 6 are all f16s
    f16 = (got & 0xFFFF).astype(np.uint16).view(np.float16)
    assert f16[0x0] == 0 and not np.signbit(f16[0x0]) and np.signbit(f16[0x8])
    assert f16[0x1] == 0.5 and f16[0x7] == 6.0 and f16[0xF] == -6.0


def test_f16x2_from_e2m1x2_relu():
    got = _from_e2m1x2(np.array([0x8F, 0x27, 0x08], np.uint16), relu=True)
    np.testing.assert_array_equal(got, [0x00000000, (0x3C00 << 16) | 0x4600, 0x0])


# ---------------------------------------------------------------- f32 -> ue8m0x2


def _to_ue8m0x2(mode: str, sat: bool, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    instr = f"cvt.{mode}{'.satfinite' if sat else ''}.ue8m0x2.f32 {{d}}, {{a}}, {{b}};"
    return elementwise(instr, ["f32", "f32"], "b16", a, b)


def _ue8m0_reference(x: np.ndarray, mode: str, sat: bool) -> np.ndarray:
    """floor (rz) / ceil (rp) of log2 |x| + 127, exactly (frexp), clamped below to 0;
    +-0 -> 0; overflow and +-inf -> 255 (254 with .satfinite); NaN -> 255."""
    with np.errstate(invalid="ignore"):  # signalling NaN bit patterns
        a = np.abs(x.astype(np.float64))
    finite = np.isfinite(a) & (a > 0)
    m, e = np.frexp(np.where(finite, a, 1.0))
    k = e - 1 + ((mode == "rp") & (m != 0.5))
    code = np.clip(k + 127, 0, 255)
    code = np.where(a == 0, 0, np.where(np.isinf(a), 255, code))
    if sat:
        code = np.where(code == 255, 254, code)
    return np.where(np.isnan(x), 255, code)


@pytest.mark.parametrize("sat", [False, True])
@pytest.mark.parametrize("mode", ["rz", "rp"])
def test_ue8m0x2_special_values(mode, sat):
    top = 255 if not sat else 254
    cases = [  # (value, rz code, rp code)
        (0.0, 0, 0), (-0.0, 0, 0), (TINY, 0, 0),                      # zeros, the smallest
        (2.0 ** -127, 0, 0), (1.5 * 2.0 ** -127, 0, 1), (2.0 ** -126, 1, 1),  # 2^-127 = 0
        (1.0, 127, 127), (1.5, 127, 128), (1.0000001, 127, 128), (1.9999999, 127, 128),
        (-2.0, 128, 128), (-3.0, 128, 129),                           # the sign is ignored
        (2.0 ** 127, 254, 254), (1.5 * 2.0 ** 127, 254, top), (MAX, 254, top),  # overflow
        (np.inf, top, top), (-np.inf, top, top), (NAN, 255, 255), (NEG_NAN, 255, 255),
    ]
    x = _f32([v for v, *_ in cases])
    want = np.array([rz if mode == "rz" else rp for _, rz, rp in cases])
    np.testing.assert_array_equal(want, _ue8m0_reference(x, mode, sat))
    got = _to_ue8m0x2(mode, sat, np.full_like(x, 2.0), x)  # b -> the low byte
    np.testing.assert_array_equal(got, (128 << 8) | want)
    got = _to_ue8m0x2(mode, sat, x, np.full_like(x, 0.5))  # a -> the high byte
    np.testing.assert_array_equal(got, (want << 8) | 126)


@pytest.mark.parametrize("mode", ["rz", "rp"])
def test_ue8m0x2_sweep(mode):
    rng = np.random.default_rng(9)
    x = np.concatenate([rng.integers(0, 2 ** 32, 512, dtype=np.uint32).view(np.float32),
                        (rng.standard_normal(512) * np.exp2(rng.integers(-140, 128, 512)))
                        .astype(np.float32)])
    got = _to_ue8m0x2(mode, True, np.zeros_like(x), x)
    np.testing.assert_array_equal(got, _ue8m0_reference(x, mode, True))
    # a power of two (or 2^-127 and 0) is exact in both modes and what ml_dtypes gives
    p2 = np.exp2(np.arange(-127, 128)).astype(np.float32)
    want = p2.astype(ml_dtypes.float8_e8m0fnu).view(np.uint8)
    np.testing.assert_array_equal(_to_ue8m0x2(mode, False, np.zeros_like(p2), p2), want)


@pytest.mark.parametrize("mode", ["rz", "rp"])
def test_ue8m0x2_from_bf16x2(mode):
    import ml_dtypes as md

    v = np.array([1.5, 3.0, 0.0, -0.25, np.inf, np.nan, 2.0 ** -127, 1.5 * 2.0 ** -127],
                 np.float32)
    bf = v.astype(md.bfloat16).view(np.uint16).astype(np.uint32)
    pair = (bf << 16) | bf[::-1]
    got = elementwise(f"cvt.{mode}.satfinite.ue8m0x2.bf16x2 {{d}}, {{a}};", ["b32"], "b16", pair)
    want_hi = _ue8m0_reference(v, mode, True)
    np.testing.assert_array_equal(got, (want_hi << 8) | want_hi[::-1])


# ---------------------------------------------------------------- ue8m0x2 -> bf16x2


def test_bf16x2_from_ue8m0x2_every_code():
    codes = np.arange(256, dtype=np.uint16)
    got = elementwise("cvt.rn.bf16x2.ue8m0x2 {d}, {a};", ["b16"], "b32",
                      codes | (codes[::-1] << 8))
    lo, hi = got & 0xFFFF, got >> 16
    want = codes.astype(np.uint8).view(ml_dtypes.float8_e8m0fnu).astype(ml_dtypes.bfloat16)
    want = want.view(np.uint16).astype(np.int64)
    want[255] = 0x7FFF  # NaN: the canonical bf16 NaN
    np.testing.assert_array_equal(lo, want)
    np.testing.assert_array_equal(hi, want[::-1])
    assert lo[0] == 0x0040 and lo[127] == 0x3F80 and lo[254] == 0x7F00  # 2^-127, 1, 2^127


# ---------------------------------------------------------------- sm_90a has none of them


@pytest.mark.parametrize("instr", [
    "cvt.rn.satfinite.e2m1x2.f32 %b1, %f1, %f1;", "cvt.rn.f16x2.e2m1x2 %r1, %b1;",
    "cvt.rz.satfinite.ue8m0x2.f32 %h1, %f1, %f1;", "cvt.rn.bf16x2.ue8m0x2 %r1, %h1;"])
def test_ptxas_refuses_the_forms_for_sm90a(instr):
    if ptxkit.ptxas_path() is None:
        pytest.skip("ptxas not installed")
    body = (".reg .b8 %b<2>; .reg .b16 %h<2>; .reg .b32 %r<2>; .reg .f32 %f<2>;\n"
            "mov.f32 %f1, 0f3F800000; mov.b16 %h1, 0; mov.b32 %r1, 0; mov.b16 {%b1, %b0}, %h1;\n"
            f"{instr}\nret;")
    text = f".visible .entry k()\n{{\n{body}\n}}\n"
    assert ptxkit.ptxas_check(SM100 + text, "sm_100a") is None
    refused = ptxkit.ptxas_check(SM100.replace("sm_100a", "sm_90a") + text, "sm_90a")
    assert refused is not None and "not supported on .target 'sm_90a'" in refused
