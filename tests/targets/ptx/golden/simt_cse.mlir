// RUN: nanotile-passes %s -p lower-views,resolve-tokens,assign-layouts{gpu=sm_90},lower-convert-layout,allocate-shared,insert-barriers,distribute,simt-cse | filecheck %s
// simt-cse: distribute masks each of the two stores on its own (a 32-element tile in a
// 4-warp CTA: every warp holds a copy, only warp 0 writes), so the owner mask and its
// splat are built twice; after the pass both stores use the first mask.

// CHECK-LABEL: entry @twice(
// CHECK: %[[OWNER:.+]] = is_owner of {{.+}} : tile<i1, #regs>
// CHECK-NEXT: %[[MASK:.+]] = splat %[[OWNER]] : tile<i1, #regs> -> tile<1xi1, #regs>
// CHECK-NEXT: %w1 = store_ptr_tko weak %a, %x, %[[MASK]]
// CHECK-NOT: is_owner
// CHECK: %w2 = store_ptr_tko weak %a, %y, %[[MASK]]
cuda_tile.module @tests {
  entry @twice(%p: tile<ptr<f32>>) {
    %i = iota : tile<32xi32>
    %b0 = reshape %p : tile<ptr<f32>> -> tile<1xptr<f32>>
    %b = broadcast %b0 : tile<1xptr<f32>> -> tile<32xptr<f32>>
    %a = offset %b, %i : tile<32xptr<f32>>, tile<32xi32> -> tile<32xptr<f32>>
    %x = itof %i signed : tile<32xi32> -> tile<32xf32>
    %w1 = store_ptr_tko weak %a, %x : tile<32xptr<f32>>, tile<32xf32> -> token
    %y = addf %x, %x rounding<nearest_even> : tile<32xf32>
    %w2 = store_ptr_tko weak %a, %y : tile<32xptr<f32>>, tile<32xf32> -> token
    return
  }
}
