// RUN: nanotile-passes %s -p assume-to-facts,lower-views,resolve-tokens,assign-layouts{gpu=sm_90} | filecheck %s
// assign-layouts gives every tile value a layout: loads and stores a coalesced blocked
// layout (up to 4 contiguous f32 per thread where the pointers are 16-byte aligned and
// contiguous, as the assume facts say, but no more than the tile gives each thread: 2 of
// a 256-element tile over 128 threads), the address arithmetic of a load the load's own
// layout, a reduction its operand's layout sliced, a one-element tile #replicated; the
// accumulator of mmaf on mma.sync the fragment layout, carried by the K loop unchanged
// and stored from there, A and B swizzled shared memory. A value used in another layout than it was made in
// gets a convert_layout. With strategy=eqsat (the default) the layout e-graph revisits
// that choice: in @compare, greedy loads 4 f16 per thread and converts both tiles (and the
// shared iota) to the bool store's layout (one element per register and access: its
// pointer has no div_by fact); the store in the loads' layout converts nothing.

cuda_tile.module @tests {
  // CHECK-LABEL: entry @vectors(
  entry @vectors(%p: tile<ptr<f32>>, %q: tile<ptr<f32>>) {
    // CHECK: iota : tile<256xi32, #blocked<per_thread=[2], lanes=[32], warps=[4], order=[0]>>
    // CHECK: load_ptr_tko weak %{{.+}} : tile<256xptr<f32>, #blocked<per_thread=[2], lanes=[32], warps=[4], order=[0]>> -> tile<256xf32, #blocked<per_thread=[2], lanes=[32], warps=[4], order=[0]>>
    // CHECK-NOT: convert_layout
    // CHECK: reduce %{{.+}} dim=0
    // CHECK-SAME: -> tile<f32, #replicated>
    %ap = assume div_by<16>, %p : tile<ptr<f32>>
    %i = iota : tile<256xi32>
    %b0 = reshape %ap : tile<ptr<f32>> -> tile<1xptr<f32>>
    %b = broadcast %b0 : tile<1xptr<f32>> -> tile<256xptr<f32>>
    %a = offset %b, %i : tile<256xptr<f32>>, tile<256xi32> -> tile<256xptr<f32>>
    %x, %t = load_ptr_tko weak %a : tile<256xptr<f32>> -> tile<256xf32>, token
    %y = addf %x, %x : tile<256xf32>
    %s = reduce %y dim=0 identities=[0.000000e+00 : f32] : tile<256xf32> -> tile<f32>
    (%e: tile<f32>, %acc: tile<f32>) {
      %n = addf %e, %acc : tile<f32>
      yield %n : tile<f32>
    }
    %w = store_ptr_tko weak %q, %s : tile<ptr<f32>>, tile<f32> -> token
    return
  }

  // CHECK-LABEL: entry @mma(
  entry @mma(%pa: tile<ptr<f16>>, %pc: tile<ptr<f32>>) {
    // CHECK: for {{.+}} iter_values(%{{.+}} = %{{.+}}) -> (tile<32x32xf32, #mma<acc, m16n8, warps=[2, 2]>>)
    // CHECK: convert_layout %{{.+}} : tile<32x16xf16, {{.+}}> -> tile<32x16xf16, #shared<offset=?, swizzle=[8, 4, 2]>>
    // CHECK: mmaf %{{.+}}, %{{.+}}, %{{.+}} : tile<32x16xf16, #shared<{{.+}}>>, tile<16x32xf16, #shared<{{.+}}>>, tile<32x32xf32, #mma<acc, m16n8, warps=[2, 2]>>
    // CHECK-NEXT: continue
    // the store writes the accumulator from its fragments: no conversion after the loop
    // CHECK-NOT: convert_layout
    // CHECK: store_ptr_tko weak %{{.+}}, %acc : tile<32x32xptr<f32>, #mma<acc, m16n8, warps=[2, 2]>>, tile<32x32xf32, #mma<acc, m16n8, warps=[2, 2]>>
    %i = iota : tile<512xi32>
    %r = reshape %i : tile<512xi32> -> tile<32x16xi32>
    %b0 = reshape %pa : tile<ptr<f16>> -> tile<1x1xptr<f16>>
    %b = broadcast %b0 : tile<1x1xptr<f16>> -> tile<32x16xptr<f16>>
    %pa2 = offset %b, %r : tile<32x16xptr<f16>>, tile<32x16xi32> -> tile<32x16xptr<f16>>
    %r2 = reshape %i : tile<512xi32> -> tile<16x32xi32>
    %c0 = broadcast %b0 : tile<1x1xptr<f16>> -> tile<16x32xptr<f16>>
    %pb = offset %c0, %r2 : tile<16x32xptr<f16>>, tile<16x32xi32> -> tile<16x32xptr<f16>>
    %zero = constant <f32: 0.0> : tile<32x32xf32>
    %lo = constant <i32: 0> : tile<i32>
    %hi = constant <i32: 2> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %acc = for %k in (%lo to %hi, step %one) : tile<i32> iter_values(%c = %zero) -> (tile<32x32xf32>) {
      %a, %t1 = load_ptr_tko weak %pa2 : tile<32x16xptr<f16>> -> tile<32x16xf16>, token
      %bb, %t2 = load_ptr_tko weak %pb : tile<16x32xptr<f16>> -> tile<16x32xf16>, token
      %d = mmaf %a, %bb, %c : tile<32x16xf16>, tile<16x32xf16>, tile<32x32xf32>
      continue %d : tile<32x32xf32>
    }
    %i3 = iota : tile<1024xi32>
    %r3 = reshape %i3 : tile<1024xi32> -> tile<32x32xi32>
    %p0 = reshape %pc : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %p1 = broadcast %p0 : tile<1x1xptr<f32>> -> tile<32x32xptr<f32>>
    %p2 = offset %p1, %r3 : tile<32x32xptr<f32>>, tile<32x32xi32> -> tile<32x32xptr<f32>>
    %w = store_ptr_tko weak %p2, %acc : tile<32x32xptr<f32>>, tile<32x32xf32> -> token
    return
  }

  // CHECK-LABEL: entry @compare(
  entry @compare(%p: tile<ptr<f16>>, %q: tile<ptr<f16>>, %r: tile<ptr<i1>>) {
    // CHECK-NOT: convert_layout
    // CHECK: load_ptr_tko weak %{{.+}} -> tile<512xf16, #blocked<per_thread=[4], lanes=[32], warps=[4], order=[0]>>
    // CHECK-NOT: convert_layout
    // CHECK: load_ptr_tko weak %{{.+}} -> tile<512xf16, #blocked<per_thread=[4], lanes=[32], warps=[4], order=[0]>>
    // CHECK-NOT: convert_layout
    // CHECK: cmpf greater_than ordered %x, %y
    // CHECK-NOT: convert_layout
    // CHECK: store_ptr_tko {{.+}} : tile<512xptr<i1>, #blocked<per_thread=[4], lanes=[32], warps=[4], order=[0]>>
    %ap = assume div_by<16>, %p : tile<ptr<f16>>
    %aq = assume div_by<16>, %q : tile<ptr<f16>>
    %i = iota : tile<512xi32>
    %b0 = reshape %ap : tile<ptr<f16>> -> tile<1xptr<f16>>
    %b = broadcast %b0 : tile<1xptr<f16>> -> tile<512xptr<f16>>
    %a = offset %b, %i : tile<512xptr<f16>>, tile<512xi32> -> tile<512xptr<f16>>
    %x, %t = load_ptr_tko weak %a : tile<512xptr<f16>> -> tile<512xf16>, token
    %c0 = reshape %aq : tile<ptr<f16>> -> tile<1xptr<f16>>
    %c = broadcast %c0 : tile<1xptr<f16>> -> tile<512xptr<f16>>
    %d = offset %c, %i : tile<512xptr<f16>>, tile<512xi32> -> tile<512xptr<f16>>
    %y, %u = load_ptr_tko weak %d : tile<512xptr<f16>> -> tile<512xf16>, token
    %gt = cmpf greater_than ordered %x, %y : tile<512xf16> -> tile<512xi1>
    %e0 = reshape %r : tile<ptr<i1>> -> tile<1xptr<i1>>
    %e = broadcast %e0 : tile<1xptr<i1>> -> tile<512xptr<i1>>
    %f = offset %e, %i : tile<512xptr<i1>>, tile<512xi32> -> tile<512xptr<i1>>
    %w = store_ptr_tko weak %f, %gt : tile<512xptr<i1>>, tile<512xi1> -> token
    return
  }
}
