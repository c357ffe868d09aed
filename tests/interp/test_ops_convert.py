"""Conversions: float<->float through ml_dtypes (bf16, f8, f4, e8m0 with its directed
modes), float->int truncation and saturation, int->float signedness, bitcasts and the
pointer casts."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from nanotile.interp.dtypes import from_float, to_compute
from nanotile.ir.enums import RoundingMode, Signedness
from nanotile.ir.types import ELEMENT_TYPES

from .helpers import T, apply

RNG = np.random.default_rng(3)
ML = {"bf16": ml_dtypes.bfloat16, "f8E4M3FN": ml_dtypes.float8_e4m3fn,
      "f8E5M2": ml_dtypes.float8_e5m2, "f4E2M1FN": ml_dtypes.float4_e2m1fn,
      "f16": np.float16}


@pytest.mark.parametrize("ty", list(ML))
def test_ftof_round_trip_through_low_precision(ty):
    x = (RNG.standard_normal(64) * 3).astype(np.float32)
    down = apply("ftof", [(x, T(64, "f32"))], T(64, ty))
    assert down.dtype == np.dtype(ML[ty])
    np.testing.assert_array_equal(down, x.astype(ML[ty]))  # RNE, as ml_dtypes rounds
    up = apply("ftof", [(down, T(64, ty))], T(64, "f32"))
    np.testing.assert_array_equal(up, down.astype(np.float32))


def test_bf16_rounding_is_nearest_even():
    # 1 + 2**-8 is halfway between bf16 1 and 1 + 2**-7: ties go to even (1.0)
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8], np.float32)
    got = apply("ftof", [(x, T(2, "f32"))], T(2, "bf16"))
    assert got.astype(np.float32).tolist() == [1.0, 1 + 2**-6]


@pytest.mark.parametrize("mode,want", [(RoundingMode.zero, [2.0, 4.0, 0.25, 1.0]),
                                       (RoundingMode.positive_inf, [4.0, 4.0, 0.5, 1.0])])
def test_e8m0_directed_modes(mode, want):
    x = np.array([3.0, 4.0, 0.3, 1.0], np.float32)
    got = apply("ftof", [(x, T(4, "f32"))], T(4, "f8E8M0FNU"), rounding_mode=mode)
    assert got.astype(np.float32).tolist() == want


def test_f8e5m3fnu_round_trip():
    t = ELEMENT_TYPES["f8E5M3FNU"]
    x = np.array([1.0, 1.125, 1.0625, 3.5, 0.0, 2.0**-14 * 0.5], np.float32)
    bits = from_float(x, t)
    back = to_compute(bits, t)
    assert back.tolist() == [1.0, 1.125, 1.0, 3.5, 0.0, 2.0**-15]  # 1.0625 ties to even


@pytest.mark.parametrize("sign,ty,want", [
    (Signedness.signed, "i8", [3, -3, 127, -128, 0]),
    (Signedness.unsigned, "i8", [3, 0, -1, 0, 0]),  # 255 stored as -1
    (Signedness.signed, "i32", [3, -3, 300, -300, 0])])
def test_ftoi_truncates_and_saturates(sign, ty, want):
    x = np.array([3.9, -3.9, 300.0, -300.0, np.nan], np.float32)
    got = apply("ftoi", [(x, T(5, "f32"))], T(5, ty), signedness=sign,
                rounding_mode=RoundingMode.nearest_int_to_zero)
    assert got.tolist() == want


def test_ftoi_i64_extremes():
    x = np.array([1e30, -1e30, 2.0**62], np.float64)
    got = apply("ftoi", [(x, T(3, "f64"))], T(3, "i64"), signedness=Signedness.signed,
                rounding_mode=RoundingMode.nearest_int_to_zero)
    assert got.tolist() == [2**63 - 1, -2**63, 2**62]


def test_itof_signedness():
    x = np.array([-1, 5], np.int32)
    s = apply("itof", [(x, T(2, "i32"))], T(2, "f32"), signedness=Signedness.signed)
    u = apply("itof", [(x, T(2, "i32"))], T(2, "f32"), signedness=Signedness.unsigned)
    assert s.tolist() == [-1.0, 5.0] and u.tolist() == [2.0**32, 5.0]
    b = apply("itof", [(np.array([257], np.int32), T(1, "i32"))], T(1, "bf16"),
              signedness=Signedness.signed)
    assert float(b[0]) == 256.0  # 257 is not a bf16; nearest even is 256


def test_bitcast():
    x = np.array([1.0, -2.0], np.float32)
    bits = apply("bitcast", [(x, T(2, "f32"))], T(2, "i32"))
    assert bits.tolist() == [0x3F800000, np.int32(np.uint32(0xC0000000))]
    back = apply("bitcast", [(bits, T(2, "i32"))], T(2, "f32"))
    assert back.tolist() == [1.0, -2.0]
    h = apply("bitcast", [(np.array([1.0], np.float16), T(1, "f16"))], T(1, "bf16"))
    assert np.asarray(h).view(np.uint16).tolist() == [0x3C00]


def test_pointer_casts_round_trip():
    from .helpers import P

    p = np.array([0x10000000, 0x10000040], np.uint64)
    i = apply("ptr_to_int", [(p, T(2, P("f32")))], T(2, "i64"))
    assert i.dtype == np.int64 and i.tolist() == [0x10000000, 0x10000040]
    q = apply("int_to_ptr", [(i + 8, T(2, "i64"))], T(2, P("f32")))
    assert q.dtype == np.uint64 and q.tolist() == [0x10000008, 0x10000048]
    r = apply("ptr_to_ptr", [(q, T(2, P("f32")))], T(2, P("i8")))
    assert r.tolist() == q.tolist()


def test_tf32_constants_are_19_bits_in_3_bytes():
    # Bytes as cuTile writes tile<4xtf32> [1, 2, 4, 6] (f32 bits >> 13, little endian).
    from nanotile.interp.dtypes import dense_to_array
    from nanotile.ir.attrs import DenseElementsAttr

    attr = DenseElementsAttr(T(4, "tf32"), bytes.fromhex("00fc01000002000402000602"), False)
    assert dense_to_array(attr).tolist() == [1.0, 2.0, 4.0, 6.0]


@pytest.mark.parametrize("mode,want", [
    (RoundingMode.zero, [16777216.0, -16777216.0, 2.0**31 - 128]),
    (RoundingMode.positive_inf, [16777218.0, -16777216.0, 2.0**31]),
    (RoundingMode.negative_inf, [16777216.0, -16777218.0, 2.0**31 - 128]),
    (RoundingMode.nearest_even, [16777216.0, -16777216.0, 2.0**31])])
def test_itof_directed_rounding(mode, want):
    x = np.array([16777217, -16777217, 2**31 - 1], np.int32)  # not representable in f32
    got = apply("itof", [(x, T(3, "i32"))], T(3, "f32"), signedness=Signedness.signed,
                rounding_mode=mode)
    assert got.tolist() == want


def test_f4_constants_take_one_byte_per_element():
    # cuTile's bytecode for tile<4xf4E2M1FN> [1, 2, 4, 6]: one byte per element, not
    # nibbles packed two per byte (tileirdisasm prints these bytes as 1, 2, 4, 6).
    from pathlib import Path

    from nanotile.bytecode.reader import read_bytecode
    from nanotile.interp.dtypes import dense_to_array

    path = (Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "cutile-tests"
            / "test_astile__test_astile_tf32_f4_const.kernel-float4_e2m1fn-t10204060"
              "__f32x1.tileirbc")
    if not path.is_file():
        pytest.skip("corpus not found under ../shared/corpus")
    module = read_bytecode(path.read_bytes(), str(path))
    consts = [op.attributes["value"] for op in module.walk() if op.name == "constant"
              and op.results[0].type.element.name == "f4E2M1FN"]
    assert len(consts) == 1 and consts[0].data == bytes([2, 4, 6, 7])
    assert dense_to_array(consts[0]).astype(np.float32).tolist() == [1.0, 2.0, 4.0, 6.0]


def test_i1_constants_are_bit_packed_unless_splat():
    from nanotile.interp.dtypes import dense_to_array
    from nanotile.ir.attrs import DenseElementsAttr

    bits = [True, False, True, True, False, False, False, False, True]
    attr = DenseElementsAttr(T(9, "i1"), bytes([0b00001101, 0b1]), False)
    assert dense_to_array(attr).tolist() == bits
    assert dense_to_array(DenseElementsAttr(T(9, "i1"), b"\xff", True)).tolist() == [True] * 9
