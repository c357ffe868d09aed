// RUN: nanotile-passes %s -p 'lower-views,resolve-tokens,assign-layouts{gpu=sm_100 mma=tcgen05},lower-convert-layout,allocate-shared,insert-barriers,distribute,lower-tcgen05' | filecheck %s
// lower-tcgen05 expands tmem_mma (a 128x64 f32 accumulator in the #tmem layout: thread t
// of warp w holds row 32 w + t, 64 registers) into the tcgen05 sequence. The kernel: a K
// loop (two steps) of 128x32 by 32x64 f16 matmuls, taken down to simt first. The entry
// allocates 64 columns of tensor memory (a power of two of at least 32) and frees them
// before it returns, after a barrier; the accumulator stays in tensor memory across the loop:
// stored (the zeros) before it, loaded after it, and the loop carries nothing. In the
// loop: fence_proxy_async (A and B were written by ordinary stores, the MMA reads them
// through the async proxy), tcgen05_barrier (every warp's stores before thread 0's MMA),
// per K step of 16 a descriptor of A and of B (32 bytes further along the 64-byte rows;
// 512 bytes from one 8-row group to the next) and a tcgen05_mma with the instruction
// descriptor 0x08100010 (f32 D, f16 A and B, both K-major, N = 64, M = 128), then the
// commit and every thread's wait.

