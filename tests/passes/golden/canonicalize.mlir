// RUN: nanotile-passes %s -p canonicalize | filecheck %s
// canonicalize applies cuda-tile's folders and patterns to a fixed point, as
// cuda-tile-opt -canonicalize: constants uniqued and hoisted, dead ops gone, no arithmetic
// folded. (NVIDIA's test of every pattern is the conformance file
// Dialect/CudaTile/canonicalize.mlir.)

cuda_tile.module @tests {
  // CHECK-LABEL: @constants
  entry @constants(%p: tile<ptr<i32>>, %n: tile<i32>) {
    // The loop's constants join the kernel's: 7 is hoisted before 0 (it does not follow
    // a hoisted constant), the loop's 1 is the kernel's. 0 + 1 is not folded; the unused
    // multiply goes, the unused assume stays (cuda-tile declares no effects for it).
    // CHECK: %[[SEVEN:.*]] = constant <i32: 7>
    // CHECK-NEXT: %[[ZERO:.*]] = constant <i32: 0>
    // CHECK-NEXT: %[[ONE:.*]] = constant <i32: 1>
    // CHECK-NEXT: addi %[[ZERO]], %[[ONE]]
    // CHECK-NOT: muli
    // CHECK: assume bounded<0, ?>
    // CHECK: for
    // CHECK-NOT: constant
    // CHECK: addi %{{.*}}, %[[SEVEN]]
    // CHECK: muli %{{.*}}, %[[ONE]]
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %start = addi %c0, %c1 : tile<i32>
    %unused = muli %n, %n : tile<i32>
    %a = assume bounded<0, ?>, %n : tile<i32>
    %r = for %i in (%start to %n, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
      %seven = constant <i32: 7> : tile<i32>
      %one = constant <i32: 1> : tile<i32>
      %s = addi %acc, %seven : tile<i32>
      %t = muli %s, %one : tile<i32>
      continue %t : tile<i32>
    }
    %x = store_ptr_tko weak %p, %r : tile<ptr<i32>>, tile<i32> -> token
    return
  }

  // CHECK-LABEL: @fixed_point
  // CHECK-SAME: %[[C:[a-z0-9_]+]]: tile<i1>, %[[X:[a-z0-9_]+]]: tile<i32>, %[[Y:[a-z0-9_]+]]: tile<i32>
  entry @fixed_point(%p: tile<ptr<i32>>, %c: tile<i1>, %x: tile<i32>, %y: tile<i32>) {
    // select c, false, true becomes xori c, true (a pattern); the select on it then
    // swaps its arms (a fold), and the xori is left dead.
    // CHECK-NOT: xori
    // CHECK: select %[[C]], %[[Y]], %[[X]] :
    // The first if's result, defined outside it, becomes a select; then the two ifs on c
    // are one.
    // CHECK: %[[V:[a-z0-9_]+]] = select %[[C]], %[[X]], %[[Y]] :
    // CHECK-NEXT: if %[[C]] {
    // CHECK-NEXT: store_ptr_tko weak %{{.*}}, %[[X]] :
    // CHECK-NEXT: store_ptr_tko weak %{{.*}}, %[[V]] :
    // CHECK-NEXT: }
    // CHECK-NEXT: store_ptr_tko weak %{{.*}}, %[[V]] :
    %true = constant <i1: true> : tile<i1>
    %false = constant <i1: false> : tile<i1>
    %nc = select %c, %false, %true : tile<i1>, tile<i1>
    %s = select %nc, %x, %y : tile<i1>, tile<i32>
    %t0 = store_ptr_tko weak %p, %s : tile<ptr<i32>>, tile<i32> -> token
    %v = if %c -> (tile<i32>) {
      %t1 = store_ptr_tko weak %p, %x : tile<ptr<i32>>, tile<i32> -> token
      yield %x : tile<i32>
    } else {
      yield %y : tile<i32>
    }
    if %c {
      %t2 = store_ptr_tko weak %p, %v : tile<ptr<i32>>, tile<i32> -> token
    }
    %t3 = store_ptr_tko weak %p, %v : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
