"""Comparing an emulated run's outputs with the interpreter's: integers and data movement
exactly, floats to a few ulps of the stored type scaled by the largest expected value
(approximate transcendentals and other summation orders). Shared by the emulated-run tests
and bench/emulator_sweep.py."""

from __future__ import annotations

import ml_dtypes
import numpy as np

# Relative precision allowed per stored float type (a few ulps).
RTOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 2e-6,
        np.dtype(np.float16): 2 ** -9, np.dtype(ml_dtypes.bfloat16): 2 ** -6}


def assert_close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Raise AssertionError (NumPy's message, prefixed by ``what``) when ``got`` differs
    from ``want`` beyond the precision allowed for its dtype."""
    if got.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    rtol = RTOL.get(got.dtype, 2 ** -2)  # f8 types: 2-3 mantissa bits
    g, w = got.astype(np.float64), want.astype(np.float64)
    scale = float(np.nanmax(np.abs(w))) if np.isfinite(w).any() else 1.0
    np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * scale, equal_nan=True,
                               err_msg=what)


def first_difference(got: list, want: list, what: str) -> str | None:
    """Compare the array arguments of two runs; the first mismatch's message, or None."""
    for i, (g, w) in enumerate(zip(got, want)):
        if isinstance(g, np.ndarray):
            try:
                assert_close(g, w, f"{what}, argument {i}")
            except AssertionError as e:
                return str(e).strip()
    return None
