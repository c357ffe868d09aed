"""assign-layouts{strategy=eqsat}: the layout e-graph and its extraction.

- a kernel where greedy converts (two f16 loads read by a compare whose bools are stored
  one per thread) and eqsat does not, and the emulator agrees with the interpreter on
  eqsat's PTX for both targets;
- strategy=greedy leaves the layout e-graph alone (and gives greedy's conversions);
- a user's layout rule file that forbids a layout changes the choice, and --dump-egraph
  writes the e-graph, its program and the choice;
- the layout-candidates ruleset derives candidates from seeds, Back and Fwd facts;
- the cost model prices conversions by their route (a shuffle's lanes and compares too),
  accesses by their cache lines, and a column's index arithmetic once per vector;
- kernels of cutile-tests where greedy converts and the model used to keep it (its
  prices there ran against the PTX) convert nothing, with fewer instructions;
- a missing layout rule file is a one-line error;
- the extraction's shortcuts (two Pricers for three models, the most_saved bound) price
  what the models do, and the search's (may_save) make the moves of asking every slot;
- the closure asks each edge of each layout once and finds what asking all again finds;
- without a user's rules egglog's candidates are counted, and equal the closure's.
"""

from __future__ import annotations

import copy
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import nanotile
from nanotile.compare import first_difference
from nanotile.ir.layouts import blocked, default_blocked
from nanotile.ir.parser import parse_text
from nanotile.passes.manager import PipelineRun, RunOptions
from nanotile.passes.registry import parse_pipeline
from nanotile.passes.semantics import make_inputs
from nanotile.targets.ptx.layout_costs import (LayoutCostModel, cache_lines, layout_costs_for,
                                               shared_accesses)

ROOT = Path(__file__).resolve().parents[3]

COMPARE = """
cuda_tile.module @tests {
  entry @compare(%p: tile<ptr<f16>>, %q: tile<ptr<f16>>, %r: tile<ptr<i1>>) {
    %ap = assume div_by<16>, %p : tile<ptr<f16>>
    %aq = assume div_by<16>, %q : tile<ptr<f16>>
    %i = iota : tile<512xi32>
    %b0 = reshape %ap : tile<ptr<f16>> -> tile<1xptr<f16>>
    %b = broadcast %b0 : tile<1xptr<f16>> -> tile<512xptr<f16>>
    %a = offset %b, %i : tile<512xptr<f16>>, tile<512xi32> -> tile<512xptr<f16>>
    %x, %t = load_ptr_tko weak %a : tile<512xptr<f16>> -> tile<512xf16>, token
    %c0 = reshape %aq : tile<ptr<f16>> -> tile<1xptr<f16>>
    %c = broadcast %c0 : tile<1xptr<f16>> -> tile<512xptr<f16>>
    %d = offset %c, %i : tile<512xptr<f16>>, tile<512xi32> -> tile<512xptr<f16>>
    %y, %u = load_ptr_tko weak %d : tile<512xptr<f16>> -> tile<512xf16>, token
    %gt = cmpf greater_than ordered %x, %y : tile<512xf16> -> tile<512xi1>
    %e0 = reshape %r : tile<ptr<i1>> -> tile<1xptr<i1>>
    %e = broadcast %e0 : tile<1xptr<i1>> -> tile<512xptr<i1>>
    %f = offset %e, %i : tile<512xptr<i1>>, tile<512xi32> -> tile<512xptr<i1>>
    %w = store_ptr_tko weak %f, %gt : tile<512xptr<i1>>, tile<512xi1> -> token
    return
  }
}
"""
# greedy loads four f16 per thread (one vector access) and stores the
# bools one per register (their pointer has no div_by fact): it converts both loaded
# tiles and the iota the two share; eqsat stores from the loads' layout instead
ONE_PER_THREAD = "#blocked<per_thread=[1], lanes=[32], warps=[4], order=[0]>"
FOUR_PER_THREAD = "#blocked<per_thread=[4], lanes=[32], warps=[4], order=[0]>"
FORBID = f"""; forbid-four: no tile four elements per thread (the loads' own layout too)
(ruleset forbid-four)

; that layout, whatever slot takes it, is not a candidate
(rule ((LayoutText l "{FOUR_PER_THREAD}")) ((ForbidLayout l)) :ruleset forbid-four)
"""

DEARER = f"""; dearer-four: a tile four elements per thread costs 1000 more (cmpf's 2000)
(ruleset dearer-four)

; that layout, whatever slot takes it, costs more
(rule ((LayoutText l "{FOUR_PER_THREAD}")) ((LayoutCost l 1000)) :ruleset dearer-four)

; and more again for the compare
(rule ((LayoutText l "{FOUR_PER_THREAD}") (SlotText s "cmpf@15"))
      ((Cost s l 1000))
      :ruleset dearer-four)
"""


# a loop's accumulator (the sum of three rows of 512): greedy carries it one element per
# thread (the i1 store's wish) and converts each iteration's load (four per thread, one
# ld.global.v4) to it
ACCUMULATE = """
cuda_tile.module @tests {
  entry @accumulate(%p: tile<ptr<f32>>, %r: tile<ptr<i1>>) {
    %ap = assume div_by<16>, %p : tile<ptr<f32>>
    %i = iota : tile<512xi32>
    %b0 = reshape %ap : tile<ptr<f32>> -> tile<1xptr<f32>>
    %b = broadcast %b0 : tile<1xptr<f32>> -> tile<512xptr<f32>>
    %zero = constant <f32: 0.0> : tile<512xf32>
    %lo = constant <i32: 0> : tile<i32>
    %hi = constant <i32: 3> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %width = constant <i32: 512> : tile<512xi32>
    %acc = for %k in (%lo to %hi, step %one) : tile<i32>
        iter_values(%sum = %zero) -> (tile<512xf32>) {
      %k1 = reshape %k : tile<i32> -> tile<1xi32>
      %kb = broadcast %k1 : tile<1xi32> -> tile<512xi32>
      %row = muli %kb, %width : tile<512xi32>
      %idx = addi %row, %i : tile<512xi32>
      %a = offset %b, %idx : tile<512xptr<f32>>, tile<512xi32> -> tile<512xptr<f32>>
      %x, %t = load_ptr_tko weak %a : tile<512xptr<f32>> -> tile<512xf32>, token
      %next = addf %sum, %x : tile<512xf32>
      continue %next : tile<512xf32>
    }
    %gt = cmpf greater_than ordered %acc, %zero : tile<512xf32> -> tile<512xi1>
    %e0 = reshape %r : tile<ptr<i1>> -> tile<1xptr<i1>>
    %e = broadcast %e0 : tile<1xptr<i1>> -> tile<512xptr<i1>>
    %f = offset %e, %i : tile<512xptr<i1>>, tile<512xi32> -> tile<512xptr<i1>>
    %w = store_ptr_tko weak %f, %gt : tile<512xptr<i1>>, tile<512xi1> -> token
    return
  }
}
"""
DEARER_ADDF = f"""; dearer-addf: the loop's accumulation four per thread costs 1000 more
(ruleset dearer-addf)

; the addf whose result the loop's continue carries, in that layout
(rule ((LayoutText l "{FOUR_PER_THREAD}") (SlotText s "addf@21"))
      ((Cost s l 1000))
      :ruleset dearer-addf)
"""


