// RUN: nanotile-passes %s -p cse | filecheck %s
// Your golden test of cse (lab 2, part C): kernels, and CHECK lines saying what cse must
// leave (FileCheck's syntax: CHECK, CHECK-NEXT, CHECK-NOT, CHECK-DAG, CHECK-LABEL and
// captures %[[NAME:...]]; tests/passes/golden/*.mlir are examples). The grader runs the
// pipeline of the RUN line with the project's cse: your checks must pass on its output;
// and without cse: they must fail there (a check that cannot fail tests nothing).
// Check what cse must remove and what it must keep; keep the checks few and to the point.
//
// Try it with your pass:
//   python labs/02-tile-pass/try_pass.py labs/02-tile-pass/starter/cse.mlir -p cse \
//     | python -m filecheck labs/02-tile-pass/starter/cse.mlir

cuda_tile.module @tests {
  entry @merge(%p: tile<ptr<i32>>, %x: tile<i32>, %y: tile<i32>) {
    %a = muli %x, %y : tile<i32>
    %b = muli %y, %x : tile<i32>
    %s = subi %a, %b : tile<i32>
    %t = store_ptr_tko weak %p, %s : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
