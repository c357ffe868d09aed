// RUN: nanotile-passes %s -p lower-views,resolve-tokens,assign-layouts{gpu=sm_90},distribute,widen-narrow-floats | filecheck %s
// widen-narrow-floats: each f16 op PTX lacks computes in f32 between conversions: the
// loaded %x is widened once, where it is loaded, for both its users; the sum rounding
// towards +inf narrows towards +inf (rounding up twice is rounding the exact sum up), exp
// narrows to nearest. The comparison, a maximum and a sum to nearest stay on f16 (PTX has
// setp.lt.f16, max.f16 and add.rn.f16, whose results are the widened ones); a sum
// rounding up is widened (add.f16 rounds to nearest only).

// CHECK-LABEL: entry @half(
// CHECK: %x, %t = load_ptr_tko
// CHECK-NEXT: %[[X:.+]] = ftof %x  : tile<1xf16, #regs> -> tile<1xf32, #regs>
// CHECK-NEXT: %[[S:.+]] = addf %[[X]], %[[X]] rounding<positive_inf> : tile<1xf32, #regs>
// CHECK-NEXT: %up = ftof %[[S]] rounding<positive_inf> : tile<1xf32, #regs> -> tile<1xf16, #regs>
// CHECK-NEXT: %[[U:.+]] = ftof %up  : tile<1xf16, #regs> -> tile<1xf32, #regs>
// CHECK-NEXT: %[[E:.+]] = exp %[[U]]  : tile<1xf32, #regs>
// CHECK-NEXT: %e = ftof %[[E]]  : tile<1xf32, #regs> -> tile<1xf16, #regs>
// CHECK-NEXT: %lt = cmpf less_than ordered %x, %e : tile<1xf16, #regs> -> tile<1xi1, #regs>
// CHECK-NEXT: %m = maxf %x, %e : tile<1xf16, #regs>
// CHECK-NEXT: %[[M:.+]] = ftof %m  : tile<1xf16, #regs> -> tile<1xf32, #regs>
// CHECK-NEXT: %n = addf %m, %x  : tile<1xf16, #regs>
// CHECK-NEXT: %[[F:.+]] = addf %[[M]], %[[X]] rounding<positive_inf> : tile<1xf32, #regs>
// CHECK-NEXT: %f = ftof %[[F]] rounding<positive_inf> : tile<1xf32, #regs> -> tile<1xf16, #regs>
cuda_tile.module @tests {
  entry @half(%p: tile<ptr<f16>>, %q: tile<ptr<f16>>, %r: tile<ptr<i1>>) {
    %i = iota : tile<128xi32>
    %b0 = reshape %p : tile<ptr<f16>> -> tile<1xptr<f16>>
    %b = broadcast %b0 : tile<1xptr<f16>> -> tile<128xptr<f16>>
    %a = offset %b, %i : tile<128xptr<f16>>, tile<128xi32> -> tile<128xptr<f16>>
    %x, %t = load_ptr_tko weak %a : tile<128xptr<f16>> -> tile<128xf16>, token
    %up = addf %x, %x rounding<positive_inf> : tile<128xf16>
    %e = exp %up : tile<128xf16>
    %lt = cmpf less_than ordered %x, %e : tile<128xf16> -> tile<128xi1>
    %m = maxf %x, %e : tile<128xf16>
    %n = addf %m, %x : tile<128xf16>
    %f = addf %m, %x rounding<positive_inf> : tile<128xf16>
    %c0 = reshape %q : tile<ptr<f16>> -> tile<1xptr<f16>>
    %c = broadcast %c0 : tile<1xptr<f16>> -> tile<128xptr<f16>>
    %ca = offset %c, %i : tile<128xptr<f16>>, tile<128xi32> -> tile<128xptr<f16>>
    %w = store_ptr_tko weak %ca, %e : tile<128xptr<f16>>, tile<128xf16> -> token
    %wn = store_ptr_tko weak %ca, %n : tile<128xptr<f16>>, tile<128xf16> -> token
    %wf = store_ptr_tko weak %ca, %f : tile<128xptr<f16>>, tile<128xf16> -> token
    %d0 = reshape %r : tile<ptr<i1>> -> tile<1xptr<i1>>
    %d = broadcast %d0 : tile<1xptr<i1>> -> tile<128xptr<i1>>
    %da = offset %d, %i : tile<128xptr<i1>>, tile<128xi32> -> tile<128xptr<i1>>
    %w2 = store_ptr_tko weak %da, %lt : tile<128xptr<i1>>, tile<128xi1> -> token
    return
  }
}
