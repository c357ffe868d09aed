// RUN: nanotile-passes %s -p cse | filecheck %s
// cse merges equal pure ops, treats commutative operands as a set, and uniques
// constants (all moved to the top of the kernel) even across regions.

cuda_tile.module @tests {
  // CHECK-LABEL: @merge
  entry @merge(%p: tile<ptr<f32>>, %x: tile<f32>, %y: tile<f32>) {
    // CHECK: %[[C:.*]] = constant <f32: 2.000000e+00>
    // CHECK-NOT: constant
    // CHECK: %[[A:.*]] = addf %{{.*}}, %{{.*}} : tile<f32>
    // CHECK-NOT: addf
    // CHECK: %[[M:.*]] = mulf %[[A]], %[[C]]
    // CHECK: store_ptr_tko weak %{{.*}}, %[[M]]
    // CHECK: store_ptr_tko weak %{{.*}}, %[[M]]
    %c1 = constant <f32: 2.0> : tile<f32>
    %a1 = addf %x, %y : tile<f32>
    %a2 = addf %y, %x : tile<f32>
    %m1 = mulf %a1, %c1 : tile<f32>
    %c2 = constant <f32: 2.0> : tile<f32>
    %m2 = mulf %a2, %c2 : tile<f32>
    %t1 = store_ptr_tko weak %p, %m1 : tile<ptr<f32>>, tile<f32> -> token
    %t2 = store_ptr_tko weak %p, %m2 : tile<ptr<f32>>, tile<f32> -> token
    return
  }

  // CHECK-LABEL: @not_loads
  entry @not_loads(%p: tile<ptr<f32>>) {
    // loads are not pure: both stay
    // CHECK: load_ptr_tko
    // CHECK: load_ptr_tko
    %v1, %t1 = load_ptr_tko weak %p : tile<ptr<f32>> -> tile<f32>, token
    %v2, %t2 = load_ptr_tko weak %p : tile<ptr<f32>> -> tile<f32>, token
    %s = addf %v1, %v2 : tile<f32>
    %t3 = store_ptr_tko weak %p, %s : tile<ptr<f32>>, tile<f32> -> token
    return
  }

  // CHECK-LABEL: @constants_across_regions
  entry @constants_across_regions(%p: tile<ptr<i32>>, %c: tile<i1>) {
    // CHECK: constant <i32: 7>
    // CHECK-NOT: constant <i32: 7>
    // CHECK: if
    %r = if %c -> (tile<i32>) {
      %a = constant <i32: 7> : tile<i32>
      yield %a : tile<i32>
    } else {
      %b = constant <i32: 7> : tile<i32>
      yield %b : tile<i32>
    }
    %t = store_ptr_tko weak %p, %r : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
