// RUN: nanotile-passes %s -p fold-static-if,dce | filecheck %s
// fold-static-if inlines the branch an if on a constant condition takes; branches that
// leave by continue (or return) stay.

cuda_tile.module @tests {
  // CHECK-LABEL: @static
  entry @static(%p: tile<ptr<f32>>, %x: tile<f32>) {
    // CHECK-NOT: if
    // CHECK: %[[M:.*]] = mulf
    // CHECK-NOT: addf
    // CHECK: store_ptr_tko weak %{{.*}}, %[[M]]
    // CHECK: store_ptr_tko weak %{{.*}}, %{{[a-z0-9_]+}} :
    %true = constant <i1: true> : tile<i1>
    %false = constant <i1: false> : tile<i1>
    %r = if %true -> (tile<f32>) {
      %m = mulf %x, %x : tile<f32>
      yield %m : tile<f32>
    } else {
      %a = addf %x, %x : tile<f32>
      yield %a : tile<f32>
    }
    %r2 = if %false -> (tile<f32>) {
      %a2 = addf %x, %x : tile<f32>
      yield %a2 : tile<f32>
    } else {
      yield %x : tile<f32>
    }
    %t1 = store_ptr_tko weak %p, %r : tile<ptr<f32>>, tile<f32> -> token
    %t2 = store_ptr_tko weak %p, %r2 : tile<ptr<f32>>, tile<f32> -> token
    return
  }

  // CHECK-LABEL: @early_exit
  entry @early_exit(%p: tile<ptr<i32>>, %n: tile<i32>) {
    // the taken branch continues: kept. The other if takes its empty else: gone.
    // CHECK: for
    // CHECK: if
    // CHECK: continue
    // CHECK-NOT: if
    %true = constant <i1: true> : tile<i1>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %r = for %i in (%c0 to %n, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
      if %true {
        continue %acc : tile<i32>
      } else {
      }
      %false = constant <i1: false> : tile<i1>
      if %false {
        continue %acc : tile<i32>
      } else {
      }
      %next = addi %acc, %i : tile<i32>
      continue %next : tile<i32>
    }
    %t = store_ptr_tko weak %p, %r : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
