// RUN: nanotile-passes %s -p dce | filecheck %s
// dce removes unused pure ops (whole chains at once) and unused weak loads, and keeps
// stores, atomics and the values they use.

cuda_tile.module @tests {
  // CHECK-LABEL: @dead_chain
  entry @dead_chain(%p: tile<ptr<f32>>, %x: tile<f32>) {
    // CHECK-NOT: mulf
    // CHECK-NOT: addf
    // CHECK-NOT: load_ptr_tko
    %0 = mulf %x, %x : tile<f32>
    %1 = addf %0, %x : tile<f32>
    %v, %t = load_ptr_tko weak %p : tile<ptr<f32>> -> tile<f32>, token
    // CHECK: return
    return
  }

  // CHECK-LABEL: @live_store
  entry @live_store(%p: tile<ptr<f32>>, %x: tile<f32>) {
    // CHECK: %[[M:.*]] = mulf
    // CHECK-NOT: subf
    // CHECK: store_ptr_tko weak %{{.*}}, %[[M]]
    %0 = mulf %x, %x : tile<f32>
    %1 = subf %0, %x : tile<f32>
    %t = store_ptr_tko weak %p, %0 : tile<ptr<f32>>, tile<f32> -> token
    return
  }

  // CHECK-LABEL: @dead_pure_if
  entry @dead_pure_if(%c: tile<i1>, %x: tile<f32>) {
    // CHECK-NOT: if
    %r = if %c -> (tile<f32>) {
      %a = addf %x, %x : tile<f32>
      yield %a : tile<f32>
    } else {
      yield %x : tile<f32>
    }
    // CHECK: return
    return
  }
}
