// RUN: nanotile-passes %s -p lower-views,resolve-tokens,assign-layouts{gpu=sm_90},lower-convert-layout,allocate-shared,insert-barriers,distribute,simt-cse,simt-dce | filecheck %s
// simt-dce: the element-wise ops whose results nothing stores (%unused, and the negf
// that only it reads) are gone from the per-thread program; the stored value and the
// store stay.

// CHECK-LABEL: entry @unused(
// CHECK: %x = itof
// CHECK-NOT: negf
// CHECK-NOT: mulf
// CHECK: %w = store_ptr_tko weak %a, %x
cuda_tile.module @tests {
  entry @unused(%p: tile<ptr<f32>>) {
    %i = iota : tile<128xi32>
    %b0 = reshape %p : tile<ptr<f32>> -> tile<1xptr<f32>>
    %b = broadcast %b0 : tile<1xptr<f32>> -> tile<128xptr<f32>>
    %a = offset %b, %i : tile<128xptr<f32>>, tile<128xi32> -> tile<128xptr<f32>>
    %x = itof %i signed : tile<128xi32> -> tile<128xf32>
    %n = negf %x : tile<128xf32>
    %unused = mulf %n, %x rounding<nearest_even> : tile<128xf32>
    %w = store_ptr_tko weak %a, %x : tile<128xptr<f32>>, tile<128xf32> -> token
    return
  }
}
