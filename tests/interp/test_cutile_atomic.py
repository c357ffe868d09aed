"""Atomics on cuTile's own atomic test kernel (corpus/cutile-tests): a masked raw-memory
atomic add must leave what cuTile's test suite expects from a GPU (even elements
incremented, odd ones untouched)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nanotile.interp import cutile_args, run

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "cutile-tests"


def test_offset_atomic_add_with_mask():
    path = CORPUS / "test_atomic__offset_atomic_add_with_mask__i32x1_i32x1_128.tileirbc"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    n = 512
    x = np.zeros(n, np.int32)
    update = np.arange(1, n + 1, dtype=np.int32)  # cuTile's test uses ones; any values do
    run(str(path), "offset_atomic_add_with_mask", n // 128, *cutile_args(x, update))
    np.testing.assert_array_equal(x[0::2], update[0::2])
    np.testing.assert_array_equal(x[1::2], 0)