def laid_out_module(source: str, strategy: str, rules: str = "", dump: str = "",
                    gpu: str = "sm_90"):
    """``source`` after assign-layouts with these options."""
    module = parse_text(source, "kernel.mlir")
    options = f"gpu={gpu} strategy={strategy}" + (f" rules={rules}" if rules else "") + \
        (f" dump_egraph={dump}" if dump else "")
    steps = parse_pipeline(f"assume-to-facts,lower-views,resolve-tokens,"
                           f"assign-layouts{{{options}}}")
    PipelineRun(RunOptions(verify=True), io.StringIO()).run(module, steps)
    return module


def laid_out(strategy: str, rules: str = "", dump: str = "", gpu: str = "sm_90") -> str:
    """@compare after assign-layouts with these options, as text."""
    from nanotile.ir.printer import print_module

    return print_module(laid_out_module(COMPARE, strategy, rules, dump, gpu))


def test_greedy_converts_where_eqsat_does_not():
    greedy, eqsat = laid_out("greedy"), laid_out("eqsat")
    assert greedy.count("convert_layout") == 3  # both loads and the shared iota
    assert eqsat.count("convert_layout") == 0
    assert f"-> tile<512xi1, {FOUR_PER_THREAD}>" in eqsat  # the compare, for the store


def test_greedy_never_builds_the_layout_egraph(monkeypatch):
    from nanotile.targets.ptx import layout_choice

    def refuse(*args, **kwargs):
        raise AssertionError("strategy=greedy built a layout e-graph")

    monkeypatch.setattr(layout_choice, "choose_layouts", refuse)
    assert laid_out("greedy").count("convert_layout") == 3
    with pytest.raises(AssertionError, match="built a layout e-graph"):
        laid_out("eqsat")


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_eqsat_choice_matches_the_interpreter_in_the_emulator(gpu):
    from nanotile.ptxemu import run_ptx
    from nanotile.targets.compile import compile_to_ptx

    module = parse_text(COMPARE, "compare.mlir")
    (entry,) = module.entries()
    grid, args = make_inputs(entry, np.random.default_rng(3))
    ptx = compile_to_ptx(copy.deepcopy(module), gpu)  # the default pipeline: eqsat
    assert "st.shared" not in ptx  # no conversion through shared memory
    got, want = copy.deepcopy(args), copy.deepcopy(args)
    run_ptx(ptx, "compare", grid=(grid,) if isinstance(grid, int) else tuple(grid),
            args=got)
    nanotile.run(module, "compare", grid, *want)
    assert first_difference(got, want, gpu) is None
    assert np.any(want[2]) and not np.all(want[2])  # the kernel wrote both values


def test_a_rule_file_that_forbids_a_layout_changes_the_choice(tmp_path):
    rules = tmp_path / "forbid.egg"
    rules.write_text(FORBID)
    dump = tmp_path / "dump"
    forbidden = laid_out("eqsat", str(rules), str(dump))
    assert FOUR_PER_THREAD not in forbidden  # not even the loads' (greedy's) layout
    assert FOUR_PER_THREAD in laid_out("eqsat")
    choice = (dump / "layouts-compare.choice.txt").read_text()
    assert "load_ptr_tko" in choice and "(greedy: " + FOUR_PER_THREAD in choice
    assert "(ruleset forbid-four)" in (dump / "layouts-compare.egg").read_text()
    assert (dump / "layouts-compare.json").exists() and (dump / "layouts-compare.dot").exists()


def test_a_rule_file_that_changes_a_cost_changes_the_choice(tmp_path):
    rules = tmp_path / "dearer.egg"
    rules.write_text(DEARER)
    plain, dearer = tmp_path / "plain", tmp_path / "dearer"
    assert FOUR_PER_THREAD in laid_out("eqsat", dump=str(plain))
    assert FOUR_PER_THREAD not in laid_out("eqsat", str(rules), str(dearer))
    before = (plain / "layouts-compare.choice.txt").read_text()
    after = (dearer / "layouts-compare.choice.txt").read_text()
    def greedy_cost(choice: str) -> int:
        return int(choice.split("(greedy ")[1].split(")")[0])

    chosen = int(before.split("; model cost ")[1].split(" ")[0])
    assert chosen < greedy_cost(before)
    # greedy's iota, loads and their broadcasts and offsets pay 1000 each (its cmpf is in
    # the store's layout)
    assert greedy_cost(after) == greedy_cost(before) + 7000
    assert f"cmpf@15: {FOUR_PER_THREAD}" in before
    assert f"cmpf@15: {FOUR_PER_THREAD}" not in after and f"cmpf@15: {ONE_PER_THREAD}" in after


TRANSPOSE = ROOT / ".." / "shared" / "corpus" / "cutile" / "transpose.tileirbc"


@pytest.mark.skipif(not TRANSPOSE.exists(), reason="../shared/corpus/cutile not found")
def test_no_egraph_where_the_closure_keeps_greedys(monkeypatch):
    """transpose pays a conversion greedy's way, and no candidate saves it: egglog is
    not asked; @compare's candidates do save: it is."""
    from nanotile.targets.compile import compile_to_ptx
    from nanotile.targets.ptx import layout_choice

    def refuse(*args, **kwargs):
        raise AssertionError("saturated")

    monkeypatch.setattr(layout_choice, "saturate", refuse)
    stats = io.StringIO()
    settings = layout_choice.ChoiceSettings("sm_90", stats=True, out=stats)
    monkeypatch.setattr("nanotile.targets.ptx.assign_layouts.AssignLayouts.choice",
                        lambda self: settings)
    compile_to_ptx(nanotile.load(str(TRANSPOSE)), "sm_90")
    assert "assign-layouts @transpose: 0 layout e-nodes" in stats.getvalue()
    with pytest.raises(AssertionError, match="saturated"):
        laid_out("eqsat")


def carried_layouts(module) -> set[str]:
    """The layouts of @accumulate's carried value: the for's block argument and result,
    its initial value and its continue's operand."""
    (loop,) = [op for op in module.entries()[0].walk() if op.name == "for"]
    body = loop.regions[0].blocks[0]
    carried = [body.arguments[1], loop.results[0], loop.operands[3],
               body.ops[-1].operands[0]]
    return {str(v.type.layout) for v in carried}


def test_a_loop_carried_value_is_chosen_with_its_yield(tmp_path):
    assert carried_layouts(laid_out_module(ACCUMULATE, "greedy")) == {ONE_PER_THREAD}
    assert carried_layouts(laid_out_module(ACCUMULATE, "eqsat")) == {FOUR_PER_THREAD}
    rules = tmp_path / "dearer.egg"
    rules.write_text(DEARER_ADDF)
    # the continue's operand dearer four per thread: the block argument follows it
    assert carried_layouts(laid_out_module(ACCUMULATE, "eqsat", str(rules))) == \
        {ONE_PER_THREAD}


def greedy_ptx(module, gpu: str) -> str:
    """The PTX of the default pipeline with assign-layouts{strategy=greedy}."""
    import dataclasses

    from nanotile.passes.base import PassContext
    from nanotile.passes.pipelines import default_pipeline

    ctx = PassContext.from_module(module)
    for step in parse_pipeline(default_pipeline(gpu)):
        if step.name == "assign-layouts":
            step = dataclasses.replace(step, strategy="greedy")
        step.apply(module, ctx)
    return module.ptx.render()


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_a_loop_carried_choice_matches_the_interpreter_in_the_emulator(gpu):
    from nanotile.ptxemu import run_ptx
    from nanotile.targets.compile import compile_to_ptx

    module = parse_text(ACCUMULATE, "accumulate.mlir")
    rows = np.random.default_rng(5).standard_normal(3 * 512).astype(np.float32)
    grid, args = (1, 1, 1), [rows, np.zeros(512, dtype=np.bool_)]
    ptx = compile_to_ptx(copy.deepcopy(module), gpu)  # the default pipeline: eqsat
    greedy = greedy_ptx(copy.deepcopy(module), gpu)
    assert "st.shared" in greedy and "st.shared" not in ptx  # no conversion in the loop
    assert "ld.global.v4.f32" in ptx and "ld.global.v4.f32" not in greedy
    got, want = copy.deepcopy(args), copy.deepcopy(args)
    run_ptx(ptx, "accumulate", grid=grid, args=got)
    nanotile.run(module, "accumulate", grid, *want)
    assert first_difference(got, want, gpu) is None
    assert np.any(want[1]) and not np.all(want[1])


