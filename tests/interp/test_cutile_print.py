"""print_tko on cuTile's own print test kernels (../shared/corpus/cutile-tests): the lines
must be those cuTile's test suite expects from a GPU, e.g. ``tile[1]:[8.00000, ...]`` for
``printf("tile[%d]:%.5f\\n", bid, tile)`` over ``arange(16)`` with 8-element tiles."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from nanotile.interp import cutile_args, run
from nanotile.interp.dtypes import storage_dtype
from nanotile.loader import load_file

CORPUS = Path(__file__).resolve().parents[2] / ".." / "shared" / "corpus" / "cutile-tests"


def _lines(name: str) -> list[str]:
    path = CORPUS / f"{name}.tileirbc"
    if not path.exists():
        pytest.skip(f"corpus file missing: {path}")
    module = load_file(str(path))
    entry = module.entries()[0]
    pointee = entry.regions[0].block.arguments[0].type.element.pointee
    x = np.arange(16).astype(np.float32).astype(storage_dtype(pointee))
    buf = io.StringIO()
    run(module, entry.attributes["sym_name"], 2, *cutile_args(x), out=buf)
    return buf.getvalue().splitlines()


def _fmt(values, spec: str) -> str:
    return "[" + ", ".join(format(v, spec) for v in values) + "]"


@pytest.mark.parametrize("name,spec", [
    ("test_print__kernel_printf__bf16x1_8", ".5f"), ("test_print__kernel_print__f32x1_8", ".5f"),
    ("test_print__kernel_printf__i8x1_8", "d"), ("test_print__kernel_print__i64x1_8", "d")])
def test_print_one_tile(name, spec):
    want = [f"tile[{i}]:{_fmt(range(8 * i, 8 * i + 8), spec)}" for i in range(2)]
    assert _lines(name) == want


def test_print_two_tiles_and_an_expression():
    want = [f"tile[{i}]: a={_fmt(np.arange(8 * i, 8 * i + 8.0), '.6f')} "
            f"b={_fmt(2 * np.arange(8 * i, 8 * i + 8.0), '.6f')}" for i in range(2)]
    assert _lines("test_print__kernel_print_two_vars_with_expr__f32x1_8.035284") == want
