"""The small kernels lab 2 grades the passes with, each with its golden checks.

A ``Golden`` is one kernel (a module with one entry, Tile IR text) and what must hold
after the pass ran on it alone: ops that must be gone, merged or moved, and ops that
must stay where they are. The kernels also run through the whole pipeline with
--check-semantics (grader.py), so every one stores what it computes: a pass that changes
a stored value is caught there. Scalar parameters come first (the random inputs of
--check-semantics make integer scalars 3: loop bounds) and values to compute with are
loaded from memory or are f32 parameters (random, all different).

    python kernels.py [NAME]     print the kernels (one, or all)
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from nanotile.ir.core import Operation

# Where an op is, for a check: the entry's top level, inside a for body (at any depth),
# inside a reduce body, inside an if branch, or anywhere in the kernel.
TOP, IN_FOR, IN_REDUCE, IN_IF, ANYWHERE = "top level", "for body", "reduce body", "if", ""


def ops_in(entry: Operation, scope: str) -> list[Operation]:
    """The ops of ``entry`` in ``scope`` (see above)."""
    if scope == TOP:
        return list(entry.regions[0].block.ops)
    if scope == ANYWHERE:
        return [op for op in entry.walk() if op is not entry]
    owner = {IN_FOR: "for", IN_REDUCE: "reduce", IN_IF: "if"}[scope]
    inside = [op for outer in entry.walk() if outer.name == owner
              for op in outer.walk() if op is not outer]
    return list({id(op): op for op in inside}.values())  # nested owners: count once


@dataclass(frozen=True)
class Check:
    """``says`` what must hold after the pass, for the student; ``holds`` checks it."""

    says: str
    holds: Callable[[Operation], bool]


def count(name: str, expected: int, scope: str = ANYWHERE) -> Check:
    where = f" in the {scope}" if scope else ""
    return Check(f"{expected} {name}{where}",
                 lambda entry: sum(op.name == name for op in ops_in(entry, scope)) == expected)


def before(first: str, second: str) -> Check:
    """At the top level, the first ``first`` op comes before the first ``second`` op."""
    def holds(entry: Operation) -> bool:
        names = [op.name for op in entry.regions[0].block.ops]
        return first in names and second in names and names.index(first) < names.index(second)

    return Check(f"{first} before {second} at the top level", holds)


@dataclass(frozen=True)
class Golden:
    """A kernel (entry ``@name``), which pass it is for, and what must hold after it.
    ``pipeline``: the kernel also runs through the whole pipeline (grader.py's parts on
    meaning and effect); False where the project's pipeline cannot compile it yet."""

    name: str
    pass_name: str
    text: str
    checks: tuple[Check, ...]
    pipeline: bool = True


def _module(body: str) -> str:
    return f"cuda_tile.module @lab {{\n{body.strip(chr(10))}\n}}\n"


CSE, LICM = "cse", "loop-invariant-code-motion"

# --------------------------------------------------------------------------------------
# cse