# a reduction over the middle dimension, its 16x4 result stored with strides known at
# run time only: the store's address arithmetic varies along the rows alone for half of
# its ops (the row index, its mask and stride), which registers along the columns share
SUM_MIDDLE = """
cuda_tile.module @tests {
  entry @sum_middle(%src: tile<ptr<f32>>, %n: tile<i32>, %s0: tile<i32>, %s1: tile<i32>,
                    %dst: tile<ptr<f32>>, %s2: tile<i32>) {
    %token = make_token : token
    %s = assume div_by<16>, %src : tile<ptr<f32>>
    %d = assume div_by<16>, %dst : tile<ptr<f32>>
    %rows = assume bounded<0, ?>, %n : tile<i32>
    %in = make_tensor_view %s, shape = [%rows, 4, 4], strides = [%s0, %s1, 1]
        : tile<i32> -> tensor_view<?x4x4xf32, strides=[?,?,1]>
    %out = make_tensor_view %d, shape = [%rows, 4], strides = [%s2, 1]
        : tile<i32> -> tensor_view<?x4xf32, strides=[?,1]>
    %pin = make_partition_view %in
        : partition_view<tile=(16x4x4), tensor_view<?x4x4xf32, strides=[?,?,1]>>
    %pout = make_partition_view %out
        : partition_view<tile=(16x4), tensor_view<?x4xf32, strides=[?,1]>>
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %x, %t = load_view_tko weak %pin[%bx, %c0, %c0] token = %token
        : partition_view<tile=(16x4x4), tensor_view<?x4x4xf32, strides=[?,?,1]>>, tile<i32>
        -> tile<16x4x4xf32>, token
    %r = reduce %x dim=1 identities=[0.000000e+00 : f32]
        : tile<16x4x4xf32> -> tile<16x4xf32>
    (%a: tile<f32>, %b: tile<f32>) {
      %sum = addf %a, %b rounding<nearest_even> : tile<f32>
      yield %sum : tile<f32>
    }
    %w = store_view_tko weak %r, %pout[%bx, %c0] token = %t
        : tile<16x4xf32>, partition_view<tile=(16x4), tensor_view<?x4xf32, strides=[?,1]>>,
          tile<i32> -> token
    return
  }
}
"""


def count_instructions(ptx: str) -> int:
    return sum(1 for line in ptx.splitlines()
               if line.startswith("\t") and not line.lstrip().startswith(("//", ".")))


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_a_reduction_is_stored_where_it_lands(gpu):
    """Greedy converts the reduction's result to the store's coalesced layout through
    shared memory; the model, pricing what the rows' arithmetic costs once per row,
    stores it from the reduction's own layout: no conversion, fewer instructions, the
    interpreter's answer."""
    from nanotile.ptxemu import run_ptx
    from nanotile.targets.compile import compile_to_ptx

    module = parse_text(SUM_MIDDLE, "sum_middle.mlir")
    greedy = greedy_ptx(copy.deepcopy(module), gpu)
    ptx = compile_to_ptx(copy.deepcopy(module), gpu)
    assert "st.shared" in greedy and "st.shared" not in ptx
    assert count_instructions(ptx) < count_instructions(greedy)
    rows = 40  # the last of the three tile blocks is partly outside: its masks matter
    source = np.random.default_rng(7).standard_normal(rows * 16).astype(np.float32)
    args = [source, np.int32(rows), np.int32(16), np.int32(4),
            np.zeros(rows * 4, dtype=np.float32), np.int32(4)]
    got, want = copy.deepcopy(args), copy.deepcopy(args)
    run_ptx(ptx, "sum_middle", grid=(3, 1, 1), args=got)
    nanotile.run(module, "sum_middle", (3, 1, 1), *want)
    assert first_difference(got, want, gpu) is None
    assert np.allclose(want[4], source.reshape(rows, 4, 4).sum(axis=1).ravel(), rtol=1e-6)


# a running sum down the columns of a 16x32 tile: the scan leaves each thread four rows
# of a column, which greedy shuffles into the store's vectors of four
RUNNING_SUM = """
cuda_tile.module @tests {
  entry @running_sum(%src: tile<ptr<f32>>, %n: tile<i32>, %stride: tile<i32>,
                     %dst: tile<ptr<f32>>) {
    %token = make_token : token
    %s = assume div_by<16>, %src : tile<ptr<f32>>
    %d = assume div_by<16>, %dst : tile<ptr<f32>>
    %rows = assume bounded<0, ?>, %n : tile<i32>
    %st = assume div_by<4>, %stride : tile<i32>
    %in = make_tensor_view %s, shape = [%rows, 32], strides = [%st, 1]
        : tile<i32> -> tensor_view<?x32xf32, strides=[?,1]>
    %out = make_tensor_view %d, shape = [%rows, 32], strides = [%st, 1]
        : tile<i32> -> tensor_view<?x32xf32, strides=[?,1]>
    %pin = make_partition_view %in
        : partition_view<tile=(16x32), tensor_view<?x32xf32, strides=[?,1]>>
    %pout = make_partition_view %out
        : partition_view<tile=(16x32), tensor_view<?x32xf32, strides=[?,1]>>
    %bx, %by, %bz = get_tile_block_id : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %x, %t = load_view_tko weak %pin[%bx, %c0] token = %token
        : partition_view<tile=(16x32), tensor_view<?x32xf32, strides=[?,1]>>, tile<i32>
        -> tile<16x32xf32>, token
    %r = scan %x dim=0 reverse=false identities=[0.000000e+00 : f32]
        : tile<16x32xf32> -> tile<16x32xf32>
    (%a: tile<f32>, %b: tile<f32>) {
      %sum = addf %a, %b rounding<nearest_even> : tile<f32>
      yield %sum : tile<f32>
    }
    %w = store_view_tko weak %r, %pout[%bx, %c0] token = %t
        : tile<16x32xf32>, partition_view<tile=(16x32), tensor_view<?x32xf32, strides=[?,1]>>,
          tile<i32> -> token
    return
  }
}
"""


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_a_scan_is_stored_where_it_lands(gpu):
    """The extraction weighs instructions with the model: four scalar stores from the
    scan's own layout issue fewer than greedy's shuffles and one vector store, and touch
    no more cache lines; the interpreter's answer."""
    from nanotile.ptxemu import run_ptx
    from nanotile.targets.compile import compile_to_ptx

    module = parse_text(RUNNING_SUM, "running_sum.mlir")
    greedy = greedy_ptx(copy.deepcopy(module), gpu)
    ptx = compile_to_ptx(copy.deepcopy(module), gpu)
    assert "shfl.sync" in greedy and "shfl.sync" not in ptx
    assert count_instructions(ptx) < count_instructions(greedy)
    rows = 40
    source = np.random.default_rng(9).standard_normal(rows * 32).astype(np.float32)
    args = [source, np.int32(rows), np.int32(32), np.zeros(rows * 32, dtype=np.float32)]
    got, want = copy.deepcopy(args), copy.deepcopy(args)
    run_ptx(ptx, "running_sum", grid=(3, 1, 1), args=got)
    nanotile.run(module, "running_sum", (3, 1, 1), *want)
    assert first_difference(got, want, gpu) is None
    blocks = source.reshape(rows, 32)
    expected = np.concatenate([np.cumsum(blocks[i:i + 16], axis=0) for i in range(0, rows, 16)])
    assert np.allclose(want[3], expected.ravel(), rtol=1e-5, atol=1e-5)


