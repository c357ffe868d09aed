"""Splat constants are read and written without NumPy where the value is a plain Python
number (rewrite.splat_number, rewrite.make_splat), so that compiling a kernel imports
NumPy only when a pass does arithmetic on constants. The NumPy-free way must give the
bytes and numbers NumPy gives: checked here against NumPy on edge cases and random values
of every plain number type."""

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
FLOATS = {"f16": T.F16, "f32": T.F32, "f64": T.F64}


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
            2.0 ** -150, 1.0 + 2.0 ** -11, 1.0 + 2.0 ** -24, 1.0 + 3 * 2.0 ** -24]
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


@pytest.mark.parametrize("name", sorted(INTS) + sorted(FLOATS) + ["bf16"])
def test_splat_number_is_the_number_numpy_reads(name):
    element = {**INTS, **FLOATS, "bf16": T.BF16}[name]
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
