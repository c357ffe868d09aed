// RUN: nanotile-passes %s -p lower-views,resolve-tokens,assign-layouts | filecheck %s
// assign-layouts gives every tile value a layout (#replicated for one element, #blocked
// over the CTA's threads otherwise; num_warps picks the CTA size) and makes each
// shared-memory round trip an explicit convert_layout to #shared<offset=?>, right before
// the op that reads it: permute, non-scalar broadcast, reduce, scan, cat, extract,
// insert, mmaf/mmai A and B. Elementwise ops, reshape and scalar broadcasts need none.

cuda_tile.module @tests {
  // CHECK-LABEL: entry @elementwise(
  // CHECK-SAME: %{{[a-z0-9_]+}}: tile<ptr<f32>, #replicated>
  // CHECK-SAME: %{{[a-z0-9_]+}}: tile<f32, #replicated>
  entry @elementwise(%p: tile<ptr<f32>>, %s: tile<f32>) {
    // CHECK-NOT: convert_layout
    // CHECK: reshape %{{.*}} : tile<f32, #replicated> -> tile<1xf32, #replicated>
    // CHECK: broadcast %{{.*}} : tile<1xf32, #replicated> -> tile<64xf32, #blocked<threads=128, slots=1>>
    // CHECK: iota : tile<64xi32, #blocked<threads=128, slots=1>>
    // CHECK: addf %{{.*}} : tile<64xf32, #blocked<threads=128, slots=1>>
    // CHECK: offset %{{.*}} -> tile<64xptr<f32>, #blocked<threads=128, slots=1>>
    // CHECK-NOT: convert_layout
    // CHECK: return
    %r = reshape %s : tile<f32> -> tile<1xf32>
    %b = broadcast %r : tile<1xf32> -> tile<64xf32>
    %i = iota : tile<64xi32>
    %f = itof %i signed : tile<64xi32> -> tile<64xf32>
    %y = addf %b, %f : tile<64xf32>
    %rp = reshape %p : tile<ptr<f32>> -> tile<1xptr<f32>>
    %ps = broadcast %rp : tile<1xptr<f32>> -> tile<64xptr<f32>>
    %q = offset %ps, %i : tile<64xptr<f32>>, tile<64xi32> -> tile<64xptr<f32>>
    %t = store_ptr_tko weak %q, %y : tile<64xptr<f32>>, tile<64xf32> -> token
    return
  }

  // CHECK-LABEL: entry @movement(
  // the CTA is num_warps=8 -> 256 threads
  // CHECK: iota : tile<512xi32, #blocked<threads=256, slots=2>>
  entry @movement(%p: tile<ptr<f32>>) optimization_hints=<sm_100 = {num_warps = 8}> {
    %k = constant <i32: 1> : tile<i32>
    %k0 = constant <i32: 0> : tile<i32>
    %i = iota : tile<512xi32>
    %f = itof %i signed : tile<512xi32> -> tile<512xf32>
    %x = reshape %f : tile<512xf32> -> tile<8x64xf32>
    %i64 = iota : tile<64xi32>
    %f64 = itof %i64 signed : tile<64xi32> -> tile<64xf32>
    %v = reshape %f64 : tile<64xf32> -> tile<1x64xf32>
    // CHECK: %[[PX:.+]] = convert_layout %{{.+}} : tile<8x64xf32, #blocked<threads=256, slots=2>> -> tile<8x64xf32, #shared<offset=?>>
    // CHECK-NEXT: permute %[[PX]] [1, 0] : tile<8x64xf32, #shared<offset=?>> -> tile<64x8xf32, #blocked<threads=256, slots=2>>
    %t = permute %x [1, 0] : tile<8x64xf32> -> tile<64x8xf32>
    // CHECK: %[[BV:.+]] = convert_layout %{{.+}} : tile<1x64xf32, #blocked<threads=256, slots=1>> -> tile<1x64xf32, #shared<offset=?>>
    // CHECK-NEXT: broadcast %[[BV]] : tile<1x64xf32, #shared<offset=?>> -> tile<8x64xf32, #blocked<threads=256, slots=2>>
    %b = broadcast %v : tile<1x64xf32> -> tile<8x64xf32>
    // CHECK: %[[RX:.+]] = convert_layout %{{.+}} -> tile<8x64xf32, #shared<offset=?>>
    // CHECK-NEXT: reduce %[[RX]] dim=1
    // CHECK-SAME: -> tile<8xf32, #blocked<threads=256, slots=1>>
    // CHECK-NEXT: (%{{.+}}: tile<f32, #replicated>, %{{.+}}: tile<f32, #replicated>)
    %r = reduce %b dim=1 identities=[0.000000e+00 : f32] : tile<8x64xf32> -> tile<8xf32>
    (%a: tile<f32>, %c: tile<f32>) {
      %s = addf %a, %c : tile<f32>
      yield %s : tile<f32>
    }
    // CHECK: %[[CL:.+]] = convert_layout %{{.+}} -> tile<8x64xf32, #shared<offset=?>>
    // CHECK-NEXT: %[[CR:.+]] = convert_layout %{{.+}} -> tile<8x64xf32, #shared<offset=?>>
    // CHECK-NEXT: cat %[[CL]], %[[CR]] dim = 0
    %cat = cat %x, %b dim = 0 : tile<8x64xf32>, tile<8x64xf32> -> tile<16x64xf32>
    // the index operand of extract stays in registers
    // CHECK: %[[EX:.+]] = convert_layout %{{.+}} -> tile<16x64xf32, #shared<offset=?>>
    // CHECK-NEXT: extract %[[EX]][%{{.+}}, %{{.+}}] : tile<16x64xf32, #shared<offset=?>> -> tile<4x64xf32, #blocked<threads=256, slots=1>>
    %e = extract %cat[%k, %k0] : tile<16x64xf32> -> tile<4x64xf32>
    // a reduce whose lines each lie in one thread (the row length 256 is a multiple of the
    // CTA size) folds each thread's registers: no convert_layout
    // CHECK: %[[W:.+]] = reshape %{{.+}} : tile<512xf32, #blocked<threads=256, slots=2>> -> tile<2x256xf32, #blocked<threads=256, slots=2>>
    // CHECK-NEXT: reduce %[[W]] dim=0
    // CHECK-SAME: -> tile<256xf32, #blocked<threads=256, slots=1>>
    %w = reshape %f : tile<512xf32> -> tile<2x256xf32>
    %rw = reduce %w dim=0 identities=[0.000000e+00 : f32] : tile<2x256xf32> -> tile<256xf32>
    (%a: tile<f32>, %c: tile<f32>) {
      %s = addf %a, %c : tile<f32>
      yield %s : tile<f32>
    }
    // rows of 32 elements are the 32 lanes of one warp in one slot: warp shuffles, no
    // convert_layout (targets.layout.warp_plan)
    // CHECK: %[[RS:.+]] = reshape %{{.+}} : tile<512xf32, #blocked<threads=256, slots=2>> -> tile<16x32xf32, #blocked<threads=256, slots=2>>
    // CHECK-NEXT: reduce %[[RS]] dim=1
    // CHECK-SAME: -> tile<16xf32, #blocked<threads=256, slots=1>>
    %rs = reshape %f : tile<512xf32> -> tile<16x32xf32>
    %rsum = reduce %rs dim=1 identities=[0.000000e+00 : f32] : tile<16x32xf32> -> tile<16xf32>
    (%a: tile<f32>, %c: tile<f32>) {
      %s = addf %a, %c : tile<f32>
      yield %s : tile<f32>
    }
    // mmaf: A and B in shared memory, the accumulator in registers
    // CHECK: %[[MA:.+]] = convert_layout %{{.+}} -> tile<8x64xf32, #shared<offset=?>>
    // CHECK-NEXT: %[[MB:.+]] = convert_layout %{{.+}} -> tile<64x8xf32, #shared<offset=?>>
    // CHECK-NEXT: mmaf %[[MA]], %[[MB]], %{{[a-z0-9_]+}} : tile<8x64xf32, #shared<offset=?>>, tile<64x8xf32, #shared<offset=?>>, tile<8x8xf32, #blocked<threads=256, slots=1>>
    %z = constant <f32: 0.000000e+00> : tile<8x8xf32>
    %m = mmaf %x, %t, %z : tile<8x64xf32>, tile<64x8xf32>, tile<8x8xf32>
    // CHECK: return
    return
  }
}