# four 16x128 strips summed in a loop, then down the columns and across: greedy carries
# the sum in the layout its constant gets (each thread a whole column of 16, so the
# first reduce folds in registers) and converts each strip it loads (four rows of four
# a thread) to it, a shared round trip per iteration; read in the loaded layout, the
# first reduce gathers the warps' partials once, after the loop
COLUMN_SUMS = """
cuda_tile.module @tests {
  entry @column_sums(%p: tile<ptr<f32>>, %r: tile<ptr<f32>>) {
    %ap = assume div_by<16>, %p : tile<ptr<f32>>
    %rows0 = iota : tile<16xi32>
    %rows1 = reshape %rows0 : tile<16xi32> -> tile<16x1xi32>
    %rows = broadcast %rows1 : tile<16x1xi32> -> tile<16x128xi32>
    %cols0 = iota : tile<128xi32>
    %cols1 = reshape %cols0 : tile<128xi32> -> tile<1x128xi32>
    %cols = broadcast %cols1 : tile<1x128xi32> -> tile<16x128xi32>
    %width = constant <i32: 128> : tile<16x128xi32>
    %b0 = reshape %ap : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %b = broadcast %b0 : tile<1x1xptr<f32>> -> tile<16x128xptr<f32>>
    %zero = constant <f32: 0.0> : tile<16x128xf32>
    %lo = constant <i32: 0> : tile<i32>
    %hi = constant <i32: 4> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %sixteen = constant <i32: 16> : tile<i32>
    %acc = for %k in (%lo to %hi, step %one) : tile<i32>
        iter_values(%sum = %zero) -> (tile<16x128xf32>) {
      %first = muli %k, %sixteen : tile<i32>
      %f1 = reshape %first : tile<i32> -> tile<1x1xi32>
      %fb = broadcast %f1 : tile<1x1xi32> -> tile<16x128xi32>
      %row = addi %fb, %rows : tile<16x128xi32>
      %start = muli %row, %width : tile<16x128xi32>
      %idx = addi %start, %cols : tile<16x128xi32>
      %a = offset %b, %idx : tile<16x128xptr<f32>>, tile<16x128xi32> -> tile<16x128xptr<f32>>
      %x, %t = load_ptr_tko weak %a : tile<16x128xptr<f32>> -> tile<16x128xf32>, token
      %next = addf %sum, %x : tile<16x128xf32>
      continue %next : tile<16x128xf32>
    }
    %col = reduce %acc dim=0 identities=[0.000000e+00 : f32] : tile<16x128xf32> -> tile<128xf32>
    (%lhs: tile<f32>, %rhs: tile<f32>) {
      %s = addf %lhs, %rhs : tile<f32>
      yield %s : tile<f32>
    }
    %all = reduce %col dim=0 identities=[0.000000e+00 : f32] : tile<128xf32> -> tile<f32>
    (%lhs2: tile<f32>, %rhs2: tile<f32>) {
      %s2 = addf %lhs2, %rhs2 : tile<f32>
      yield %s2 : tile<f32>
    }
    %w = store_ptr_tko weak %r, %all : tile<ptr<f32>>, tile<f32> -> token
    return
  }
}
"""


def loop_conversions(module) -> int:
    (loop,) = [op for op in module.entries()[0].walk() if op.name == "for"]
    return sum(op.name == "convert_layout" for op in loop.walk())


@pytest.mark.parametrize("gpu", ["sm_90", "sm_100"])
def test_a_reduced_accumulator_stays_where_it_is_loaded(gpu):
    """A reduce is a slot (its layout the one it reads in, its result the slice): the
    loop's sum takes the loaded layout, so nothing converts in the loop; the PTX is
    shorter, and the emulator gives the interpreter's sum."""
    from nanotile.ptxemu import run_ptx
    from nanotile.targets.compile import compile_to_ptx

    module = parse_text(COLUMN_SUMS, "column_sums.mlir")
    assert loop_conversions(laid_out_module(COLUMN_SUMS, "greedy", gpu=gpu)) == 1
    eqsat = laid_out_module(COLUMN_SUMS, "eqsat", gpu=gpu)
    assert loop_conversions(eqsat) == 0
    (loop,) = [op for op in eqsat.entries()[0].walk() if op.name == "for"]
    (load,) = [op for op in loop.walk() if op.name == "load_ptr_tko"]
    assert loop.results[0].type.layout == load.results[0].type.layout
    greedy = greedy_ptx(copy.deepcopy(module), gpu)
    ptx = compile_to_ptx(copy.deepcopy(module), gpu)
    assert count_instructions(ptx) < count_instructions(greedy)
    assert ptx.count("bar.sync") < greedy.count("bar.sync")
    # each thread's four partial column sums go to shared memory, and every warp's come
    # back, four at a time (the buffer columns fastest: lower-convert-layout)
    assert "st.shared.v4.f32" in ptx and "ld.shared.f32" not in ptx
    source = np.random.default_rng(11).standard_normal(64 * 128).astype(np.float32)
    args = [source, np.zeros(1, dtype=np.float32)]
    got, want = copy.deepcopy(args), copy.deepcopy(args)
    run_ptx(ptx, "column_sums", grid=(1, 1, 1), args=got)
    nanotile.run(module, "column_sums", (1, 1, 1), *want)
    assert first_difference(got, want, gpu) is None
    assert np.isclose(want[1][0], source.sum(dtype=np.float64), rtol=1e-4)


PERMUTED_ROWS = """
cuda_tile.module @tests {
  entry @rows() {
    %i = iota : tile<16xi32>
    %column = reshape %i : tile<16xi32> -> tile<16x1xi32>
    %rows = broadcast %column : tile<16x1xi32> -> tile<16x16xi32>
    %columns = permute %rows [1, 0] : tile<16x16xi32> -> tile<16x16xi32>
    return
  }
}
"""


