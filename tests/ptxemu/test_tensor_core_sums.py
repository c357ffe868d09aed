"""The tensor cores' sums (nanotile.ptxemu.tensor_core_sums) against an H200's.

tests/ptxemu/data/tensor_core_sums.npz holds results an H200 computed (written by
bench/tensor_core_fixture.py from a bench/gpu_check.py --mma-rounding run): operands of
widely different exponents, mostly outputs where the device and the IEEE sum differ. The
model reproduces every bit of them; the emulator, running nanotile's compiled mma.sync and
wgmma kernels, reproduces the whole tiles kept."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from nanotile.ptxemu.tensor_core_sums import fp8_mma_sync, tensor_core_dot

FIXTURE = Path(__file__).resolve().parent / "data" / "tensor_core_sums.npz"
TYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "tf32": np.float32,
         "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}
TILE_IR_TYPES = {"f16": "f16", "bf16": "bf16", "tf32": "tf32", "e4m3": "f8E4M3FN",
                 "e5m2": "f8E5M2"}
STEP = {"f16": 16, "bf16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32}  # one instruction's K


def _fixture():
    return np.load(FIXTURE)


def _cases() -> list[str]:
    return sorted(key[:-len("/kind")] for key in _fixture().files if key.endswith("/kind"))


def _values(bits: np.ndarray, kind: str) -> np.ndarray:
    return bits.view(TYPES[kind]).astype(np.float64)


def _chain(a: np.ndarray, b: np.ndarray, c: np.ndarray, kind: str, instruction: str):
    """D = C + a . b as a chain of instructions, one K step each (a, b: (outputs, K))."""
    accumulator = c.astype(np.float64)
    for k in range(0, a.shape[-1], STEP[kind]):
        part_a, part_b = a[..., k:k + STEP[kind]], b[..., k:k + STEP[kind]]
        if instruction == "mma.sync" and kind in ("e4m3", "e5m2"):
            result = fp8_mma_sync(part_a, part_b, accumulator)
        else:
            result = tensor_core_dot(part_a, part_b, accumulator, kind)
        accumulator = result.astype(np.float64)
    return accumulator.astype(np.float32)


@pytest.mark.parametrize("case", _cases())
def test_sums_are_the_devices(case):
    data = _fixture()
    kind, instruction = str(data[f"{case}/kind"]).split()
    a, b = _values(data[f"{case}/a"], kind), _values(data[f"{case}/b"], kind)
    got = _chain(a, b, data[f"{case}/c"], kind, instruction)
    np.testing.assert_array_equal(got.view(np.uint32), data[f"{case}/d"].view(np.uint32))


def test_the_fixture_is_not_the_ieee_sum():
    """Most kept outputs are where the device differs from the IEEE sum (exact, rounded
    to nearest), so a model that only added exactly would fail the test above."""
    data = _fixture()
    differ = total = 0
    for case in _cases():
        kind, _ = str(data[f"{case}/kind"]).split()
        a, b = _values(data[f"{case}/a"], kind), _values(data[f"{case}/b"], kind)
        ieee = ((a * b).sum(axis=-1) + data[f"{case}/c"]).astype(np.float32)
        differ += int(np.count_nonzero(ieee.view(np.uint32) != data[f"{case}/d"].view(np.uint32)))
        total += a.shape[0]
    assert differ > total // 2, (differ, total)


def _dot(pairs, c: float, kind: str, k: int) -> np.float32:
    """tensor_core_dot of the products of ``pairs`` (zeros up to K = k) plus c."""
    a, b = np.zeros(k), np.zeros(k)
    for i, (x, y) in enumerate(pairs):
        a[i], b[i] = x, y
    return tensor_core_dot(a, b, np.float64(c), kind)


def test_sums_truncate_below_the_largest_term():
    """f16: 25 bits kept below the largest exponent, the sum rounded toward zero (IEEE:
    to nearest); FP8: 13 bits."""
    # 1 + 0.75 ulp(1): the IEEE f32 sum rounds up, the tensor cores truncate
    assert _dot([(1.0, 1.0), (2.0 ** -12, 1.5 * 2.0 ** -12)], 0.0, "f16", 16) == 1.0
    # 2^-26 is below 2^(0 - 25): lost, where the IEEE sum keeps it after cancelling
    assert _dot([(1.0, 1.0), (2.0 ** -13, 2.0 ** -13)], -1.0, "f16", 16) == 0.0
    assert _dot([(1.0, 1.0), (2.0 ** -12, 2.0 ** -13)], -1.0, "f16", 16) == 2.0 ** -25
    # e4m3: 16 sets E = 4, so 2^-12 is below 2^(4 - 13); 2^-9 is kept
    assert _dot([(4.0, 4.0), (2.0 ** -6, 2.0 ** -6)], -16.0, "e4m3", 32) == 0.0
    assert _dot([(4.0, 4.0), (2.0 ** -3, 2.0 ** -6)], -16.0, "e4m3", 32) == 2.0 ** -9


def test_operands_that_are_not_finite_give_the_ieee_sum():
    a = np.array([np.inf, 1.0, 0, 0, 0, 0, 0, 0])
    b = np.array([1.0, 1.0, 0, 0, 0, 0, 0, 0])
    assert tensor_core_dot(a, b, np.float64(1.0), "tf32") == np.inf
    a[0] = np.nan
    assert np.isnan(tensor_core_dot(a, b, np.float64(1.0), "tf32"))
    assert tensor_core_dot(np.zeros(16), np.zeros(16), np.float64(0.0), "f16") == 0.0


@pytest.mark.parametrize("case", ["rounding_f16_m64k16", "rounding_f8E4M3FN_m64k32",
                                  "rounding_f8E5M2_m32k32"])
def test_emulated_kernel_is_the_device(case):
    """nanotile's mmaf kernel for sm_90 (wgmma on 64 x 64, mma.sync on 32 x 32) in the
    emulator: every bit of the tile the H200 computed from the same operands."""
    from nanotile.ir.parser import parse_text
    from nanotile.ptxemu import run_ptx
    from nanotile.targets.compile import compile_to_ptx

    from tests.targets.test_mma import mma_kernel

    data = _fixture()
    kind, _ = str(data[f"{case}/kind"]).split()
    a = data[f"{case}/full_a"].view(TYPES[kind])
    b = data[f"{case}/full_b"].view(TYPES[kind])
    c = data[f"{case}/full_c"]
    m, k = a.shape
    ptx = compile_to_ptx(parse_text(mma_kernel(0, m, m, k, TILE_IR_TYPES[kind], "f32"), "<k>"),
                         "sm_90")
    out = np.zeros((m, m), np.float32)
    run_ptx(ptx, "k", grid=(1,), args=[a, b, c, out])
    np.testing.assert_array_equal(out.view(np.uint32), data[f"{case}/full_d"].view(np.uint32))
