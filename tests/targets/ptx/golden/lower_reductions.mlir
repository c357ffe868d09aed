// RUN: nanotile-passes %s -p lower-views,resolve-tokens,assign-layouts{gpu=sm_90},lower-reductions | filecheck %s
// lower-reductions splits a reduce whose combiner may be reordered (one addf rounding to
// nearest) along a row held by registers, lanes and warps: reshape/permute group the
// row's index bits by what holds them (free: a linear layout relabels bits), then a
// reduce in registers, one across lanes, a conversion that puts the warps' partials in
// registers, and a last reduce. A reduce of several operands (argmax: value and index,
// ties to the lower index) is split the same way, every step reducing both operands with
// the whole body. A float body rounding towards +inf (which the oracles accept only as
// the sequential fold) is left to read its operand from shared memory in order.

cuda_tile.module @tests {
  // CHECK-LABEL: entry @row_sum(
  // CHECK: reshape {{.+}} -> tile<2x2x2x2x2x2x2x2x2x2xf32,
  // CHECK: permute
  // CHECK: reshape {{.+}} -> tile<8x32x4xf32,
  // CHECK: reduce {{.+}} dim=0
  // CHECK: reduce {{.+}} dim=0
  // CHECK: convert_layout {{.+}} : tile<4xf32, {{.+}}> -> tile<4xf32, #linear<register=[[1], [2]], lane=[], warp=[]>>
  // CHECK: reduce {{.+}} dim=0 {{.+}} -> tile<f32, #replicated>
  entry @row_sum(%p: tile<ptr<f32>>, %q: tile<ptr<f32>>) {
    %i = iota : tile<1024xi32>
    %b0 = reshape %p : tile<ptr<f32>> -> tile<1xptr<f32>>
    %b = broadcast %b0 : tile<1xptr<f32>> -> tile<1024xptr<f32>>
    %a = offset %b, %i : tile<1024xptr<f32>>, tile<1024xi32> -> tile<1024xptr<f32>>
    %x, %t = load_ptr_tko weak %a : tile<1024xptr<f32>> -> tile<1024xf32>, token
    %s = reduce %x dim=0 identities=[0.000000e+00 : f32] : tile<1024xf32> -> tile<f32>
    (%e: tile<f32>, %acc: tile<f32>) {
      %n = addf %e, %acc : tile<f32>
      yield %n : tile<f32>
    }
    %w = store_ptr_tko weak %q, %s : tile<ptr<f32>>, tile<f32> -> token
    return
  }

  // CHECK-LABEL: entry @ordered_sum(
  // CHECK-NOT: permute
  // CHECK: convert_layout {{.+}} -> tile<1024xf32, #shared<offset=?>>
  // CHECK: reduce
  entry @ordered_sum(%p: tile<ptr<f32>>, %q: tile<ptr<f32>>) {
    %i = iota : tile<1024xi32>
    %b0 = reshape %p : tile<ptr<f32>> -> tile<1xptr<f32>>
    %b = broadcast %b0 : tile<1xptr<f32>> -> tile<1024xptr<f32>>
    %a = offset %b, %i : tile<1024xptr<f32>>, tile<1024xi32> -> tile<1024xptr<f32>>
    %x, %t = load_ptr_tko weak %a : tile<1024xptr<f32>> -> tile<1024xf32>, token
    %s = reduce %x dim=0 identities=[0.000000e+00 : f32] : tile<1024xf32> -> tile<f32>
    (%e: tile<f32>, %acc: tile<f32>) {
      %n = addf %e, %acc rounding<positive_inf> : tile<f32>
      yield %n : tile<f32>
    }
    %w = store_ptr_tko weak %q, %s : tile<ptr<f32>>, tile<f32> -> token
    return
  }

  // CHECK-LABEL: entry @argmax(
  // CHECK: reshape {{.+}} -> tile<2x2x2x2x2x2x2x2x2x2xf32,
  // CHECK: reshape {{.+}} -> tile<2x2x2x2x2x2x2x2x2x2xi32,
  // CHECK: reshape {{.+}} -> tile<8x32x4xf32,
  // CHECK: reshape {{.+}} -> tile<8x32x4xi32,
  // CHECK: reduce {{.+}} dim=0 {{.+}} -> tile<32x4xf32, {{.+}}>, tile<32x4xi32,
  // CHECK: select
  // CHECK: reduce {{.+}} dim=0 {{.+}} -> tile<4xf32, {{.+}}>, tile<4xi32,
  // CHECK: convert_layout {{.+}} : tile<4xf32, {{.+}}> -> tile<4xf32, #linear<register=[[1], [2]], lane=[], warp=[]>>
  // CHECK: convert_layout {{.+}} : tile<4xi32, {{.+}}> -> tile<4xi32, #linear<register=[[1], [2]], lane=[], warp=[]>>
  // CHECK: reduce {{.+}} dim=0 {{.+}} -> tile<f32, #replicated>, tile<i32, #replicated>
  // CHECK-NOT: #shared
  entry @argmax(%p: tile<ptr<f32>>, %q: tile<ptr<i32>>) {
    %i = iota : tile<1024xi32>
    %b0 = reshape %p : tile<ptr<f32>> -> tile<1xptr<f32>>
    %b = broadcast %b0 : tile<1xptr<f32>> -> tile<1024xptr<f32>>
    %a = offset %b, %i : tile<1024xptr<f32>>, tile<1024xi32> -> tile<1024xptr<f32>>
    %x, %t = load_ptr_tko weak %a : tile<1024xptr<f32>> -> tile<1024xf32>, token
    %r:2 = reduce %x, %i dim=0 identities=[0xFF800000 : f32, 0 : i32] : tile<1024xf32>, tile<1024xi32> -> tile<f32>, tile<i32>
    (%v0: tile<f32>, %v1: tile<f32>, %j0: tile<i32>, %j1: tile<i32>) {
      %gt = cmpf greater_than ordered %v0, %v1 : tile<f32> -> tile<i1>
      %eq = cmpf equal ordered %v0, %v1 : tile<f32> -> tile<i1>
      %lt = cmpi less_than %j0, %j1, signed : tile<i32> -> tile<i1>
      %tie = andi %eq, %lt : tile<i1>
      %take = ori %gt, %tie : tile<i1>
      %v = select %take, %v0, %v1 : tile<i1>, tile<f32>
      %j = select %take, %j0, %j1 : tile<i1>, tile<i32>
      yield %v, %j : tile<f32>, tile<i32>
    }
    %w = store_ptr_tko weak %q, %r#1 : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
