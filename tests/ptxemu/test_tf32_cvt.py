"""cvt.{rna,rn,rz}{.satfinite}.tf32.f32 as the PTX ISA defines it: the f32 rounded to tf32's
10 mantissa bits (nearest-away, nearest-even, toward zero), kept in f32 format with the 13
low bits zero; .satfinite turns an overflow into the largest finite tf32."""

from __future__ import annotations

import numpy as np
import pytest

from tests.ptxemu import ptxkit
from tests.ptxemu.ptxkit import elementwise

U = 2.0 ** -10  # one tf32 ulp at 1.0
VALUES = np.array([1 + U / 2, 1 + 3 * U / 2, -(1 + U / 2), 1 + U / 2 + 2 ** -20, 1 + U / 4,
                   -(1 + 3 * U / 4), 0.0, 2.0 ** -130], np.float32)
EXPECT = {
    "rna": [1 + U, 1 + 2 * U, -(1 + U), 1 + U, 1.0, -(1 + U), 0.0, 2.0 ** -130],
    "rn": [1.0, 1 + 2 * U, -1.0, 1 + U, 1.0, -(1 + U), 0.0, 2.0 ** -130],
    "rz": [1.0, 1 + U, -1.0, 1.0, 1.0, -1.0, 0.0, 2.0 ** -130],
}


def _cvt(mode: str, x: np.ndarray) -> np.ndarray:
    got = elementwise(f"cvt.{mode}.tf32.f32 {{d}}, {{a}};", ["f32"], "b32", x)
    return got.view(np.float32)


@pytest.mark.parametrize("mode", ["rna", "rn", "rz"])
def test_rounding_modes(mode: str) -> None:
    got = _cvt(mode, VALUES)
    np.testing.assert_array_equal(got, np.array(EXPECT[mode], np.float32))
    assert not (got.view(np.uint32) & 0x1FFF).any()


def test_random_values_round_to_nearest_and_keep_specials(monkeypatch) -> None:
    x = np.random.default_rng(5).standard_normal(256).astype(np.float32)
    got = _cvt("rn", x).astype(np.float64)
    # the nearest value with 10 mantissa bits: within half a tf32 ulp of x
    ulp = np.exp2(np.floor(np.log2(np.abs(x.astype(np.float64)))) - 10)
    assert (np.abs(got - x) <= ulp / 2).all()
    special = np.array([np.inf, -np.inf, np.nan, np.finfo(np.float32).max], np.float32)
    got = _cvt("rna", special)
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2]) and got[3] == np.inf
    monkeypatch.setattr(ptxkit, "HEADER", ptxkit.HEADER.replace("8.0", "8.1"))  # .satfinite
    sat = elementwise("cvt.rna.satfinite.tf32.f32 {d}, {a};", ["f32"], "b32", special)
    assert list(sat[[0, 1, 3]]) == [0x7F7FE000, 0xFF7FE000, 0x7F7FE000]
    assert np.isnan(sat[2:3].view(np.float32)).all()


@pytest.mark.parametrize("mode, name", [("rna", "nearest_away"), ("rn", "nearest_even"),
                                        ("rz", "zero")])
def test_interpreter_rounds_like_the_isa(mode: str, name: str) -> None:
    from nanotile.interp.dtypes import round_tf32

    np.testing.assert_array_equal(round_tf32(VALUES, name), np.array(EXPECT[mode], np.float32))
