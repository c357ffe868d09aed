// RUN: nanotile-passes %s -p 'lower-views,resolve-tokens,assign-layouts{gpu=sm_90 mma=wgmma}' | filecheck %s
// assign-layouts{mma=wgmma} asks sm_90's wgmma plan first (targets/sm90/wgmma_plan.py):
// @wgmma (128x64 by 64x128 f16 -> f32, one warpgroup) gets the #wgmma accumulator (two
// 64-row blocks of m64n128k16, held in registers through the store) and its operands
// are converted to wgmma's K-major shared layouts (128-byte rows, swizzled, 1024-byte
// aligned: B transposed, order=[0, 1]); @small (32 rows: less than a 64-row block)
// keeps the mma.sync plan, its fragments and ldmatrix layouts.

// CHECK-LABEL: entry @wgmma(
// CHECK: convert_layout %a : {{.+}} -> tile<128x64xf16, #shared<offset=?, swizzle=[8, 1, 8], align=1024>>
// CHECK: convert_layout %bb : {{.+}} -> tile<64x128xf16, #shared<offset=?, swizzle=[8, 1, 8], order=[0, 1], align=1024>>
// CHECK: %d = mmaf {{.+}} : {{.+}}, tile<128x128xf32, #wgmma<acc, m64n128k16, warpgroups=[1, 1]>>
// CHECK: store_ptr_tko weak %p2, %d : tile<128x128xptr<f32>, #wgmma<acc, m64n128k16, warpgroups=[1, 1]>>
// CHECK-LABEL: entry @small(
// CHECK: convert_layout %a : {{.+}} -> tile<32x32xf16, #shared<offset=?, swizzle=[8, 2, 4]>>
// CHECK: %d = mmaf {{.+}} : {{.+}}, tile<32x32xf32, #mma<acc, m16n8, warps=[2, 2]>>
cuda_tile.module @tests {
  entry @wgmma(%pa: tile<ptr<f16>>, %pc: tile<ptr<f32>>) {
    %i = iota : tile<8192xi32>
    %r = reshape %i : tile<8192xi32> -> tile<128x64xi32>
    %b0 = reshape %pa : tile<ptr<f16>> -> tile<1x1xptr<f16>>
    %b = broadcast %b0 : tile<1x1xptr<f16>> -> tile<128x64xptr<f16>>
    %pa2 = offset %b, %r : tile<128x64xptr<f16>>, tile<128x64xi32> -> tile<128x64xptr<f16>>
    %j = iota : tile<8192xi32>
    %r2 = reshape %j : tile<8192xi32> -> tile<64x128xi32>
    %c0 = broadcast %b0 : tile<1x1xptr<f16>> -> tile<64x128xptr<f16>>
    %pb = offset %c0, %r2 : tile<64x128xptr<f16>>, tile<64x128xi32> -> tile<64x128xptr<f16>>
    %zero = constant <f32: 0.0> : tile<128x128xf32>
    %a, %t1 = load_ptr_tko weak %pa2 : tile<128x64xptr<f16>> -> tile<128x64xf16>, token
    %bb, %t2 = load_ptr_tko weak %pb : tile<64x128xptr<f16>> -> tile<64x128xf16>, token
    %d = mmaf %a, %bb, %zero : tile<128x64xf16>, tile<64x128xf16>, tile<128x128xf32>
    %i3 = iota : tile<16384xi32>
    %r3 = reshape %i3 : tile<16384xi32> -> tile<128x128xi32>
    %p0 = reshape %pc : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %p1 = broadcast %p0 : tile<1x1xptr<f32>> -> tile<128x128xptr<f32>>
    %p2 = offset %p1, %r3 : tile<128x128xptr<f32>>, tile<128x128xi32> -> tile<128x128xptr<f32>>
    %w = store_ptr_tko weak %p2, %d : tile<128x128xptr<f32>>, tile<128x128xf32> -> token
    return
  }
  entry @small(%pa: tile<ptr<f16>>, %pc: tile<ptr<f32>>) {
    %i = iota : tile<1024xi32>
    %r = reshape %i : tile<1024xi32> -> tile<32x32xi32>
    %b0 = reshape %pa : tile<ptr<f16>> -> tile<1x1xptr<f16>>
    %b = broadcast %b0 : tile<1x1xptr<f16>> -> tile<32x32xptr<f16>>
    %pa2 = offset %b, %r : tile<32x32xptr<f16>>, tile<32x32xi32> -> tile<32x32xptr<f16>>
    %j = iota : tile<1024xi32>
    %r2 = reshape %j : tile<1024xi32> -> tile<32x32xi32>
    %c0 = broadcast %b0 : tile<1x1xptr<f16>> -> tile<32x32xptr<f16>>
    %pb = offset %c0, %r2 : tile<32x32xptr<f16>>, tile<32x32xi32> -> tile<32x32xptr<f16>>
    %zero = constant <f32: 0.0> : tile<32x32xf32>
    %a, %t1 = load_ptr_tko weak %pa2 : tile<32x32xptr<f16>> -> tile<32x32xf16>, token
    %bb, %t2 = load_ptr_tko weak %pb : tile<32x32xptr<f16>> -> tile<32x32xf16>, token
    %d = mmaf %a, %bb, %zero : tile<32x32xf16>, tile<32x32xf16>, tile<32x32xf32>
    %i3 = iota : tile<1024xi32>
    %r3 = reshape %i3 : tile<1024xi32> -> tile<32x32xi32>
    %p0 = reshape %pc : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %p1 = broadcast %p0 : tile<1x1xptr<f32>> -> tile<32x32xptr<f32>>
    %p2 = offset %p1, %r3 : tile<32x32xptr<f32>>, tile<32x32xi32> -> tile<32x32xptr<f32>>
    %w = store_ptr_tko weak %p2, %d : tile<32x32xptr<f32>>, tile<32x32xf32> -> token
    return
  }
}
