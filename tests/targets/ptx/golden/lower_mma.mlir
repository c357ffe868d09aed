// RUN: nanotile-passes %s -p lower-views,resolve-tokens,assign-layouts{gpu=sm_90},lower-convert-layout,allocate-shared,insert-barriers,distribute,lower-mma | filecheck %s
// lower-mma expands warp_mma (a 32x32 f32 accumulator over 2x2 warps, each owning one
// 16x16 block: two 16x8 tiles) into fragment loads and mma.sync: one ldmatrix.x4 of the
// warp's 16x16 A block, one ldmatrix.x4.trans of its 16x16 block of the row-major B (two
// 8-column tiles), and one mma_sync per tile on its four accumulator registers; the
// results are put back together as the accumulator's eight registers (a pick, no
// instruction). The kernel: a 32x16 by 16x32 f16 matmul, taken down to simt first.

// CHECK-LABEL: entry @mma(
// CHECK-NOT: warp_mma
// CHECK: %[[C0:.+]] = pick %zero [0, 1, 2, 3]
// CHECK: %[[C1:.+]] = pick %zero [4, 5, 6, 7]
// CHECK: %[[A:.+]] = ldmatrix from tile<32x16xf16, #shared<offset=0, {{.+}}>> at {{.+}} x 4 [0] : tile<4xi32, #regs>
// CHECK: %[[B:.+]] = ldmatrix from tile<16x32xf16, #shared<offset=1024, {{.+}}>> at {{.+}} x 4 trans [0] : tile<4xi32, #regs>
// CHECK: %[[B0:.+]] = pick %[[B]] [0, 1]
// CHECK: %[[D0:.+]] = mma_sync %{{.+}}, %[[B0]], %[[C0]] using "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
// CHECK: %[[B1:.+]] = pick %[[B]] [2, 3]
// CHECK: %[[D1:.+]] = mma_sync %{{.+}}, %[[B1]], %[[C1]] using
// CHECK: pick %[[D0]], %[[D1]] [0, 1, 2, 3, 4, 5, 6, 7] : tile<4xf32, #regs>, tile<4xf32, #regs> -> tile<8xf32, #regs>
// CHECK-NOT: warp_mma
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