def test_values_broadcast_along_a_dimension_cost_once_per_distinct_register():
    from nanotile.ir.layouts import LinearLayout
    from nanotile.targets.ptx.layout_extract import varying_bits, varying_dims

    (entry,) = laid_out_module(SUM_MIDDLE, "greedy").entries()
    memo: dict = {}
    found: dict[str, list] = {}
    for op in entry.walk():
        if op.results and len(getattr(op.results[0].type, "shape", ())) == 2:
            found.setdefault(op.name, []).append(varying_dims(op.results[0], memo))
    # the store's row index (the block's start plus an iota) and column index (an iota:
    # its tile index is the constant 0), broadcast; its addresses vary along both
    assert frozenset({0}) in found["addi"] and frozenset({1}) in found["broadcast"]
    assert frozenset({0, 1}) in found["offset"]
    (loaded,) = [op.results[0] for op in entry.walk() if op.name == "load_ptr_tko"]
    assert varying_bits(loaded, memo) == (1 << 8) - 1  # 16x4x4: every bit

    # a permute moves the dimension a value varies along: taken as every dimension
    (rows,) = parse_text(PERMUTED_ROWS, "rows.mlir").entries()
    by_name = {op.name: op.results[0] for op in rows.walk() if op.results}
    assert varying_dims(by_name["broadcast"], memo) == frozenset({0})
    assert varying_dims(by_name["permute"], memo) == frozenset({0, 1})

    # a chain longer than Python's recursion limit
    chain = ["cuda_tile.module @m {", "  entry @k() {", "    %i = iota : tile<64xi32>",
             "    %c = reshape %i : tile<64xi32> -> tile<64x1xi32>",
             "    %v0 = broadcast %c : tile<64x1xi32> -> tile<64x16xi32>"]
    chain += [f"    %v{k + 1} = addi %v{k}, %v{k} : tile<64x16xi32>" for k in range(3000)]
    (long,) = parse_text("\n".join(chain + ["    return", "  }", "}"]), "k.mlir").entries()
    *_, last = (op.results[0] for op in long.walk() if op.name == "addi")
    assert varying_dims(last, {}) == frozenset({0})

    # a 16x4 tile (flat index bits: 2 of columns, then 4 of rows)
    one_row = LinearLayout((16, 4), (), (1, 2, 4, 8, 16), (32,))
    two_rows = LinearLayout((16, 4), (4,), (1, 2, 8, 16, 32), ())  # rows r and r + 1
    columns, rows = 0b11, 0b111100
    model = LayoutCostModel()
    addi = model.value("addi", one_row, False)
    assert model.value("addi", two_rows, False) == 2 * addi
    assert model.value("addi", two_rows, False, rows) == 2 * addi
    assert model.value("addi", two_rows, False, columns) == addi  # the same column


def test_layout_candidates_ruleset():
    from nanotile.targets.ptx.layout_program import LayoutProgram

    program = LayoutProgram.shared([])
    with program.session():
        program.run_text("(Seed 0 10) (Back 0 10 1 11) (Fwd 1 11 2 12) (Back 2 12 3 13)",
                         "<test>")
        program.saturate_all()
        program.run_text("(check (Cand 0 10) (Cand 1 11) (Cand 2 12) (Cand 3 13))",
                         "<test>")
        program.run_text("(check (At 1 11))", "<test>")
        assert sorted(program.relation("Cand")) == [(0, 10), (1, 11), (2, 12), (3, 13)]
    with program.session():  # the session leaves nothing behind
        assert program.relation("Cand") == []


def test_facts_saturation_and_reads_in_one_call():
    from nanotile.targets.ptx.layout_program import LayoutProgram

    program = LayoutProgram.shared([])
    facts = "(Seed 0 10) (Back 0 10 1 11)"
    with program.session():  # no placements: Seed, Back and two Cand facts
        tables, sizes = program.saturate_and_read(facts, ["Cand", "Forbid"], True,
                                                  frozenset({"layout-placements"}))
        assert sorted(tables["Cand"]) == [(0, 10), (1, 11)] and tables["Forbid"] == []
        assert sum(sizes.values()) == 4 and sizes["Cand"] == 2
    with program.session():  # and with them, an At term per candidate
        assert sum(program.saturate_and_read(facts, [], True)[1].values()) == 6


def test_conversion_costs_follow_the_route():
    model = LayoutCostModel()
    wide, narrow = default_blocked((256,), 4, 4), default_blocked((256,), 4, 1)
    assert model.conversion(wide, wide, 4) == 0
    tile = default_blocked((64, 32), 4, 1)
    transposed = tile.permute((1, 0)).permute((1, 0))
    assert model.conversion(tile, transposed, 4) == 0  # the same layout
    crossing = model.conversion(wide, narrow, 4)  # elements change warps: shared memory
    # a store of wide's four contiguous registers (one vector), two loads of narrow's
    assert shared_accesses(wide, 4) == 1 and shared_accesses(narrow, 4) == 2
    assert crossing == 3 * model.shared_word_cost + 2 * model.barrier_cost
    assert model.shared_bytes(wide, narrow, 4) == 256 * 4


def test_accesses_pay_for_their_cache_lines():
    rows = default_blocked((64, 32), 4, 1)  # lanes along a row of 32 f32: one line
    columns = rows.permute((1, 0))           # lanes down a column: 32 lines
    assert cache_lines(rows, 1, 4) == 1 and cache_lines(columns, 1, 4) == 32
    halves = default_blocked((64, 32), 4, 2)  # two f32 a lane: rows of 16 lanes, two lines
    assert cache_lines(halves, 2, 4) == 2
    model = LayoutCostModel()
    assert model.memory(columns, 1, 4) > model.memory(rows, 1, 4)


def test_cache_lines_follow_the_dimension_contiguous_in_memory():
    """Of a column-major tile (contiguous along dimension 0), lanes down a column share
    lines and lanes along a row do not: the reverse of a row-major tile's."""
    rows = default_blocked((64, 32), 4, 1)
    columns = default_blocked((64, 32), 4, 1, fastest=0)
    assert cache_lines(columns, 1, 4, dim=0) == 1 and cache_lines(rows, 1, 4, dim=0) == 32
    model = LayoutCostModel()
    assert model.memory(columns, 4, 4, 0) < model.memory(rows, 4, 4, 0)
    vectors = default_blocked((64, 32), 4, 4, fastest=0)  # 4 rows per access
    assert model.memory(vectors, 4, 4, 0) < model.memory(columns, 4, 4, 0)


def test_index_arithmetic_is_shared_by_one_vector_at_most():
    """A thread's 16 contiguous registers are four vector accesses of four, each with its
    own mask and address: index arithmetic costs four times, not once (cutile-tests'
    make_reduce_max_two_axes f16 keepdims: the store from the reduction's replicated
    16 registers looked cheaper than converting to one element per thread, and its PTX
    came out 2 instructions longer than greedy's)."""
    from nanotile.ir.layouts import LinearLayout

    model = LayoutCostModel()
    sixteen = LinearLayout((16,), (1, 2, 4, 8))
    four = LinearLayout((16,), (1, 2), (0, 0, 0, 4, 8))
    assert sixteen.contiguous_registers() == 16 and four.contiguous_registers() == 4
    assert model.value("cmpi", sixteen, is_float=False) == 4 * model.index_cost
    assert model.value("cmpi", four, is_float=False) == model.index_cost
    path = ROOT / ".." / "shared" / "corpus" / "cutile-tests" / \
        "test_reduction__make_reduce_max_two_axes.kernel-max__f16x3_f16x1_16_32_64_F_-1_-2.mlir"
    if not path.exists():
        pytest.skip("../shared/corpus/cutile-tests not found")
    from nanotile.ir.printer import print_module

    text = path.read_text()
    assert print_module(laid_out_module(text, "eqsat")) == \
        print_module(laid_out_module(text, "greedy"))


def test_a_columns_index_arithmetic_is_shared_by_its_vectors():
    """A 16x1 tile (a reduction's column, kept dims) runs down its first dimension, the
    last with more than one element: its index arithmetic costs once per vector of four
    registers there, as a 1x16 row's does along its second."""
    from nanotile.ir.layouts import LinearLayout

    model = LayoutCostModel()
    column = LinearLayout((16, 1), (1, 2, 4, 8))
    row = LinearLayout((1, 16), (1, 2, 4, 8))
    assert model.value("cmpi", column, is_float=False) == 4 * model.index_cost
    assert model.value("cmpi", row, is_float=False) == 4 * model.index_cost
    assert model.value("addf", column) == 16 * model.ops.op_cost("addf")  # not index work


def test_the_issued_model_counts_an_op_as_one_instruction():
    """issued() counts instructions: an exp is one a register, whatever eqsat's table
    says of its latency (the model's price); with_issued() prices both."""
    layout = default_blocked((16, 128), 4)
    model = LayoutCostModel()
    assert model.issued().value("exp", layout) == layout.registers
    assert model.value("exp", layout) == model.ops.op_cost("exp") * layout.registers > \
        layout.registers
    assert model.with_issued().value("exp", layout) == \
        model.value("exp", layout) + model.issued().value("exp", layout)


