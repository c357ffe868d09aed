// RUN: nanotile-passes %s -p lower-views,resolve-tokens,assign-layouts,allocate-shared | filecheck %s
// allocate-shared places each #shared value (the convert_layout results that
// assign-layouts made) in the CTA's shared buffer: the operands of one op are alive
// together and get disjoint bytes (16-byte aligned, sized by the element's register
// width); once their op has run they are dead and the next op reuses the bytes. The
// entry records the size of the buffer as nanotile.shared_bytes (printed after its body,
// where cuda-tile prints an entry's other attributes).

cuda_tile.module @tests {
  // CHECK-LABEL: entry @reuse(
  entry @reuse(%p: tile<ptr<f32>>) {
    %i = iota : tile<512xi32>
    %f = itof %i signed : tile<512xi32> -> tile<512xf32>
    %x = reshape %f : tile<512xf32> -> tile<8x64xf32>
    // CHECK: convert_layout %{{.+}} -> tile<8x64xf32, #shared<offset=0>>
    // CHECK-NEXT: permute
    %t = permute %x [1, 0] : tile<8x64xf32> -> tile<64x8xf32>
    // two operands alive together: disjoint
    // CHECK: convert_layout %{{.+}} -> tile<8x64xf32, #shared<offset=0>>
    // CHECK-NEXT: convert_layout %{{.+}} -> tile<8x64xf32, #shared<offset=2048>>
    // CHECK-NEXT: cat
    %cat = cat %x, %x dim = 0 : tile<8x64xf32>, tile<8x64xf32> -> tile<16x64xf32>
    // f16: 2 bytes an element; i1: one byte, the next buffer starts 16-byte aligned
    // CHECK: convert_layout %{{.+}} -> tile<8x64xf16, #shared<offset=0>>
    // CHECK-NEXT: convert_layout %{{.+}} -> tile<64x8xf16, #shared<offset=1024>>
    // CHECK-NEXT: mmaf
    %a = ftof %x : tile<8x64xf32> -> tile<8x64xf16>
    %b = ftof %t : tile<64x8xf32> -> tile<64x8xf16>
    %z = constant <f32: 0.000000e+00> : tile<8x8xf32>
    %m = mmaf %a, %b, %z : tile<8x64xf16>, tile<64x8xf16>, tile<8x8xf32>
    // CHECK: convert_layout %{{.+}} -> tile<8xi1, #shared<offset=0>>
    // CHECK-NEXT: convert_layout %{{.+}} -> tile<8xi1, #shared<offset=16>>
    // CHECK-NEXT: cat
    %i8 = iota : tile<8xi32>
    %c4 = constant <i32: 4> : tile<8xi32>
    %lt = cmpi less_than %i8, %c4, signed : tile<8xi32> -> tile<8xi1>
    %lts = cat %lt, %lt dim = 0 : tile<8xi1>, tile<8xi1> -> tile<16xi1>
    // the largest set of buffers alive at once: cat's two 8x64xf32 operands, 2 x 2048
    // bytes
    // CHECK: return
    // CHECK-NEXT: } {nanotile.shared_bytes = 4096}
    return
  }

  // CHECK-LABEL: entry @loop(
  entry @loop(%p: tile<ptr<f32>>, %n: tile<i32>) {
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %i = iota : tile<128xi32>
    %x = itof %i signed : tile<128xi32> -> tile<128xf32>
    // a buffer inside the loop body is dead after its reduce: the one after the loop
    // takes its bytes again (the combiner subtracts, so the reduce cannot run on warp
    // shuffles and stages its operand in shared memory)
    // CHECK: for
    // CHECK: convert_layout %{{.+}} -> tile<128xf32, #shared<offset=0>>
    // CHECK-NEXT: reduce
    // CHECK: continue
    %r = for %k in (%c0 to %n, step %c1) : tile<i32> iter_values(%acc = %x) -> (tile<128xf32>) {
      %s = reduce %acc dim=0 identities=[0.000000e+00 : f32] : tile<128xf32> -> tile<f32>
      (%u: tile<f32>, %v: tile<f32>) {
        %w = subf %u, %v : tile<f32>
        yield %w : tile<f32>
      }
      %r1 = reshape %s : tile<f32> -> tile<1xf32>
      %sb = broadcast %r1 : tile<1xf32> -> tile<128xf32>
      %next = addf %acc, %sb : tile<128xf32>
      continue %next : tile<128xf32>
    }
    // CHECK: convert_layout %{{.+}} -> tile<128xf32, #shared<offset=0>>
    // CHECK-NEXT: convert_layout %{{.+}} -> tile<128xf32, #shared<offset=512>>
    // CHECK-NEXT: cat
    // CHECK: return
    // CHECK-NEXT: } {nanotile.shared_bytes = 1024}
    %cat = cat %r, %x dim = 0 : tile<128xf32>, tile<128xf32> -> tile<256xf32>
    return
  }
}
