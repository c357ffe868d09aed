// RUN: nanotile-passes %s -p simplify-shapes,dce | filecheck %s
// simplify-shapes removes shape ops that do nothing and collapses reshape and broadcast
// chains into one op.

cuda_tile.module @tests {
  // CHECK-LABEL: @chains
  entry @chains(%p: tile<ptr<f32>>, %x: tile<f32>) {
    // CHECK-NOT: tile<1xf32>
    // CHECK: %[[R:.*]] = reshape %{{[a-z0-9_]+}} : tile<f32> -> tile<1x1xf32>
    // CHECK-NEXT: %[[B:.*]] = broadcast %[[R]] : tile<1x1xf32> -> tile<4x8xf32>
    // CHECK-NOT: tile<1x8xf32>
    // CHECK-NOT: permute
    // CHECK: addf %[[B]], %[[B]]
    %r1 = reshape %x : tile<f32> -> tile<1xf32>
    %r2 = reshape %r1 : tile<1xf32> -> tile<1x1xf32>
    %b1 = broadcast %r2 : tile<1x1xf32> -> tile<1x8xf32>
    %b2 = broadcast %b1 : tile<1x8xf32> -> tile<4x8xf32>
    %same = reshape %b2 : tile<4x8xf32> -> tile<4x8xf32>
    %id = permute %same [0, 1] : tile<4x8xf32> -> tile<4x8xf32>
    %s = addf %id, %b2 : tile<4x8xf32>
    %q = reshape %p : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %ps = broadcast %q : tile<1x1xptr<f32>> -> tile<4x8xptr<f32>>
    %tok = store_ptr_tko weak %ps, %s : tile<4x8xptr<f32>>, tile<4x8xf32> -> token
    return
  }

  // CHECK-LABEL: @kept
  entry @kept(%p: tile<ptr<f32>>) {
    // a real permutation stays
    // CHECK: permute %{{[a-z0-9_]+}} [1, 0]
    %i = iota : tile<16xi32>
    %f = itof %i signed : tile<16xi32> -> tile<16xf32>
    %t = reshape %f : tile<16xf32> -> tile<2x8xf32>
    %u = permute %t [1, 0] : tile<2x8xf32> -> tile<8x2xf32>
    %q = reshape %p : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %ps = broadcast %q : tile<1x1xptr<f32>> -> tile<8x2xptr<f32>>
    %tok = store_ptr_tko weak %ps, %u : tile<8x2xptr<f32>>, tile<8x2xf32> -> token
    return
  }
}
