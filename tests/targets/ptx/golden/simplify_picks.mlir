// RUN: nanotile-passes %s -p lower-views,resolve-tokens,assign-layouts{gpu=sm_90},lower-convert-layout,allocate-shared,insert-barriers,distribute,lower-mma,simplify-picks | filecheck %s
// simplify-picks: lower-mma hands the four registers of the A fragment to each mma_sync
// through a pick of all of them, in order (an identity); after the pass mma_sync reads
// the ldmatrix result itself, and the picks that remain choose a real part of a value
// (half of B's fragments, half of the accumulator) or put parts together.

// CHECK-LABEL: entry @mma(
// CHECK: %[[A:.+]] = ldmatrix from tile<32x16xf16, {{.+}} x 4 [0] : tile<4xi32, #regs>
// CHECK: %[[B:.+]] = ldmatrix from tile<16x32xf16, {{.+}} x 4 trans [0] : tile<4xi32, #regs>
// CHECK-NEXT: %[[B0:.+]] = pick %[[B]] [0, 1]
// CHECK-NEXT: %[[D0:.+]] = mma_sync %[[A]], %[[B0]],
// CHECK-NEXT: %[[B1:.+]] = pick %[[B]] [2, 3]
// CHECK-NEXT: %[[D1:.+]] = mma_sync %[[A]], %[[B1]],
// CHECK-NEXT: pick %[[D0]], %[[D1]] [0, 1, 2, 3, 4, 5, 6, 7]
cuda_tile.module @tests {
  entry @mma(%pa: tile<ptr<f16>>, %pc: tile<ptr<f32>>) {
    %i = iota : tile<512xi32>
    %r = reshape %i : tile<512xi32> -> tile<32x16xi32>
    %b0 = reshape %pa : tile<ptr<f16>> -> tile<1x1xptr<f16>>
    %b = broadcast %b0 : tile<1x1xptr<f16>> -> tile<32x16xptr<f16>>
    %pa2 = offset %b, %r : tile<32x16xptr<f16>>, tile<32x16xi32> -> tile<32x16xptr<f16>>
    %r2 = reshape %i : tile<512xi32> -> tile<16x32xi32>
    %c0 = broadcast %b0 : tile<1x1xptr<f16>> -> tile<16x32xptr<f16>>
    %pb = offset %c0, %r2 : tile<16x32xptr<f16>>, tile<16x32xi32> -> tile<16x32xptr<f16>>
    %zero = constant <f32: 0.0> : tile<32x32xf32>
    %a, %t1 = load_ptr_tko weak %pa2 : tile<32x16xptr<f16>> -> tile<32x16xf16>, token
    %bb, %t2 = load_ptr_tko weak %pb : tile<16x32xptr<f16>> -> tile<16x32xf16>, token
    %d = mmaf %a, %bb, %zero : tile<32x16xf16>, tile<16x32xf16>, tile<32x32xf32>
    %i3 = iota : tile<1024xi32>
    %r3 = reshape %i3 : tile<1024xi32> -> tile<32x32xi32>
    %p0 = reshape %pc : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %p1 = broadcast %p0 : tile<1x1xptr<f32>> -> tile<32x32xptr<f32>>
    %p2 = offset %p1, %r3 : tile<32x32xptr<f32>>, tile<32x32xi32> -> tile<32x32xptr<f32>>
    %w = store_ptr_tko weak %p2, %d : tile<32x32xptr<f32>>, tile<32x32xf32> -> token
    return
  }
}
