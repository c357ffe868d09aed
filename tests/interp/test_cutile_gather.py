"""Gather/scatter views on cuTile's own ``load_advanced`` test kernels (corpus/cutile-tests):
the results must be those cuTile's test suite expects from a GPU. They pin down the view's
meaning: the sparse dimension is indexed by a tile of row numbers, the other dimension by
the element where the slice starts, and out-of-bounds rows are padded."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nanotile.interp import cutile_args, run

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "cutile-tests"
PREFIX = "test_load_store_advanced_indexing__"


def launch(name: str, *args) -> None:
    path = CORPUS / f"{PREFIX}{name}.tileirbc"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    from nanotile.loader import load_file

    module = load_file(str(path))
    run(module, module.entries()[0].attributes["sym_name"], 1, *cutile_args(*args))


def test_load_store_rows():
    x = np.arange(32, dtype=np.int32).reshape(8, 4)
    y = np.zeros((8, 4), np.int32)
    launch("load_store_advanced_rows__i32x2_i32x2_8_4", x, y)
    np.testing.assert_array_equal(y, x)


def test_constant_column_start():
    x = np.arange(64, dtype=np.int32).reshape(8, 8)
    y = np.zeros((8, 4), np.int32)
    launch("load_advanced_const_col_start__i32x2_i32x2_8_4", x, y)
    np.testing.assert_array_equal(y, x[:, 2:6])


@pytest.mark.parametrize("col_start", [0, 1, 2])
def test_dynamic_column_start(col_start):
    x = np.arange(32, dtype=np.int32).reshape(8, 4)
    y = np.zeros((8, 2), np.int32)
    launch("load_advanced_dynamic_col__i32x2_i32x2_8_2_si32", x, y, np.int32(col_start))
    np.testing.assert_array_equal(y, x[:, col_start:col_start + 2])


def test_repeated_sparse_rows():
    x = np.arange(32, dtype=np.int32).reshape(8, 4)
    y = np.zeros((4, 4), np.int32)
    launch("test_load_repeated_sparse_correct.kernel__i32x2_i32x2_4_4", x, y)
    np.testing.assert_array_equal(y, x[[0, 0, 4, 6]])


def test_sparse_rows_out_of_bounds_are_zero_padded():
    x = np.arange(32, dtype=np.int32).reshape(8, 4)
    y = np.full((4, 4), -1, np.int32)
    launch("test_load_sparse_partial_oob_zero_padding.kernel__i32x2_i32x2_4_4", x, y)
    want = np.zeros((4, 4), np.int32)
    want[:2] = x[6:8]
    np.testing.assert_array_equal(y, want)
