"""canonicalize (nanotile/passes/canonicalize.py): what it erases as dead (MLIR's view of
cuda-tile's memory effects), where constants end up, and that it stops. Its patterns
are tested by NVIDIA's Dialect/CudaTile/canonicalize.mlir (tests/conformance)."""

from __future__ import annotations

from nanotile.ir.parser import parse_text
from nanotile.ir.printer import print_module
from nanotile.passes.base import PassContext
from nanotile.passes.canonicalize import Canonicalize

KERNEL = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<i32>>, %c: tile<i1>, %n: tile<i32>) {
    %zero = constant <i32: 0> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %dead = addi %n, %one : tile<i32>
    %kept = assume bounded<0, ?>, %n : tile<i32>
    %pure = if %c -> (tile<i32>) {
      %x = muli %n, %n : tile<i32>
      yield %x : tile<i32>
    } else {
      yield %n : tile<i32>
    }
    %loop = for %i in (%zero to %n, step %one) : tile<i32> iter_values(%a = %zero) -> (tile<i32>) {
      continue %a : tile<i32>
    }
    %v, %t = load_ptr_tko weak %p : tile<ptr<i32>> -> tile<i32>, token
    return
  }
}
"""


def canonical(text: str) -> str:
    module = parse_text(text, "k.mlir")
    Canonicalize().apply(module, PassContext())
    return print_module(module)


def test_dead_code_is_what_cuda_tile_declares_free_of_effects():
    out = canonical(KERNEL)
    assert "addi" not in out and "muli" not in out and " if " not in out  # pure
    assert "assume" in out  # declared without effects: MLIR must keep it
    assert "for " in out  # its continue declares no effects either
    assert "load_ptr_tko" in out  # no effect declared: kept, even a weak load


def test_a_second_run_changes_nothing():
    module = parse_text(KERNEL, "k.mlir")
    assert Canonicalize().apply(module, PassContext())
    assert not Canonicalize().apply(module, PassContext())


def test_constants_of_nested_regions_join_the_kernel_top_in_mlir_order():
    text = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<i32>>, %c: tile<i1>) {
    %a = constant <i32: 1> : tile<i32>
    %t0 = store_ptr_tko weak %p, %a : tile<ptr<i32>>, tile<i32> -> token
    %b = constant <i32: 2> : tile<i32>
    if %c {
      %d = constant <i32: 1> : tile<i32>
      %e = constant <i32: 3> : tile<i32>
      %t1 = store_ptr_tko weak %p, %d : tile<ptr<i32>>, tile<i32> -> token
      %t2 = store_ptr_tko weak %p, %e : tile<ptr<i32>>, tile<i32> -> token
    }
    %t3 = store_ptr_tko weak %p, %b : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
"""
    values = [line.split("<i32: ")[1].split(">")[0] for line in canonical(text).splitlines()
              if "constant" in line]
    # 1 stays first; 2 (after a store) and then 3 (in the if) each go before the others;
    # the if's 1 is the kernel's
    assert values == ["3", "2", "1"]
