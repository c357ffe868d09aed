// RUN: nanotile-passes %s -p 'lower-views,resolve-tokens,assign-layouts{gpu=sm_90 mma=wgmma},lower-convert-layout,allocate-shared,insert-barriers,distribute,lower-wgmma' | filecheck %s
// lower-wgmma expands warpgroup_mma (a 64x64 f32 accumulator of one warpgroup: one
// m64n64k16 per K step) into the wgmma sequence: fence_proxy_async before the barrier
// that publishes A and B (written to shared memory by ordinary stores, read by wgmma
// through the async proxy); wgmma_fence, which hands the accumulator's 32 registers to
// wgmma; per K step of 16 a descriptor of A and of B (32 bytes further along the
// 64-byte rows: the 64-byte swizzle is applied by the hardware; 512 bytes from one
// 8-row group to the next) and a wgmma_mma_async (B K-major, as its registers run:
// no trans_b);
// then commit and wait for it before the accumulator is read. The kernel: a 64x32 by
// 32x64 f16 matmul, taken down to simt first.

// CHECK-LABEL: entry @mma(
// CHECK-NOT: warpgroup_mma
// CHECK: fence_proxy_async
// CHECK-NEXT: barrier
// CHECK: %[[F:.+]] = wgmma_fence %zero : tile<32xf32, #regs>
// CHECK: %[[P:.+]] = pick %[[F]]
// CHECK: %[[A0:.+]] = wgmma_descriptor of tile<64x32xf16, #shared<offset=0, swizzle=[8, 2, 4], align=512>> at 0 leading 16 stride 512 swizzle 64 grid [1, 1] steps [0, 0]
// CHECK: %[[B0:.+]] = wgmma_descriptor of tile<32x64xf16, #shared<offset=4096, swizzle=[8, 2, 4], order=[0, 1], align=512>> at 0 leading 16 stride 512 swizzle 64
// CHECK: %[[D0:.+]] = wgmma_mma_async %[[P]], %[[A0]], %[[B0]] using "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"
// CHECK: %[[A1:.+]] = wgmma_descriptor of {{.+}} at 32 leading
// CHECK: %[[B1:.+]] = wgmma_descriptor of {{.+}} at 32 leading
// CHECK: %[[D1:.+]] = wgmma_mma_async %[[D0]], %[[A1]], %[[B1]] using "{{[^"]+}}" :
// CHECK: wgmma_commit
// CHECK-NEXT: wgmma_wait 0
// CHECK-NOT: warpgroup_mma
cuda_tile.module @tests {
  entry @mma(%pa: tile<ptr<f16>>, %pc: tile<ptr<f32>>) {
    %i = iota : tile<2048xi32>
    %r = reshape %i : tile<2048xi32> -> tile<64x32xi32>
    %b0 = reshape %pa : tile<ptr<f16>> -> tile<1x1xptr<f16>>
    %b = broadcast %b0 : tile<1x1xptr<f16>> -> tile<64x32xptr<f16>>
    %pa2 = offset %b, %r : tile<64x32xptr<f16>>, tile<64x32xi32> -> tile<64x32xptr<f16>>
    %r2 = reshape %i : tile<2048xi32> -> tile<32x64xi32>
    %c0 = broadcast %b0 : tile<1x1xptr<f16>> -> tile<32x64xptr<f16>>
    %pb = offset %c0, %r2 : tile<32x64xptr<f16>>, tile<32x64xi32> -> tile<32x64xptr<f16>>
    %zero = constant <f32: 0.0> : tile<64x64xf32>
    %a, %t1 = load_ptr_tko weak %pa2 : tile<64x32xptr<f16>> -> tile<64x32xf16>, token
    %bb, %t2 = load_ptr_tko weak %pb : tile<32x64xptr<f16>> -> tile<32x64xf16>, token
    %d = mmaf %a, %bb, %zero : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32>
    %i3 = iota : tile<4096xi32>
    %r3 = reshape %i3 : tile<4096xi32> -> tile<64x64xi32>
    %p0 = reshape %pc : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %p1 = broadcast %p0 : tile<1x1xptr<f32>> -> tile<64x64xptr<f32>>
    %p2 = offset %p1, %r3 : tile<64x64xptr<f32>>, tile<64x64xi32> -> tile<64x64xptr<f32>>
    %w = store_ptr_tko weak %p2, %d : tile<64x64xptr<f32>>, tile<64x64xf32> -> token
    return
  }

  // tf32 (m64nNk8) and f8 (m64nNk32): each K step is 32 bytes of a row, as for f16 (8
  // tf32, 32 f8 elements), A and B both K-major (B order=[0, 1]), the opcodes without
  // transpose operands; tf32 operands loaded as they are get rounded to nearest first
  // (ftof to f32 and back, before they are stored: wgmma truncates).
  // CHECK-LABEL: entry @tf32(
  // CHECK: ftof %a {{.*}}-> tile<8xf32, #regs>
  // CHECK-NEXT: ftof {{.*}}-> tile<8xtf32, #regs>
  // CHECK: wgmma_fence
  // CHECK: wgmma_descriptor of tile<64x16xtf32, #shared<offset=0, swizzle=[4, 2, 4], align=512>> at 0 leading 16 stride 512 swizzle 64
  // CHECK: wgmma_descriptor of tile<16x64xtf32, #shared<{{.+}}order=[0, 1]{{.+}} at 0 leading 16 stride 512 swizzle 64
  // CHECK: wgmma_mma_async {{.+}} using "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32" :
  // CHECK: wgmma_descriptor of {{.+}} at 32 leading
  // CHECK: wgmma_descriptor of {{.+}} at 32 leading
  // CHECK: wgmma_mma_async {{.+}} using "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32" :
  // CHECK-NOT: wgmma_mma_async
  // CHECK: wgmma_commit
  // CHECK-LABEL: entry @f8(
  // CHECK-NOT: ftof
  // CHECK: wgmma_descriptor of tile<64x64xf8E5M2, #shared<offset=0, swizzle=[16, 2, 4], align=512>> at 0 leading 16 stride 512 swizzle 64
  // CHECK: wgmma_descriptor of tile<64x64xf8E5M2, #shared<{{.+}}order=[0, 1]{{.+}} at 0 leading 16 stride 512 swizzle 64
  // CHECK: wgmma_mma_async {{.+}} using "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2" :
  // CHECK: wgmma_descriptor of {{.+}} at 32 leading
  // CHECK: wgmma_descriptor of {{.+}} at 32 leading
  // CHECK: wgmma_mma_async {{.+}} using "wgmma.mma_async.sync.aligned.m64n64k32.f32.e5m2.e5m2" :
  // CHECK-NOT: wgmma_mma_async
  // CHECK: wgmma_commit
  entry @tf32(%pa: tile<ptr<tf32>>, %pc: tile<ptr<f32>>) {
    %i = iota : tile<1024xi32>
    %r = reshape %i : tile<1024xi32> -> tile<64x16xi32>
    %b0 = reshape %pa : tile<ptr<tf32>> -> tile<1x1xptr<tf32>>
    %b = broadcast %b0 : tile<1x1xptr<tf32>> -> tile<64x16xptr<tf32>>
    %pa2 = offset %b, %r : tile<64x16xptr<tf32>>, tile<64x16xi32> -> tile<64x16xptr<tf32>>
    %r2 = reshape %i : tile<1024xi32> -> tile<16x64xi32>
    %c0 = broadcast %b0 : tile<1x1xptr<tf32>> -> tile<16x64xptr<tf32>>
    %pb = offset %c0, %r2 : tile<16x64xptr<tf32>>, tile<16x64xi32> -> tile<16x64xptr<tf32>>
    %zero = constant <f32: 0.0> : tile<64x64xf32>
    %a, %t1 = load_ptr_tko weak %pa2 : tile<64x16xptr<tf32>> -> tile<64x16xtf32>, token
    %bb, %t2 = load_ptr_tko weak %pb : tile<16x64xptr<tf32>> -> tile<16x64xtf32>, token
    %d = mmaf %a, %bb, %zero : tile<64x16xtf32>, tile<16x64xtf32>, tile<64x64xf32>
    %i3 = iota : tile<4096xi32>
    %r3 = reshape %i3 : tile<4096xi32> -> tile<64x64xi32>
    %p0 = reshape %pc : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %p1 = broadcast %p0 : tile<1x1xptr<f32>> -> tile<64x64xptr<f32>>
    %p2 = offset %p1, %r3 : tile<64x64xptr<f32>>, tile<64x64xi32> -> tile<64x64xptr<f32>>
    %w = store_ptr_tko weak %p2, %d : tile<64x64xptr<f32>>, tile<64x64xf32> -> token
    return
  }
  entry @f8(%pa: tile<ptr<f8E5M2>>, %pb: tile<ptr<f8E5M2>>, %pc: tile<ptr<f32>>) {
    %i = iota : tile<4096xi32>
    %r = reshape %i : tile<4096xi32> -> tile<64x64xi32>
    %a0 = reshape %pa : tile<ptr<f8E5M2>> -> tile<1x1xptr<f8E5M2>>
    %ab = broadcast %a0 : tile<1x1xptr<f8E5M2>> -> tile<64x64xptr<f8E5M2>>
    %pa2 = offset %ab, %r : tile<64x64xptr<f8E5M2>>, tile<64x64xi32> -> tile<64x64xptr<f8E5M2>>
    %b0 = reshape %pb : tile<ptr<f8E5M2>> -> tile<1x1xptr<f8E5M2>>
    %bb0 = broadcast %b0 : tile<1x1xptr<f8E5M2>> -> tile<64x64xptr<f8E5M2>>
    %pb2 = offset %bb0, %r : tile<64x64xptr<f8E5M2>>, tile<64x64xi32> -> tile<64x64xptr<f8E5M2>>
    %zero = constant <f32: 0.0> : tile<64x64xf32>
    %a, %t1 = load_ptr_tko weak %pa2 : tile<64x64xptr<f8E5M2>> -> tile<64x64xf8E5M2>, token
    %bb, %t2 = load_ptr_tko weak %pb2 : tile<64x64xptr<f8E5M2>> -> tile<64x64xf8E5M2>, token
    %d = mmaf %a, %bb, %zero : tile<64x64xf8E5M2>, tile<64x64xf8E5M2>, tile<64x64xf32>
    %p0 = reshape %pc : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %p1 = broadcast %p0 : tile<1x1xptr<f32>> -> tile<64x64xptr<f32>>
    %p2 = offset %p1, %r : tile<64x64xptr<f32>>, tile<64x64xi32> -> tile<64x64xptr<f32>>
    %w = store_ptr_tko weak %p2, %d : tile<64x64xptr<f32>>, tile<64x64xf32> -> token
    return
  }
}