// CHECK-LABEL: entry @mma(
// CHECK-NEXT: %[[T:.+]] = tmem_alloc 64 : tile<i32, #regs>
// CHECK-NOT: tmem_mma
// CHECK: tmem_store %zero to %[[T]] column 0 : tile<64xf32, #regs>, tile<i32, #regs>
// CHECK-NEXT: for %k in (%lo to %n, step %one) : tile<i32, #regs> {
// CHECK: shared_store %bb
// CHECK-NEXT: barrier
// CHECK-NEXT: fence_proxy_async
// CHECK-NEXT: tcgen05_barrier
// CHECK-NEXT: %[[A0:.+]] = tcgen05_descriptor of tile<128x32xf16, #shared<offset=0, swizzle=[8, 2, 4], align=512>> at 0 leading 16 stride 512 swizzle 64
// CHECK-NEXT: %[[B0:.+]] = tcgen05_descriptor of tile<32x64xf16, #shared<offset=8192, swizzle=[8, 2, 4], order=[0, 1], align=512>> at 0 leading 16 stride 512 swizzle 64
// CHECK-NEXT: tcgen05_mma %[[T]], %[[A0]], %[[B0]] idesc 135266320 kind "f16" column 0
// CHECK-NEXT: %[[A1:.+]] = tcgen05_descriptor of {{.+}} at 32 leading 16 stride 512
// CHECK-NEXT: %[[B1:.+]] = tcgen05_descriptor of {{.+}} at 32 leading 16 stride 512
// CHECK-NEXT: tcgen05_mma %[[T]], %[[A1]], %[[B1]] idesc 135266320 kind "f16" column 0
// CHECK-NEXT: tcgen05_commit_wait
// CHECK-NEXT: }
// CHECK-NEXT: %[[D:.+]] = tmem_load %[[T]] column 0 : tile<i32, #regs> -> tile<64xf32, #regs>
// CHECK: store_ptr_tko weak %p2, %[[D]]
// CHECK-NEXT: tcgen05_barrier
// CHECK-NEXT: tmem_dealloc %[[T]] 64
// CHECK-NEXT: return
// CHECK-NOT: tmem_mma
//
// @mma_i8: an mmai of u8 A (128x32) and s8 B (32x64) into i32 (tmem_mma unsigned_lhs):
// kind::i8, one K step of 32 bytes; instruction descriptor 0x08100420 (S32 D = 2 in bits
// 4-5, A U8 = 0, B S8 = 1, N = 64, M = 128).
// CHECK-LABEL: entry @mma_i8(
// CHECK-NEXT: %[[T:.+]] = tmem_alloc 64 : tile<i32, #regs>
// CHECK: tmem_store %{{.+}} to %[[T]] column 0 : tile<64xi32, #regs>
// CHECK: tcgen05_mma %[[T]], {{.+}} idesc 135267360 kind "i8" column 0
// CHECK-NEXT: tcgen05_commit_wait
// CHECK-NEXT: tmem_load %[[T]] column 0 : tile<i32, #regs> -> tile<64xi32, #regs>
//
// @mma_tf32: the same loop on tf32 operands (f32 data converted by ftof, which rounds:
// kind::tf32). Rows of 32 tf32 are 128 bytes; the instruction's K is 8 (32 bytes), so 4
// MMAs per step, each pair of descriptors 32 bytes further along the rows; instruction
// descriptor 0x08100910 (f32 D, TF32 = 2 for A and B, K-major, N = 64, M = 128).
// CHECK-LABEL: entry @mma_tf32(
// CHECK-NEXT: %[[T:.+]] = tmem_alloc 64 : tile<i32, #regs>
// CHECK: tcgen05_barrier
// CHECK-NEXT: {{.+}} = tcgen05_descriptor of tile<128x32xtf32, {{.+}}> at 0 leading 16 stride 1024 swizzle 128
// CHECK-NEXT: {{.+}} = tcgen05_descriptor of tile<32x64xtf32, {{.+}}> at 0 leading 16 stride 1024 swizzle 128
// CHECK-NEXT: tcgen05_mma {{.+}} idesc 135268624 kind "tf32" column 0
// CHECK-NEXT: tcgen05_descriptor of {{.+}} at 32 leading 16 stride 1024
// CHECK-NEXT: tcgen05_descriptor of {{.+}} at 32 leading 16 stride 1024
// CHECK-NEXT: tcgen05_mma {{.+}} kind "tf32"
// CHECK: tcgen05_descriptor of {{.+}} at 96 leading
// CHECK: tcgen05_mma {{.+}} kind "tf32"
// CHECK-NEXT: tcgen05_commit_wait
// CHECK-NEXT: }
// CHECK-NOT: tcgen05_mma
//
// @mma_scaled: a block-scaled mmaf_scaled (tmem_mma_scaled: e4m3 data, UE8M0 scales
// 2^-7 .. 2^0 so that no scaled operand overflows f32, two K blocks of 32). After the
// accumulator's 32 columns, this thread's scale words go to TMEM: A's 4 words (rows lane + 32 j) at column 32, B's 1 word at 36; each MMA names
// them (scale_a / scale_b) and its K block's byte in the descriptor: SFA_ID (bits 29-30)
// and SFB_ID (bits 4-5) 0 for the first K step (0x08880000: UE8M0 bit 23, N = 32,
// M = 128), 1 for the second (0x28880010).
// CHECK-LABEL: entry @mma_scaled(
// CHECK-NEXT: %[[T:.+]] = tmem_alloc 64 : tile<i32, #regs>
// CHECK-NOT: tmem_mma_scaled
// CHECK: tmem_store %zero to %[[T]] column 0 : tile<32xf32, #regs>
// CHECK-NEXT: tmem_store %{{.+}} to %[[T]] column 32 : tile<4xi32, #regs>
// CHECK-NEXT: tmem_store %{{.+}} to %[[T]] column 36 : tile<1xi32, #regs>
// CHECK: tcgen05_barrier
// CHECK: tcgen05_mma %[[T]], {{.+}} idesc 143130624 kind "mxf8f6f4" column 0 scale_a 32 scale_b 36
// CHECK: tcgen05_mma %[[T]], {{.+}} idesc 680001552 kind "mxf8f6f4" column 0 scale_a 32 scale_b 36
// CHECK-NEXT: tcgen05_commit_wait
// CHECK-NEXT: tmem_load %[[T]] column 0
cuda_tile.module @tests {
  entry @mma(%pa: tile<ptr<f16>>, %pc: tile<ptr<f32>>) {
    %i = iota : tile<4096xi32>
    %r = reshape %i : tile<4096xi32> -> tile<128x32xi32>
    %b0 = reshape %pa : tile<ptr<f16>> -> tile<1x1xptr<f16>>
    %b = broadcast %b0 : tile<1x1xptr<f16>> -> tile<128x32xptr<f16>>
    %pa2 = offset %b, %r : tile<128x32xptr<f16>>, tile<128x32xi32> -> tile<128x32xptr<f16>>
    %i2 = iota : tile<2048xi32>
    %r2 = reshape %i2 : tile<2048xi32> -> tile<32x64xi32>
    %c0 = broadcast %b0 : tile<1x1xptr<f16>> -> tile<32x64xptr<f16>>
    %pb = offset %c0, %r2 : tile<32x64xptr<f16>>, tile<32x64xi32> -> tile<32x64xptr<f16>>
    %zero = constant <f32: 0.0> : tile<128x64xf32>
    %lo = constant <i32: 0> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %n = constant <i32: 2> : tile<i32>
    %d = for %k in (%lo to %n, step %one) : tile<i32> iter_values(%acc = %zero) -> (tile<128x64xf32>) {
      %a, %t1 = load_ptr_tko weak %pa2 : tile<128x32xptr<f16>> -> tile<128x32xf16>, token
      %bb, %t2 = load_ptr_tko weak %pb : tile<32x64xptr<f16>> -> tile<32x64xf16>, token
      %e = mmaf %a, %bb, %acc : tile<128x32xf16>, tile<32x64xf16>, tile<128x64xf32>
      continue %e : tile<128x64xf32>
    }
    %i3 = iota : tile<8192xi32>
    %r3 = reshape %i3 : tile<8192xi32> -> tile<128x64xi32>
    %p0 = reshape %pc : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %p1 = broadcast %p0 : tile<1x1xptr<f32>> -> tile<128x64xptr<f32>>
    %p2 = offset %p1, %r3 : tile<128x64xptr<f32>>, tile<128x64xi32> -> tile<128x64xptr<f32>>
    %w = store_ptr_tko weak %p2, %d : tile<128x64xptr<f32>>, tile<128x64xf32> -> token
    return
  }
  entry @mma_i8(%pa: tile<ptr<i8>>, %pc: tile<ptr<i32>>) {
    %i = iota : tile<4096xi32>
    %r = reshape %i : tile<4096xi32> -> tile<128x32xi32>
    %b0 = reshape %pa : tile<ptr<i8>> -> tile<1x1xptr<i8>>
    %b = broadcast %b0 : tile<1x1xptr<i8>> -> tile<128x32xptr<i8>>
    %pa2 = offset %b, %r : tile<128x32xptr<i8>>, tile<128x32xi32> -> tile<128x32xptr<i8>>
    %i2 = iota : tile<2048xi32>
    %r2 = reshape %i2 : tile<2048xi32> -> tile<32x64xi32>
    %c0 = broadcast %b0 : tile<1x1xptr<i8>> -> tile<32x64xptr<i8>>
    %pb = offset %c0, %r2 : tile<32x64xptr<i8>>, tile<32x64xi32> -> tile<32x64xptr<i8>>
    %a, %t1 = load_ptr_tko weak %pa2 : tile<128x32xptr<i8>> -> tile<128x32xi8>, token
    %bb, %t2 = load_ptr_tko weak %pb : tile<32x64xptr<i8>> -> tile<32x64xi8>, token
    %i3 = iota : tile<8192xi32>
    %r3 = reshape %i3 : tile<8192xi32> -> tile<128x64xi32>
    %p0 = reshape %pc : tile<ptr<i32>> -> tile<1x1xptr<i32>>
    %p1 = broadcast %p0 : tile<1x1xptr<i32>> -> tile<128x64xptr<i32>>
    %p2 = offset %p1, %r3 : tile<128x64xptr<i32>>, tile<128x64xi32> -> tile<128x64xptr<i32>>
    %c, %t3 = load_ptr_tko weak %p2 : tile<128x64xptr<i32>> -> tile<128x64xi32>, token
    %e = mmai %a, %bb, %c unsigned signed : tile<128x32xi8>, tile<32x64xi8>, tile<128x64xi32>
    %w = store_ptr_tko weak %p2, %e : tile<128x64xptr<i32>>, tile<128x64xi32> -> token
    return
  }
  entry @mma_tf32(%pa: tile<ptr<f32>>, %pc: tile<ptr<f32>>) {
    %i = iota : tile<4096xi32>
    %r = reshape %i : tile<4096xi32> -> tile<128x32xi32>
    %b0 = reshape %pa : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %b = broadcast %b0 : tile<1x1xptr<f32>> -> tile<128x32xptr<f32>>
    %pa2 = offset %b, %r : tile<128x32xptr<f32>>, tile<128x32xi32> -> tile<128x32xptr<f32>>
    %i2 = iota : tile<2048xi32>
    %r2 = reshape %i2 : tile<2048xi32> -> tile<32x64xi32>
    %c0 = broadcast %b0 : tile<1x1xptr<f32>> -> tile<32x64xptr<f32>>
    %pb = offset %c0, %r2 : tile<32x64xptr<f32>>, tile<32x64xi32> -> tile<32x64xptr<f32>>
    %zero = constant <f32: 0.0> : tile<128x64xf32>
    %lo = constant <i32: 0> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %n = constant <i32: 2> : tile<i32>
    %d = for %k in (%lo to %n, step %one) : tile<i32> iter_values(%acc = %zero) -> (tile<128x64xf32>) {
      %a, %t1 = load_ptr_tko weak %pa2 : tile<128x32xptr<f32>> -> tile<128x32xf32>, token
      %bb, %t2 = load_ptr_tko weak %pb : tile<32x64xptr<f32>> -> tile<32x64xf32>, token
      %at = ftof %a rounding<nearest_even> : tile<128x32xf32> -> tile<128x32xtf32>
      %bt = ftof %bb rounding<nearest_even> : tile<32x64xf32> -> tile<32x64xtf32>
      %e = mmaf %at, %bt, %acc : tile<128x32xtf32>, tile<32x64xtf32>, tile<128x64xf32>
      continue %e : tile<128x64xf32>
    }
    %i3 = iota : tile<8192xi32>
    %r3 = reshape %i3 : tile<8192xi32> -> tile<128x64xi32>
    %p0 = reshape %pc : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %p1 = broadcast %p0 : tile<1x1xptr<f32>> -> tile<128x64xptr<f32>>
    %p2 = offset %p1, %r3 : tile<128x64xptr<f32>>, tile<128x64xi32> -> tile<128x64xptr<f32>>
    %w = store_ptr_tko weak %p2, %d : tile<128x64xptr<f32>>, tile<128x64xf32> -> token
    return
  }
  entry @mma_scaled(%pa: tile<ptr<i8>>, %ps: tile<ptr<i8>>, %pc: tile<ptr<f32>>) {
    %i = iota : tile<8192xi32>
    %r = reshape %i : tile<8192xi32> -> tile<128x64xi32>
    %b0 = reshape %pa : tile<ptr<i8>> -> tile<1x1xptr<i8>>
    %b = broadcast %b0 : tile<1x1xptr<i8>> -> tile<128x64xptr<i8>>
    %pa2 = offset %b, %r : tile<128x64xptr<i8>>, tile<128x64xi32> -> tile<128x64xptr<i8>>
    %i2 = iota : tile<2048xi32>
    %r2 = reshape %i2 : tile<2048xi32> -> tile<64x32xi32>
    %c0 = broadcast %b0 : tile<1x1xptr<i8>> -> tile<64x32xptr<i8>>
    %pb = offset %c0, %r2 : tile<64x32xptr<i8>>, tile<64x32xi32> -> tile<64x32xptr<i8>>
    %i3 = iota : tile<256xi32>
    %r3 = reshape %i3 : tile<256xi32> -> tile<128x2xi32>
    %s0 = reshape %ps : tile<ptr<i8>> -> tile<1x1xptr<i8>>
    %s1 = broadcast %s0 : tile<1x1xptr<i8>> -> tile<128x2xptr<i8>>
    %psa = offset %s1, %r3 : tile<128x2xptr<i8>>, tile<128x2xi32> -> tile<128x2xptr<i8>>
    %i4 = iota : tile<64xi32>
    %r4 = reshape %i4 : tile<64xi32> -> tile<2x32xi32>
    %s2 = broadcast %s0 : tile<1x1xptr<i8>> -> tile<2x32xptr<i8>>
    %psb = offset %s2, %r4 : tile<2x32xptr<i8>>, tile<2x32xi32> -> tile<2x32xptr<i8>>
    %a8, %t1 = load_ptr_tko weak %pa2 : tile<128x64xptr<i8>> -> tile<128x64xi8>, token
    %b8, %t2 = load_ptr_tko weak %pb : tile<64x32xptr<i8>> -> tile<64x32xi8>, token
    %sa8, %t3 = load_ptr_tko weak %psa : tile<128x2xptr<i8>> -> tile<128x2xi8>, token
    %sb8, %t4 = load_ptr_tko weak %psb : tile<2x32xptr<i8>> -> tile<2x32xi8>, token
    %a = bitcast %a8 : tile<128x64xi8> -> tile<128x64xf8E4M3FN>
    %bb = bitcast %b8 : tile<64x32xi8> -> tile<64x32xf8E4M3FN>
    %low = constant <i8: 15> : tile<128x2xi8>
    %bias = constant <i8: 120> : tile<128x2xi8>
    %sa7 = andi %sa8, %low : tile<128x2xi8>
    %sa6 = ori %sa7, %bias : tile<128x2xi8>
    %lowb = constant <i8: 15> : tile<2x32xi8>
    %biasb = constant <i8: 120> : tile<2x32xi8>
    %sb7 = andi %sb8, %lowb : tile<2x32xi8>
    %sb6 = ori %sb7, %biasb : tile<2x32xi8>
    %sa = bitcast %sa6 : tile<128x2xi8> -> tile<128x2xf8E8M0FNU>
    %sb = bitcast %sb6 : tile<2x32xi8> -> tile<2x32xf8E8M0FNU>
    %zero = constant <f32: 0.0> : tile<128x32xf32>
    %d = mmaf_scaled %a, %bb, %zero, %sa, %sb : tile<128x64xf8E4M3FN>, tile<64x32xf8E4M3FN>, tile<128x32xf32>, tile<128x2xf8E8M0FNU>, tile<2x32xf8E8M0FNU>
    %i5 = iota : tile<4096xi32>
    %r5 = reshape %i5 : tile<4096xi32> -> tile<128x32xi32>
    %p0 = reshape %pc : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %p1 = broadcast %p0 : tile<1x1xptr<f32>> -> tile<128x32xptr<f32>>
    %p2 = offset %p1, %r5 : tile<128x32xptr<f32>>, tile<128x32xi32> -> tile<128x32xptr<f32>>
    %w = store_ptr_tko weak %p2, %d : tile<128x32xptr<f32>>, tile<128x32xf32> -> token
    return
  }
}
