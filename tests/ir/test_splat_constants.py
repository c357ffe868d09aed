"""Splat constants are read and written, and float arithmetic on them folded
(fold-constants), without NumPy where the value is a plain Python number
(rewrite.splat_number, rewrite.make_splat, fold_constants.fold), so that compiling a
kernel rarely imports NumPy. The NumPy-free way must give the bytes and numbers NumPy
gives: checked here against NumPy on edge cases and random values of every plain number
type."""

from __future__ import annotations

import math
import random
import struct

import numpy as np
import pytest

from nanotile.ir import types as T
from nanotile.ir.core import Block
from nanotile.ir.rewrite import make_splat, numpy_dtype, splat_number, splat_value

INTS = {"i1": T.I1, "i8": T.I8, "i16": T.I16, "i32": T.I32, "i64": T.I64}
FLOATS = {"f16": T.F16, "bf16": T.BF16, "f32": T.F32, "f64": T.F64}


def numpy_bytes(value, element) -> bytes:
    if element.name == "i1":
        value = 1 if value else 0
    with np.errstate(over="ignore"):
        return np.array(value).astype(numpy_dtype(element)).tobytes()


def float_cases(seed: int) -> list[float]:
    rng = random.Random(seed)
    edge = [0.0, -0.0, 1.0, -1.5, 0.1, 1e-8, 1e-40, 5e-324, 65504.0, 65519.99, 65520.0,
            65536.0, 3.4028234e38, 3.4028235677973366e38, 3.5e38, 1e300, -1e300,
            math.inf, -math.inf, math.nan, -math.nan, 2.0 ** -24, 2.0 ** -25, 2.0 ** -149,
            2.0 ** -150, 1.0 + 2.0 ** -11, 1.0 + 2.0 ** -24, 1.0 + 3 * 2.0 ** -24,
            1.0 + 2.0 ** -8, 1.0 + 2.0 ** -8 + 2.0 ** -30, 1.0 + 3 * 2.0 ** -8,
            3.3895e38, 3.3961e38, 3.3962e38, 3.39e38, 3.4e38, 2.0 ** -133, 2.0 ** -134,
            3 * 2.0 ** -134 + 2.0 ** -150]
    bits = [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
            for _ in range(2000)]
    scaled = [rng.uniform(-1, 1) * 10.0 ** rng.randint(-45, 40) for _ in range(2000)]
    return edge + bits + scaled


def int_cases(seed: int) -> list[int]:
    rng = random.Random(seed)
    edge = [0, 1, -1, 127, 128, -129, 255, 256, 32767, -32769, 2 ** 31 - 1, -2 ** 31,
            2 ** 32 + 5, 2 ** 63 - 1, -2 ** 63, True, False]
    return edge + [rng.randint(-2 ** 63, 2 ** 63 - 1) for _ in range(2000)]


def constant_bytes(value, element) -> bytes:
    return make_splat(value, T.TileType((4,), element)).attributes["value"].data


@pytest.mark.parametrize("name", sorted(FLOATS))
def test_float_splats_are_numpys_bytes(name):
    element = FLOATS[name]
    for value in float_cases(1):
        assert constant_bytes(value, element) == numpy_bytes(value, element), (name, value)


@pytest.mark.parametrize("name", sorted(INTS))
def test_int_splats_are_numpys_bytes(name):
    element = INTS[name]
    for value in int_cases(2):
        assert constant_bytes(value, element) == numpy_bytes(value, element), (name, value)


@pytest.mark.parametrize("name", sorted(INTS) + sorted(FLOATS))
def test_splat_number_is_the_number_numpy_reads(name):
    element = {**INTS, **FLOATS}[name]
    block = Block([])
    values = int_cases(3)[:300] if name in INTS else float_cases(4)[:300]
    for value in values:
        op = block.append(make_splat(value, T.TileType((), element)))
        read, expected = splat_number(op.results[0]), splat_value(op.results[0])
        if name not in INTS and math.isnan(expected):
            assert math.isnan(read)
            continue
        assert type(read) is (int if name in INTS else float)
        assert read == expected and math.copysign(1, read) == math.copysign(1, expected), \
            (name, value, read, expected)


def element_bits(rng: random.Random, element) -> list[int]:
    """Bit patterns of ``element``: every class (zeros, subnormals, normals near 1 and
    near the ends of the range, infinities), then random ones, NaNs left out (they go to
    NumPy)."""
    width = element.bitwidth
    mantissa = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52}[element.name]
    top = ((1 << (width - 1 - mantissa)) - 1) << mantissa  # infinity's bits
    picks = [0, 1, 2, 3, (1 << mantissa) - 1, 1 << mantissa, top - 1, top,
             (top >> 1) & ~((1 << mantissa) - 1), ((top >> 1) & ~((1 << mantissa) - 1)) + 1]
    picks += [rng.getrandbits(width - 1) for _ in range(600)]
    picks += [rng.randrange(top >> 1, (top >> 1) + (4 << mantissa)) for _ in range(200)]
    picks += [rng.randrange(0, 4 << mantissa) for _ in range(200)]  # small: subnormal results
    signed = [bits | (rng.getrandbits(1) << (width - 1)) for bits in picks]
    return [bits for bits in signed if bits & ((1 << (width - 1)) - 1) <= top]


@pytest.mark.parametrize("op_name", ["addf", "subf", "mulf", "divf", "negf", "absf"])
@pytest.mark.parametrize("name", sorted(FLOATS))
def test_float_folds_are_numpys(name, op_name):
    """fold_float's Python arithmetic, rounded to the element type, against NumPy's
    arithmetic in that type, bit for bit (make_splat's bytes of each)."""
    from nanotile.ir.core import make_op
    from nanotile.passes.fold_constants import fold

    element = FLOATS[name]
    dtype = numpy_dtype(element)
    tile = T.TileType((), element)
    rng = random.Random(hash((name, op_name)) & 0xFFFF)
    bits = element_bits(rng, element)
    arithmetic = {"addf": np.add, "subf": np.subtract, "mulf": np.multiply,
                  "divf": np.divide, "negf": lambda a, b: -a, "absf": lambda a, b: abs(a)}
    unsigned = np.dtype(f"<u{element.bitwidth // 8}")
    python_path = 0
    for a_bits, b_bits in zip(bits, reversed(bits)):
        block = Block([])
        a, b = (block.append(make_splat(splat_value_of(x, unsigned, dtype), tile)).results[0]
                for x in (a_bits, b_bits))
        operands = [a] if op_name in ("negf", "absf") else [a, b]
        op = block.append(make_op(op_name, operands, [tile], {}))
        with np.errstate(all="ignore"):
            want = arithmetic[op_name](*(np.array(x, unsigned).view(dtype)[()]
                                         for x in (a_bits, b_bits)))
        got = fold(op)
        python_path += type(got) is float
        assert constant_bytes(got, element) == np.array(want).astype(dtype).tobytes(), \
            (name, op_name, hex(a_bits), hex(b_bits), got, want)
    assert python_path > len(bits) // 2  # most of them folded without NumPy


def splat_value_of(bits: int, unsigned, dtype):
    """The NumPy scalar with these bits (make_splat writes its bytes as they are)."""
    return np.array(bits, unsigned).view(dtype)[()]