def test_a_reduction_is_priced_by_the_steps_its_layout_takes():
    """Issued instructions of a sum down the 16 rows of a 16x128 tile: each thread a
    whole column folds 15 adds; four rows of four columns a thread over four warps folds
    3 adds for each of its 4 columns, stores its 4 partials (one vector) and loads the 4
    warps' 16 (four; two barriers, 5 instructions each), and folds 3 adds for each
    again; eight rows of
    four columns a thread, two lanes along the rows, folds 7 adds a column, then a
    shuffle and an add."""
    issued = LayoutCostModel().issued()
    column = blocked((16, 128), (16, 1), (1, 32), (1, 4), (1, 0))
    rows = blocked((16, 128), (4, 4), (1, 32), (4, 1), (1, 0))
    lanes = blocked((16, 128), (1, 4), (2, 16), (1, 4), (1, 0))
    assert issued.reduction(column, 0, ("addf",), 4) == 15
    assert issued.reduction(rows, 0, ("addf",), 4) == 4 * 3 + (1 + 4) + 2 * 5 + 4 * 3
    assert issued.reduction(lanes, 0, ("addf",), 4) == 4 * (7 + (1 + 1))
    assert issued.reduction(rows, None, ("addf",), 4) == 16  # a scan: an add a register


def test_a_shuffle_conversion_pays_its_lanes_and_compares():
    """select_threads.shuffle_idx: a shfl.sync per candidate register, a selp per extra
    candidate, an add of the register's constant to the thread's source lane (register
    1 here: lane + 1) and a setp.eq choosing the candidate (one per extra candidate, the
    same for every register)."""
    from nanotile.ir.layouts import blocked, shuffle_plan

    source = blocked((16, 16), (2, 1), (2, 16), (4, 1), (1, 0))
    target = blocked((16, 16), (1, 2), (4, 8), (4, 1), (1, 0))
    plan = shuffle_plan(source, target)
    assert (plan.shuffles, plan.select_bits, plan.lanes) == (4, 1, (0, 1))
    issued = LayoutCostModel().issued()
    assert issued.conversion(source, target, 4) == 4 + 2 + 1 + 1
    model = LayoutCostModel()
    assert model.conversion(source, target, 4) == \
        4 * model.shuffle_cost + 2 * model.select_cost + 2 * model.index_cost


# cutile-tests kernels where greedy converts and the model kept greedy's choice while
# its prices ran against the PTX: add_arrays (a load's cache lines priced per sector),
# a sum along rows stored as a 16x1 column (its index arithmetic priced per register),
# a cumulative sum stored from the scan's layout (the shuffles' lane arithmetic unpriced);
# a column loaded where its user reads it, which the search from greedy's layouts
# missed (its cheapest end still converted: solve's second search); and a sum of all of a
# 512x128 tile, strip-mined, whose loop carried its sum in another layout than it loads
# (the reduce after the loop was no slot)
NO_LONGER_CONVERTED = [
    "test_reduction__make_reduce_axisNone.kernel-sum__f32x2_f32x2_512_128_T.tileirbc",
    "test_helper_function__main_kernel_calling_helper__f32x2_f32x2_f32x2_16_128.tileirbc",
    "test_list__add_arrays__list_i32x2.tileirbc",
    "test_reduction__make_reduce_axis1_2d.kernel-sum__f32x2_f32x2_16_128_T.tileirbc",
    "test_scan__test_scan_custom_cumsum.kernel_def__f32x2_f32x2_F.tileirbc",
]


@pytest.mark.parametrize("name", NO_LONGER_CONVERTED)
def test_corpus_kernels_no_longer_converted(name):
    """Greedy converts a register tile there; eqsat's PTX has no shuffle and no shared
    round trip of its own and fewer instructions, and the emulator gives the
    interpreter's answer."""
    from nanotile.ptxemu import run_ptx
    from nanotile.targets.compile import compile_to_ptx

    path = ROOT / ".." / "shared" / "corpus" / "cutile-tests" / name
    if not path.exists():
        pytest.skip("../shared/corpus/cutile-tests not found")
    module = nanotile.load(str(path))
    greedy = greedy_ptx(copy.deepcopy(module), "sm_90")
    ptx = compile_to_ptx(copy.deepcopy(module), "sm_90")
    assert "shfl.sync.idx" in greedy or greedy.count("bar.sync") > ptx.count("bar.sync")
    assert "shfl.sync.idx" not in ptx
    assert count_instructions(ptx) < count_instructions(greedy)
    (entry,) = module.entries()
    kernel = entry.attributes["sym_name"]
    grid, args = make_inputs(entry, np.random.default_rng(0))
    dims = (grid,) if isinstance(grid, int) else tuple(grid)
    got, want = copy.deepcopy(args), copy.deepcopy(args)
    run_ptx(ptx, kernel, grid=dims, args=got)
    nanotile.run(module, kernel, grid, *want)
    assert first_difference(got, want, "sm_90") is None


ROUNDTRIP = """
cuda_tile.module @tests {
  entry @roundtrip(%p: tile<ptr<f32>>, %q: tile<ptr<f32>>) {
    %ap = assume div_by<16>, %p : tile<ptr<f32>>
    %aq = assume div_by<16>, %q : tile<ptr<f32>>
    %i = iota : tile<2048xi32>
    %b0 = reshape %ap : tile<ptr<f32>> -> tile<1xptr<f32>>
    %b = broadcast %b0 : tile<1xptr<f32>> -> tile<2048xptr<f32>>
    %a = offset %b, %i : tile<2048xptr<f32>>, tile<2048xi32> -> tile<2048xptr<f32>>
    %x, %t = load_ptr_tko weak %a : tile<2048xptr<f32>> -> tile<2048xf32>, token
    %bytes = pack %x : tile<2048xf32> -> tile<8192xi8>
    %y = unpack %bytes : tile<8192xi8> -> tile<2048xf32>
    %c0 = reshape %aq : tile<ptr<f32>> -> tile<1xptr<f32>>
    %c = broadcast %c0 : tile<1xptr<f32>> -> tile<2048xptr<f32>>
    %d = offset %c, %i : tile<2048xptr<f32>>, tile<2048xi32> -> tile<2048xptr<f32>>
    %w = store_ptr_tko weak %d, %y : tile<2048xptr<f32>>, tile<2048xf32> -> token
    return
  }
}
"""


def register_conversions(module) -> list:
    """The convert_layout ops between two register layouts."""
    from nanotile.ir.layouts import LinearLayout
    from nanotile.ir.rewrite import all_ops

    return [op for op in all_ops(module) if op.name == "convert_layout" and
            isinstance(op.operands[0].type.layout, LinearLayout) and
            isinstance(op.results[0].type.layout, LinearLayout) and
            op.operands[0].type.layout != op.results[0].type.layout]


