// RUN: nanotile-passes %s -p 'lower-views,resolve-tokens,assign-layouts{gpu=sm_90 strategy=greedy},remove-layout-conversions' | filecheck %s
// remove-layout-conversions: the iota %i indexes both the rows and the columns of a
// 64x64 tile, so assign-layouts gives it one layout and converts it for the other user
// (a round trip through shared memory). The pass computes the iota again, in the
// layout the row reshape wants, and the conversion goes. The conversion that transposes
// the loaded tile stays: its elements must move between threads. (On greedy's layouts:
// the layout e-graph, strategy=eqsat, converts the broadcast iota instead, which the pass
// computes again just as well.)

// CHECK-LABEL: entry @transpose(
// CHECK: %i = iota : tile<64xi32, #linear<register=[], lane=[[1], [2], [4], [8], [16]], warp=[[32]]>>
// CHECK-NEXT: %[[ROWS:.+]] = iota : tile<64xi32, #linear<register=[[1], [2], [4], [8], [16]], lane=[], warp=[[0], [32]]>>
// CHECK-NEXT: %r = reshape %[[ROWS]]
// CHECK-NOT: convert_layout %i
// CHECK: %c = reshape %i
// CHECK: load_ptr_tko
// CHECK-NEXT: convert_layout
// CHECK-NEXT: permute
cuda_tile.module @tests {
  entry @transpose(%p: tile<ptr<f32>>, %q: tile<ptr<f32>>) {
    %i = iota : tile<64xi32>
    %r = reshape %i : tile<64xi32> -> tile<64x1xi32>
    %rb = broadcast %r : tile<64x1xi32> -> tile<64x64xi32>
    %c = reshape %i : tile<64xi32> -> tile<1x64xi32>
    %cb = broadcast %c : tile<1x64xi32> -> tile<64x64xi32>
    %k = constant <i32: 64> : tile<64x64xi32>
    %rk = muli %rb, %k : tile<64x64xi32>
    %idx = addi %rk, %cb : tile<64x64xi32>
    %b0 = reshape %p : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %b = broadcast %b0 : tile<1x1xptr<f32>> -> tile<64x64xptr<f32>>
    %a = offset %b, %idx : tile<64x64xptr<f32>>, tile<64x64xi32> -> tile<64x64xptr<f32>>
    %x, %t = load_ptr_tko weak %a : tile<64x64xptr<f32>> -> tile<64x64xf32>, token
    %y = permute %x [1, 0] : tile<64x64xf32> -> tile<64x64xf32>
    %q0 = reshape %q : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %qb = broadcast %q0 : tile<1x1xptr<f32>> -> tile<64x64xptr<f32>>
    %qa = offset %qb, %idx : tile<64x64xptr<f32>>, tile<64x64xi32> -> tile<64x64xptr<f32>>
    %w = store_ptr_tko weak %qa, %y : tile<64x64xptr<f32>>, tile<64x64xf32> -> token
    return
  }
}
