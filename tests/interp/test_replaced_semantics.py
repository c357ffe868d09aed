"""nanotile.interp.replaced_semantics: other rules for some ops within a with block, the
registry as before afterwards (the hook the course labs install a student's rules with)."""

from __future__ import annotations

import numpy as np
import pytest

import nanotile
from nanotile.interp import replaced_semantics
from nanotile.interp.registry import SEMANTICS

KERNEL = """
cuda_tile.module @m {
  entry @k(%p: tile<ptr<i32>>, %a: tile<i32>, %b: tile<i32>) {
    %r = addi %a, %b : tile<i32>
    %t = store_ptr_tko weak %p, %r : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
"""


def _sum(a: int, b: int) -> int:
    out = np.zeros(1, np.int32)
    nanotile.run(nanotile.parse(KERNEL), "k", 1, out, np.int32(a), np.int32(b))
    return int(out[0])


def _subtract(tb, op, args):
    return [args[0] - args[1]]


def test_the_replacement_runs_inside_and_the_project_rule_after():
    assert _sum(5, 3) == 8
    original = SEMANTICS["addi"]
    with replaced_semantics({"addi": _subtract}):
        assert SEMANTICS["addi"] is _subtract
        assert _sum(5, 3) == 2
    assert SEMANTICS["addi"] is original
    assert _sum(5, 3) == 8


def test_restored_when_the_block_raises():
    original = SEMANTICS["addi"]
    with pytest.raises(RuntimeError), replaced_semantics({"addi": _subtract}):
        raise RuntimeError("stop")
    assert SEMANTICS["addi"] is original


def test_a_rule_for_an_op_without_one_is_removed_again():
    with replaced_semantics({"not_an_op": _subtract}):
        assert SEMANTICS["not_an_op"] is _subtract
    assert "not_an_op" not in SEMANTICS
