"""make_inputs gives integer scalars values that keep the kernel's ``assume div_by``
promises: the compiled code trusts them (vector accesses through a stride), so a value
that breaks one faults or reads the wrong elements in the emulator."""

from __future__ import annotations

import io

import numpy as np

from nanotile.interp import run
from nanotile.ir.parser import parse_text
from nanotile.passes.semantics import make_inputs, scalar_divisors

# %s: div_by<4>, then div_by<6> on the assumed value (a chain: lcm 12); %t: div_by<16>;
# %u: no promise. The kernel stores s + t + u, so a run checks the promises (debug).
KERNEL = """cuda_tile.module @m {
  entry @k(%s: tile<i32>, %t: tile<i32>, %u: tile<i32>, %p: tile<ptr<i32>>) {
    %s4 = assume div_by<4>, %s : tile<i32>
    %s12 = assume div_by<6>, %s4 : tile<i32>
    %t16 = assume div_by<16>, %t : tile<i32>
    %st = addi %s12, %t16 : tile<i32>
    %stu = addi %st, %u : tile<i32>
    %w = store_ptr_tko weak %p, %stu : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
"""


def test_scalar_divisors_follow_assume_chains():
    entry = parse_text(KERNEL, "k.mlir").entries()[0]
    s, t, _, _ = entry.regions[0].block.arguments
    assert scalar_divisors(entry) == {s: 12, t: 16}


def test_make_inputs_rounds_scalars_up_to_their_divisors():
    module = parse_text(KERNEL, "k.mlir")
    grid, args = make_inputs(module.entries()[0], np.random.default_rng(0))
    s, t, u, p = args
    assert s % 12 == 0 and t % 16 == 0 and 0 < s <= 12 and 0 < t <= 16
    assert u == 3  # no promise: the usual small value
    run(module, "k", grid, *args, debug=True, out=io.StringIO())  # the assumes hold
    assert p[0] == s + t + u