def test_an_unpacked_tile_takes_its_users_layout():
    """pack and unpack gather their result from their operand in shared memory, each
    register computing its element's index, so their result is a slot of the layout
    e-graph whose operand wants nothing of its layout: greedy gives unpack's result a
    layout of its own and converts it to the store's (cutile-tests'
    pack_unpack_roundtrip_2d did), eqsat stores it from where unpack leaves it; the
    emulator gives the interpreter's answer."""
    from nanotile.ir.rewrite import all_ops
    from nanotile.ptxemu import run_ptx
    from nanotile.targets.compile import compile_to_ptx

    assert register_conversions(laid_out_module(ROUNDTRIP, "greedy"))
    module = laid_out_module(ROUNDTRIP, "eqsat")
    assert register_conversions(module) == []
    (unpack,) = [op for op in all_ops(module) if op.name == "unpack"]
    (store,) = [op for op in all_ops(module) if op.name == "store_ptr_tko"]
    assert unpack.results[0].type.layout == store.operands[1].type.layout
    source = parse_text(ROUNDTRIP, "roundtrip.mlir")
    ptx = compile_to_ptx(copy.deepcopy(source), "sm_90")
    values = np.random.default_rng(3).standard_normal(2048).astype(np.float32)
    args = [values, np.zeros(2048, dtype=np.float32)]
    got, want = copy.deepcopy(args), copy.deepcopy(args)
    run_ptx(ptx, "roundtrip", grid=(1, 1, 1), args=got)
    nanotile.run(source, "roundtrip", (1, 1, 1), *want)
    assert first_difference(got, want, "sm_90") is None
    assert np.array_equal(got[1], values)


def test_each_target_registers_a_model():
    import nanotile.targets  # noqa: F401  (registers the targets' models)

    assert layout_costs_for("sm_90").name == "sm_90"
    assert layout_costs_for("sm_100").name == "sm_100"


