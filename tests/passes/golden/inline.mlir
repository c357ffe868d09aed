// RUN: nanotile-passes %s -p inline | filecheck %s
// inline: cuda_tile has no call op, so nothing is inlined; as MLIR's inliner runs its
// default pipeline (canonicalize) on every function, each kernel is canonicalized:
// constants uniqued and hoisted, a select of one value on both sides folded, dead ops gone.

cuda_tile.module @tests {
  // CHECK-LABEL: @kernel
  entry @kernel(%p: tile<ptr<i32>>, %c: tile<i1>, %n: tile<i32>) {
    // CHECK: %[[ONE:.*]] = constant <i32: 1>
    // CHECK-NOT: constant
    // CHECK-NOT: select
    // CHECK-NOT: muli
    // CHECK: addi %n, %[[ONE]]
    // CHECK-NEXT: store_ptr_tko
    %one = constant <i32: 1> : tile<i32>
    %s = select %c, %n, %n : tile<i1>, tile<i32>
    %dead = muli %n, %n : tile<i32>
    %again = constant <i32: 1> : tile<i32>
    %x = addi %s, %again : tile<i32>
    %t = store_ptr_tko weak %p, %x : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
