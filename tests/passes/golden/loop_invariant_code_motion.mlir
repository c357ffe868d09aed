// RUN: nanotile-passes %s -p loop-invariant-code-motion | filecheck %s
// loop-invariant-code-motion moves pure ops that do not depend on the loop before it,
// out of nested loops too; loop-dependent ops, loads and unsafe divisions stay.

cuda_tile.module @tests {
  // CHECK-LABEL: @hoist
  entry @hoist(%p: tile<ptr<i32>>, %n: tile<i32>, %a: tile<i32>, %b: tile<i32>) {
    // CHECK: %[[D:.*]] = divi %{{.*}}, %{{.*}} signed
    // CHECK: %[[INV:.*]] = muli
    // CHECK: %[[INV2:.*]] = addi %[[INV]], %[[D]]
    // CHECK: for
    // CHECK: divi %{{.*}}, %{{.*}} signed
    // CHECK: for
    // CHECK-NOT: muli
    // CHECK: addi %[[INV2]], %
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %c4 = constant <i32: 4> : tile<i32>
    %r = for %i in (%c0 to %n, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
      %safe = divi %a, %c4 signed : tile<i32>
      %unsafe = divi %a, %b signed : tile<i32>
      %r2 = for %j in (%c0 to %n, step %c1) : tile<i32> iter_values(%acc2 = %acc) -> (tile<i32>) {
        %inv = muli %a, %b : tile<i32>
        %inv2 = addi %inv, %safe : tile<i32>
        %dep = addi %inv2, %j : tile<i32>
        %next = addi %acc2, %dep : tile<i32>
        continue %next : tile<i32>
      }
      %sum = addi %r2, %unsafe : tile<i32>
      continue %sum : tile<i32>
    }
    %t = store_ptr_tko weak %p, %r : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
