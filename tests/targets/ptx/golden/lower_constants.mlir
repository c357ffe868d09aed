// RUN: nanotile-passes %s -p lower-views,resolve-tokens,lower-constants | filecheck %s
// lower-constants moves a constant whose elements differ into a module-level table in
// global memory and loads each element from it at its row-major index; a splat constant
// stays an immediate. An i1 table holds one byte per element, compared with zero.

// CHECK-DAG: global constant @__nt_const1 alignment = 16 <i8: [1, 0, 0, 1]> : tile<4xi8>
// CHECK-DAG: global constant @__nt_const0 alignment = 16 <f32: [1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tile<4xf32>
cuda_tile.module @tests {
  // CHECK-LABEL: entry @table(
  entry @table(%p: tile<ptr<f32>>) {
    // CHECK: %[[BASE:.+]] = get_global @__nt_const0 : tile<ptr<f32>>
    // CHECK: iota : tile<4xi32>
    // CHECK: offset
    // CHECK: load_ptr_tko weak %{{.+}} : tile<2x2xptr<f32>> -> tile<2x2xf32>, token
    // CHECK-NOT: constant <f32: [
    // CHECK: constant <f32: 5.000000e-01> : tile<2x2xf32>
    %t = constant <f32: [[1.0, 2.0], [3.0, 4.0]]> : tile<2x2xf32>
    %h = constant <f32: 0.5> : tile<2x2xf32>
    %s = mulf %t, %h : tile<2x2xf32>
    %i = iota : tile<4xi32>
    %r = reshape %i : tile<4xi32> -> tile<2x2xi32>
    %b0 = reshape %p : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %b = broadcast %b0 : tile<1x1xptr<f32>> -> tile<2x2xptr<f32>>
    %q = offset %b, %r : tile<2x2xptr<f32>>, tile<2x2xi32> -> tile<2x2xptr<f32>>
    %w = store_ptr_tko weak %q, %s : tile<2x2xptr<f32>>, tile<2x2xf32> -> token
    return
  }

  // CHECK-LABEL: entry @bits(
  entry @bits(%p: tile<ptr<i32>>) {
    // CHECK: get_global @__nt_const1 : tile<ptr<i8>>
    // CHECK: load_ptr_tko
    // CHECK: cmpi not_equal
    %m = constant <i1: [true, false, false, true]> : tile<4xi1>
    %one = constant <i32: 1> : tile<4xi32>
    %zero = constant <i32: 0> : tile<4xi32>
    %v = select %m, %one, %zero : tile<4xi1>, tile<4xi32>
    %i = iota : tile<4xi32>
    %b0 = reshape %p : tile<ptr<i32>> -> tile<1xptr<i32>>
    %b = broadcast %b0 : tile<1xptr<i32>> -> tile<4xptr<i32>>
    %q = offset %b, %i : tile<4xptr<i32>>, tile<4xi32> -> tile<4xptr<i32>>
    %w = store_ptr_tko weak %q, %v : tile<4xptr<i32>>, tile<4xi32> -> token
    return
  }
}