def test_missing_layout_rule_file_is_a_one_line_error(tmp_path):
    path = tmp_path / "k.mlir"
    path.write_text(COMPARE)
    result = subprocess.run([sys.executable, "-m", "nanotile", str(path), "--target", "sm_90",
                             "--emit=ptx", "--layout-rules", str(tmp_path / "none.egg")],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "no layout rule file" in result.stderr and "none.egg" in result.stderr


def test_a_layout_rule_file_error_points_into_the_file(tmp_path):
    path, rules = tmp_path / "k.mlir", tmp_path / "bad.egg"
    path.write_text(COMPARE)
    rules.write_text("; bad: a misspelt relation\n(ruleset bad)\n"
                     "(rule ((Cand s l)) ((Forbidd s l)) :ruleset bad)\n")
    result = subprocess.run([sys.executable, "-m", "nanotile", str(path), "--emit=ptx",
                             "--layout-rules", str(rules)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"{rules}:3:21: error: (Forbidd s l) Unbound function Forbidd" in result.stderr


def test_an_unknown_strategy_is_an_error():
    from nanotile.diagnostics import CompileError

    with pytest.raises(CompileError, match="must be eqsat or greedy, got 'fast'"):
        laid_out("fast")


TRANSPOSE_3D = "test_transpose__transpose_tile_3d_explicit_axes__f16x3_f16x3.mlir"
# a search that makes three moves, the later ones where the first changed the answer
RMS_NORM_GATHER = ("kernels_rms_norm__rms_norm_kernel_gather@nww4__f16x2_f16x1_f16x2_f32x1"
                   "_1024_1e-05_512.mlir")
# greedy converts through shared memory (4096 bytes) and a shuffle
ATOMIC_BROADCAST = ("test_tiled_view__test_tiled_view_atomic_broadcast.kernel-t1664-t161"
                    "__f32x2_f32x2.mlir")
# two loads' index arithmetic (iota, extension, reshape, broadcast, compare, mask) that
# moves with the loads: 30 of its 43 slots with a choice, each read by one slot alone
GATHER_2D = "test_gather_scatter__gather_2d_with_broadcast_mask__f32x2_f32x1_b1x2.mlir"
CHOICE_KERNELS = [COMPARE, ACCUMULATE, SUM_MIDDLE, RUNNING_SUM, TRANSPOSE_3D,
                  RMS_NORM_GATHER, ATOMIC_BROADCAST, GATHER_2D]
CHOICE_IDS = ["compare", "accumulate", "sum", "scan", "transpose_3d", "rms_norm_gather",
              "atomic_broadcast", "gather_2d"]


def extracted_problems(source: str, monkeypatch) -> list:
    """The (problem, model) pairs extraction sees compiling ``source`` (a kernel's text,
    or a file of ../shared's cutile-tests corpus)."""
    from nanotile.targets.ptx import layout_extract

    if source.endswith(".mlir"):
        from tests.shared_corpus import CUTILE_TESTS, shared_file

        source = shared_file(CUTILE_TESTS / source).read_text()
    seen = []
    real_extract = layout_extract.extract
    monkeypatch.setattr(layout_extract, "extract", lambda problem, model, totals=False:
                        seen.append((problem, model)) or real_extract(problem, model, totals))
    laid_out_module(source, "eqsat")
    assert seen, "the kernel has a layout choice to extract"
    return seen


@pytest.mark.parametrize("source", [COMPARE, SUM_MIDDLE, RUNNING_SUM], ids=["compare",
                                                                          "sum", "scan"])
def test_the_search_shortcuts_price_what_the_models_do(source, monkeypatch):
    """Extraction asks two Pricers, not three: the model's price of a change is
    with_issued()'s less issued()'s (every price is linear in the model's numbers), and
    the search skips a move whose most_saved bound (no edge costs less than nothing)
    cannot beat the best found. Both checked on every slot, edge and one-slot move."""
    from nanotile.targets.ptx.layout_extract import Pricer, Search

    for problem, model in extracted_problems(source, monkeypatch):
        pricers = [Pricer(problem, m) for m in (model, model.issued(), model.with_issued())]
        for slot in problem.slots:
            for layout in problem.candidates[slot]:
                own = [p.own(slot, layout) for p in pricers]
                assert own[0] + own[1] == own[2] + problem.extra.get((slot, layout), 0)
        for edge in problem.edges:
            users = problem.candidates.get(edge.user, [None])
            operands = problem.candidates.get(edge.operand, [None])
            for user in users:
                for operand in operands:
                    prices = [p.edge(edge, user, operand) for p in pricers]
                    assert min(prices) >= 0 and prices[0] + prices[1] == prices[2]
        choosing = [s for s in problem.slots if len(problem.candidates[s]) > 1]
        fixed = {s: problem.candidates[s][0] for s in problem.slots if s not in choosing}
        search = Search(pricers[2], problem.edges, problem.greedy, choosing, fixed)
        moves = [{search.number[s]: option} for s in choosing
                 for option in range(len(search.options[search.number[s]]))]
        assert moves
        for move in moves:
            assert search.most_saved(move) >= -search.delta(move)


@pytest.mark.parametrize("source", CHOICE_KERNELS, ids=CHOICE_IDS)
def test_the_search_makes_the_moves_of_asking_every_slot(source, monkeypatch):
    """improve asks a slot only where a move of it may save something (may_save), and
    never a follower (index arithmetic one slot reads: it moves with that slot): the
    layouts it ends with are those of asking every slot in turn until a round makes no
    move (here, on every group, whatever its size), with fewer questions."""
    from nanotile.targets.ptx.layout_extract import Pricer, Search, groups, improve

    asked = {"shortcuts": 0, "every slot": 0}

    def search_of(problem, pricer, group, counter):
        candidates = problem.candidates
        choosing = [s for s in group if len(candidates[s]) > 1]
        fixed = {s: candidates[s][0] for s in group if len(candidates[s]) == 1}
        edges = [e for e in problem.edges if e.user in group or e.operand in group]
        search = Search(pricer, edges, problem.greedy, choosing, fixed)
        best_move = search.best_move

        def counted(s, room):
            asked[counter] += 1
            return best_move(s, room)
        search.best_move = counted
        return search

    moved = 0
    for problem, model in extracted_problems(source, monkeypatch):
        pricer = Pricer(problem, model.with_issued())
        for group in groups(problem):
            fast = improve(search_of(problem, pricer, group, "shortcuts"), float("inf"))
            search = search_of(problem, pricer, group, "every slot")
            turns = [s for s, options in enumerate(search.options) if len(options) > 1]
            room, unmoved = [0, 0], 0
            while unmoved < len(turns):
                for s in turns:
                    best = search.best_move(s, room)
                    unmoved += 1
                    if best is not None:
                        move, count, shared = best
                        search.make(move)
                        room = [room[0] - count, room[1] - shared]
                        unmoved = 0
                    if unmoved == len(turns):
                        break
            assert fast == search.layouts()
            moved += sum(fast[s] != problem.greedy[s] for s in group)
    assert asked["shortcuts"] <= asked["every slot"]
    if source in (COMPARE, TRANSPOSE_3D, RMS_NORM_GATHER, GATHER_2D):  # choices that move
        assert moved and asked["shortcuts"] < asked["every slot"]


def test_index_arithmetic_one_slot_reads_follows_it(monkeypatch):
    """Search.followers: the slots with a choice that one slot reads and nothing else,
    computed from indices (iotas, constants, pure ops over them); improve never asks
    them, and the choice moves them with their reader all the same."""
    from nanotile.targets.ptx.layout_extract import Pricer, Search, groups, improve

    (problem, model), = extracted_problems(GATHER_2D, monkeypatch)
    pricer = Pricer(problem, model.with_issued())
    (group,) = groups(problem)
    choosing = [s for s in group if len(problem.candidates[s]) > 1]
    fixed = {s: problem.candidates[s][0] for s in group if s not in choosing}
    search = Search(pricer, problem.edges, problem.greedy, choosing, fixed)
    followers = {search.slots[s] for s in search.followers}
    readers = {s: [e for e in problem.edges if e.operand is s] for s in group}
    for slot in choosing:
        follows = len(readers[slot]) == 1 and readers[slot][0].user is not None and \
            slot not in problem.widths and pricer.computed_from_indices(slot)
        assert (slot in followers) == follows, problem.names[slot]
    names = sorted(problem.names[s].split("@")[0] for s in followers)
    assert {"iota", "reshape", "broadcast", "constant", "cmpi"} <= set(names)
    assert "load_ptr_tko" not in names and "andi" not in names  # a mask of loaded indices
    asked = []
    best_move = search.best_move
    search.best_move = lambda s, room: asked.append(s) or best_move(s, room)
    chosen = improve(search, float("inf"))
    assert asked and not set(asked) & search.followers
    moved = [s for s in followers if chosen[s] != problem.greedy[s]]
    assert moved, "followers move with their readers"


@pytest.mark.parametrize("source", CHOICE_KERNELS, ids=CHOICE_IDS)
def test_the_closure_asks_each_edge_of_each_layout_once(source, monkeypatch):
    """close_candidates asks an edge of the layouts added since its last visit only:
    the candidates, in their order, are those of asking it of every layout each round
    until a round adds none."""
    from nanotile.targets.ptx import layout_choice
    from nanotile.targets.ptx.layout_egraph import MAX_ROUNDS, _add, close_candidates

    closures = []

    def recorded(problem, proposed):
        reach = close_candidates(problem, proposed)
        closures.append((problem, proposed, reach))
        return reach

    monkeypatch.setattr(layout_choice, "close_candidates", recorded)
    extracted_problems(source, monkeypatch)
    for problem, proposed, reach in closures:
        every = {slot: list(layouts) for slot, layouts in proposed.items()}
        for _ in range(MAX_ROUNDS):
            grew = False
            for edge in problem.edges:
                if edge.user is None or edge.operand is None:
                    continue
                for layout in list(every[edge.user]):
                    want = problem.want(edge, layout)
                    grew |= want is not None and _add(problem, edge.operand, every, want)
                for layout in list(every[edge.operand]):
                    wish = problem.wish(edge, layout)
                    grew |= wish is not None and _add(problem, edge.user, every, wish)
            if not grew:
                break
        assert reach == every
        assert any(len(reach[s]) > len(proposed[s]) for s in problem.slots)


@pytest.mark.parametrize("source", [COMPARE, TRANSPOSE_3D], ids=["compare", "transpose_3d"])
def test_egglog_counts_the_closures_candidates(source, monkeypatch):
    """Without a user's rules, saturate counts egglog's Cand rather than reading them:
    the rows, read, are the closure's candidates slot by slot, and where the count
    differs the rows are read."""
    from nanotile.targets.ptx import layout_choice, layout_egraph
    from nanotile.targets.ptx.layout_program import LayoutProgram

    runs = []
    real_saturate = layout_egraph.saturate

    def recorded(problem, proposed, reach, rule_files, dump=None, count=False):
        real_saturate(problem, proposed, reach, rule_files, dump, count)
        runs.append((problem, proposed, reach, dict(problem.candidates)))

    monkeypatch.setattr(layout_choice, "saturate", recorded)
    extracted_problems(source, monkeypatch)
    assert runs, "egglog ran"
    real_count = LayoutProgram.saturate_and_count
    monkeypatch.setattr(LayoutProgram, "saturate_and_count", lambda self, load, leave_out:
                        {**real_count(self, load, leave_out), "Cand": -1})
    for problem, proposed, reach, counted in runs:
        assert all(counted[s] == [problem.greedy[s], *(layout for layout in reach[s]
                                                       if layout != problem.greedy[s])]
                   for s in problem.slots)
        real_saturate(problem, proposed, reach, [])  # the count is off: rows are read
        assert all(set(problem.candidates[s]) == set(reach[s]) for s in problem.slots)


def test_a_failed_layout_session_leaves_a_fresh_program():
    """saturate_and_count adds facts and runs the rules in one egglog call: where egglog
    fails in between, the counting program is forgotten and the next kernel gets an
    empty one."""
    from nanotile.diagnostics import CompileError
    from nanotile.targets.ptx.layout_program import LayoutProgram

    program = LayoutProgram.counting()
    with pytest.raises(CompileError):
        program.saturate_and_count("(Seed 0 10)\n(Seed 1)")  # the second has one column
    fresh = LayoutProgram.counting()
    assert fresh is not program
    assert fresh.saturate_and_count("(Seed 0 10)")["Cand"] == 1
    assert fresh.saturate_and_count("(Seed 2 20) (Seed 3 30)")["Cand"] == 2


@pytest.mark.parametrize("source", [COMPARE, TRANSPOSE_3D], ids=["compare", "transpose_3d"])
def test_kernels_counted_in_one_egraph_stay_apart(source, monkeypatch):
    """The counting program keeps every kernel's facts (no push and pop), each kernel's
    numbered above the last's: the same kernel compiled three times counts the same
    candidates each time, its facts three times over in the e-graph."""
    from nanotile.targets.ptx import layout_program
    from nanotile.targets.ptx.layout_program import LayoutProgram

    counted = []
    real_count = LayoutProgram.saturate_and_count

    def count(self, load, leave_out):
        counted.append((self, real_count(self, load, leave_out), dict(self.sizes)))
        return counted[-1][1]

    monkeypatch.setattr(LayoutProgram, "saturate_and_count", count)
    monkeypatch.setattr(layout_program, "_SHARED", {})  # a fresh counting program
    for _ in range(3):
        extracted_problems(source, monkeypatch)
    assert len(counted) == 3 and len({id(program) for program, _, _ in counted}) == 1
    (_, added, first), (_, again, _), (_, third, total) = counted
    assert added == again == third and added["Cand"] > 0
    assert all(total[name] == 3 * first[name] for name in first)