CSE_KERNELS = [
    Golden("merge", CSE, _module("""
  entry @merge(%x: tile<f32>, %y: tile<f32>, %p: tile<ptr<f32>>, %q: tile<ptr<f32>>) {
    %c1 = constant <f32: 2.0> : tile<f32>
    %a1 = addf %x, %y : tile<f32>
    %a2 = addf %y, %x : tile<f32>
    %m1 = mulf %a1, %c1 : tile<f32>
    %c2 = constant <f32: 2.0> : tile<f32>
    %m2 = mulf %a2, %c2 : tile<f32>
    %t1 = store_ptr_tko weak %p, %m1 : tile<ptr<f32>>, tile<f32> -> token
    %t2 = store_ptr_tko weak %q, %m2 : tile<ptr<f32>>, tile<f32> -> token
    return
  }"""), (count("addf", 1), count("mulf", 1), count("constant", 1),
           count("store_ptr_tko", 2))),
    Golden("operands_and_attributes", CSE, _module("""
  entry @operands_and_attributes(%px: tile<ptr<i32>>, %py: tile<ptr<i32>>, %p: tile<ptr<i32>>, %q: tile<ptr<i32>>, %r: tile<ptr<i32>>, %s: tile<ptr<i32>>, %c: tile<ptr<i1>>, %d: tile<ptr<i1>>) {
    %x, %tx = load_ptr_tko weak %px : tile<ptr<i32>> -> tile<i32>, token
    %y, %ty = load_ptr_tko weak %py : tile<ptr<i32>> -> tile<i32>, token
    %s1 = subi %x, %y : tile<i32>
    %s2 = subi %y, %x : tile<i32>
    %s3 = subi %x, %y : tile<i32>
    %d1 = divi %x, %y signed : tile<i32>
    %d2 = divi %x, %y unsigned : tile<i32>
    %lt = cmpi less_than %x, %y, signed : tile<i32> -> tile<i1>
    %gt = cmpi greater_than %x, %y, signed : tile<i32> -> tile<i1>
    %r1 = subi %s1, %s2 : tile<i32>
    %r2 = subi %s3, %d1 : tile<i32>
    %t1 = store_ptr_tko weak %p, %r1 : tile<ptr<i32>>, tile<i32> -> token
    %t2 = store_ptr_tko weak %q, %r2 : tile<ptr<i32>>, tile<i32> -> token
    %t3 = store_ptr_tko weak %r, %d2 : tile<ptr<i32>>, tile<i32> -> token
    %t4 = store_ptr_tko weak %s, %s3 : tile<ptr<i32>>, tile<i32> -> token
    %t5 = store_ptr_tko weak %c, %lt : tile<ptr<i1>>, tile<i1> -> token
    %t6 = store_ptr_tko weak %d, %gt : tile<ptr<i1>>, tile<i1> -> token
    return
  }"""), (count("subi", 4), count("divi", 2), count("cmpi", 2))),
    Golden("chain", CSE, _module("""
  entry @chain(%x: tile<f32>, %y: tile<f32>, %p: tile<ptr<f32>>, %q: tile<ptr<f32>>) {
    %a1 = mulf %x, %y : tile<f32>
    %a2 = mulf %x, %y : tile<f32>
    %b1 = subf %a1, %x : tile<f32>
    %b2 = subf %a2, %x : tile<f32>
    %e1 = exp %b1 : tile<f32>
    %e2 = exp %b2 : tile<f32>
    %t1 = store_ptr_tko weak %p, %e1 : tile<ptr<f32>>, tile<f32> -> token
    %t2 = store_ptr_tko weak %q, %e2 : tile<ptr<f32>>, tile<f32> -> token
    return
  }"""), (count("mulf", 1), count("subf", 1), count("exp", 1))),
    Golden("loads", CSE, _module("""
  entry @loads(%p: tile<ptr<i32>>, %q: tile<ptr<i32>>, %r: tile<ptr<i32>>) {
    %v1, %t1 = load_ptr_tko weak %p : tile<ptr<i32>> -> tile<i32>, token
    %w, %tw = load_ptr_tko weak %q : tile<ptr<i32>> -> tile<i32>, token
    %t2 = store_ptr_tko weak %p, %w token=%t1 : tile<ptr<i32>>, tile<i32> -> token
    %v2, %t3 = load_ptr_tko weak %p token=%t2 : tile<ptr<i32>> -> tile<i32>, token
    %s1 = addi %v1, %w : tile<i32>
    %s2 = addi %w, %v1 : tile<i32>
    %s3 = addi %v2, %w : tile<i32>
    %s4 = addi %v1, %w : tile<i32>
    %m = muli %s1, %s2 : tile<i32>
    %m2 = muli %m, %s4 : tile<i32>
    %n = muli %m2, %s3 : tile<i32>
    %t4 = store_ptr_tko weak %r, %n : tile<ptr<i32>>, tile<i32> -> token
    return
  }"""), (count("load_ptr_tko", 3), count("addi", 2))),
    Golden("branches", CSE, _module("""
  entry @branches(%x: tile<f32>, %y: tile<f32>, %pc: tile<ptr<i1>>, %p: tile<ptr<f32>>, %q: tile<ptr<f32>>) {
    %c, %tc = load_ptr_tko weak %pc : tile<ptr<i1>> -> tile<i1>, token
    %outer = mulf %x, %y : tile<f32>
    %r = if %c -> (tile<f32>) {
      %seven = constant <f32: 7.0> : tile<f32>
      %inner = mulf %x, %y : tile<f32>
      %a = addf %inner, %seven : tile<f32>
      yield %a : tile<f32>
    } else {
      %seven2 = constant <f32: 7.0> : tile<f32>
      %a2 = addf %x, %seven2 : tile<f32>
      %b2 = addf %outer, %seven2 : tile<f32>
      %c2 = subf %a2, %b2 : tile<f32>
      yield %c2 : tile<f32>
    }
    %again = addf %outer, %x : tile<f32>
    %t1 = store_ptr_tko weak %p, %r : tile<ptr<f32>>, tile<f32> -> token
    %t2 = store_ptr_tko weak %q, %again : tile<ptr<f32>>, tile<f32> -> token
    return
  }"""), (count("mulf", 1), count("constant", 1), count("constant", 0, IN_IF),
           count("addf", 3, IN_IF), count("addf", 4))),
    Golden("loop_body", CSE, _module("""
  entry @loop_body(%n: tile<i32>, %x: tile<f32>, %y: tile<f32>, %p: tile<ptr<f32>>) {
    %zero = constant <i32: 0> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %start = constant <f32: 0.0> : tile<f32>
    %outer = addf %x, %y : tile<f32>
    %r = for %i in (%zero to %n, step %one) : tile<i32> iter_values(%acc = %start) -> (tile<f32>) {
      %inner = addf %x, %y : tile<f32>
      %step1 = addf %acc, %inner : tile<f32>
      %step2 = addf %acc, %inner : tile<f32>
      %both = mulf %step1, %step2 : tile<f32>
      %next = addf %both, %outer : tile<f32>
      continue %next : tile<f32>
    }
    %t = store_ptr_tko weak %p, %r : tile<ptr<f32>>, tile<f32> -> token
    return
  }"""), (count("addf", 2, IN_FOR), count("addf", 3), count("mulf", 1, IN_FOR))),
    Golden("reduce_body", CSE, _module("""
  entry @reduce_body(%pv: tile<ptr<f32>>, %p: tile<ptr<f32>>, %q: tile<ptr<f32>>) {
    %zero = constant <i32: 0> : tile<i32>
    %tv = make_tensor_view %pv, shape = [16], strides = [1] : tensor_view<16xf32, strides=[1]>
    %pt = make_partition_view %tv : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>
    %v, %tok = load_view_tko weak %pt[%zero] : partition_view<tile=(16), tensor_view<16xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %half = constant <f32: 0.5> : tile<f32>
    %s = reduce %v dim=0 identities=[0xFF800000 : f32] : tile<16xf32> -> tile<f32>
    (%e: tile<f32>, %acc: tile<f32>) {
      %one = constant <f32: 1.0> : tile<f32>
      %m1 = maxf %e, %acc : tile<f32>
      %m2 = maxf %e, %acc : tile<f32>
      %m3 = maxf %m1, %m2 : tile<f32>
      %m = maxf %m3, %one : tile<f32>
      yield %m : tile<f32>
    }
    %one_outside = constant <f32: 1.0> : tile<f32>
    %scaled = mulf %s, %half : tile<f32>
    %shifted = addf %s, %one_outside : tile<f32>
    %t1 = store_ptr_tko weak %p, %scaled : tile<ptr<f32>>, tile<f32> -> token
    %t2 = store_ptr_tko weak %q, %shifted : tile<ptr<f32>>, tile<f32> -> token
    return
  }"""), (count("maxf", 3, IN_REDUCE), count("constant", 1, IN_REDUCE),
           count("constant", 3, TOP))),
]

# --------------------------------------------------------------------------------------
# loop-invariant-code-motion

LICM_KERNELS = [
    Golden("hoist", LICM, _module("""
  entry @hoist(%n: tile<i32>, %pa: tile<ptr<i32>>, %pb: tile<ptr<i32>>, %p: tile<ptr<i32>>) {
    %a, %ta = load_ptr_tko weak %pa : tile<ptr<i32>> -> tile<i32>, token
    %b, %tb = load_ptr_tko weak %pb : tile<ptr<i32>> -> tile<i32>, token
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %r = for %i in (%c0 to %n, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
      %three = constant <i32: 3> : tile<i32>
      %product = muli %a, %b : tile<i32>
      %scaled = muli %product, %three : tile<i32>
      %next = addi %acc, %scaled : tile<i32>
      continue %next : tile<i32>
    }
    %t = store_ptr_tko weak %p, %r : tile<ptr<i32>>, tile<i32> -> token
    return
  }"""), (count("muli", 0, IN_FOR), count("constant", 0, IN_FOR), count("muli", 2, TOP),
           before("muli", "for"), count("addi", 1, IN_FOR))),
    Golden("nested", LICM, _module("""
  entry @nested(%n: tile<i32>, %pa: tile<ptr<i32>>, %pb: tile<ptr<i32>>, %p: tile<ptr<i32>>) {
    %a, %ta = load_ptr_tko weak %pa : tile<ptr<i32>> -> tile<i32>, token
    %b, %tb = load_ptr_tko weak %pb : tile<ptr<i32>> -> tile<i32>, token
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %r = for %i in (%c0 to %n, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
      %r2 = for %j in (%c0 to %n, step %c1) : tile<i32> iter_values(%acc2 = %acc) -> (tile<i32>) {
        %both = xori %a, %b : tile<i32>
        %per_i = addi %both, %i : tile<i32>
        %per_j = muli %per_i, %j : tile<i32>
        %next = addi %acc2, %per_j : tile<i32>
        continue %next : tile<i32>
      }
      continue %r2 : tile<i32>
    }
    %t = store_ptr_tko weak %p, %r : tile<ptr<i32>>, tile<i32> -> token
    return
  }"""), (count("xori", 1, TOP), before("xori", "for"), count("addi", 2, IN_FOR),
           count("muli", 1, IN_FOR))),
    Golden("depends_on_the_loop", LICM, _module("""
  entry @depends_on_the_loop(%n: tile<i32>, %pa: tile<ptr<i32>>, %p: tile<ptr<i32>>) {
    %a, %ta = load_ptr_tko weak %pa : tile<ptr<i32>> -> tile<i32>, token
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %r = for %i in (%c0 to %n, step %c1) : tile<i32> iter_values(%acc = %a) -> (tile<i32>) {
      %twice = addi %a, %a : tile<i32>
      %square = muli %i, %i : tile<i32>
      %carried = xori %acc, %twice : tile<i32>
      %mixed = subi %carried, %square : tile<i32>
      continue %mixed : tile<i32>
    }
    %t = store_ptr_tko weak %p, %r : tile<ptr<i32>>, tile<i32> -> token
    return
  }"""), (count("addi", 1, TOP), count("muli", 1, IN_FOR), count("xori", 1, IN_FOR),
           count("subi", 1, IN_FOR))),
    Golden("division", LICM, _module("""
  entry @division(%n: tile<i32>, %pa: tile<ptr<i32>>, %pb: tile<ptr<i32>>, %p: tile<ptr<i32>>) {
    %a, %ta = load_ptr_tko weak %pa : tile<ptr<i32>> -> tile<i32>, token
    %b, %tb = load_ptr_tko weak %pb : tile<ptr<i32>> -> tile<i32>, token
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %c4 = constant <i32: 4> : tile<i32>
    %r = for %i in (%c0 to %n, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
      %safe = divi %a, %c4 signed : tile<i32>
      %unsafe = divi %a, %b signed : tile<i32>
      %rest = remi %a, %c0 signed : tile<i32>
      %sum = addi %safe, %unsafe : tile<i32>
      %all = addi %sum, %rest : tile<i32>
      %next = addi %acc, %all : tile<i32>
      continue %next : tile<i32>
    }
    %t = store_ptr_tko weak %p, %r : tile<ptr<i32>>, tile<i32> -> token
    return
  }"""), (count("divi", 1, TOP), count("divi", 1, IN_FOR), count("remi", 1, IN_FOR),
           count("addi", 3, IN_FOR))),
    Golden("memory", LICM, _module("""
  entry @memory(%n: tile<i32>, %pa: tile<ptr<i32>>, %p: tile<ptr<i32>>, %q: tile<ptr<i32>>) {
    %a, %ta = load_ptr_tko weak %pa : tile<ptr<i32>> -> tile<i32>, token
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %r = for %i in (%c0 to %n, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
      %seen, %ts = load_ptr_tko weak %p : tile<ptr<i32>> -> tile<i32>, token
      %more = addi %seen, %a : tile<i32>
      %tw = store_ptr_tko weak %p, %more token=%ts : tile<ptr<i32>>, tile<i32> -> token
      %shift = shli %a, %c1 : tile<i32>
      %next = addi %acc, %shift : tile<i32>
      continue %next : tile<i32>
    }
    %t = store_ptr_tko weak %q, %r : tile<ptr<i32>>, tile<i32> -> token
    return
  }"""), (count("load_ptr_tko", 1, IN_FOR), count("store_ptr_tko", 1, IN_FOR),
           count("shli", 1, TOP), count("addi", 2, IN_FOR))),
    Golden("if_in_loop", LICM, _module("""
  entry @if_in_loop(%n: tile<i32>, %x: tile<f32>, %y: tile<f32>, %pc: tile<ptr<i1>>, %p: tile<ptr<f32>>) {
    %c, %tc = load_ptr_tko weak %pc : tile<ptr<i1>> -> tile<i1>, token
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %start = constant <f32: 0.0> : tile<f32>
    %r = for %i in (%c0 to %n, step %c1) : tile<i32> iter_values(%acc = %start) -> (tile<f32>) {
      %ratio = divf %x, %y : tile<f32>
      %picked = if %c -> (tile<f32>) {
        %big = mulf %acc, %ratio : tile<f32>
        yield %big : tile<f32>
      } else {
        yield %ratio : tile<f32>
      }
      %next = addf %acc, %picked : tile<f32>
      continue %next : tile<f32>
    }
    %t = store_ptr_tko weak %p, %r : tile<ptr<f32>>, tile<f32> -> token
    return
  }"""), (count("divf", 1, TOP), count("if", 1, IN_FOR), count("mulf", 1, IN_IF))),
]

KERNELS = CSE_KERNELS + LICM_KERNELS


def main(argv: list[str]) -> int:
    for golden in KERNELS:
        if not argv or golden.name in argv:
            says = "; ".join(check.says for check in golden.checks)
            print(f"// {golden.pass_name} @{golden.name}: after the pass, {says}\n{golden.text}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
