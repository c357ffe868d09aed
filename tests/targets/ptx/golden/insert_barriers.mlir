// RUN: nanotile-passes %s -p insert-barriers | filecheck %s
// insert-barriers puts a CTA barrier around each group of writes to shared memory (the
// bytes may still be read from an earlier use; the readers must wait for the write),
// and after a global store that a later memory op may read back in program order.

cuda_tile.module @tests {
  // CHECK-LABEL: entry @round_trip(
  // CHECK: barrier
  // CHECK-NEXT: %s = convert_layout %x
  // CHECK-NEXT: barrier
  // CHECK-NEXT: %r = convert_layout %s
  // CHECK: %w = store_ptr_tko
  // CHECK-NEXT: barrier
  // CHECK-NEXT: %y, %t = load_ptr_tko
  // CHECK-NOT: barrier
  // CHECK: return
  entry @round_trip(%p: tile<ptr<f32>, #replicated>) attributes {nanotile.shared_bytes = 512} {
    %x = iota : tile<128xi32, #blocked<per_thread=[1], lanes=[32], warps=[4], order=[0]>>
    %s = convert_layout %x : tile<128xi32, #blocked<per_thread=[1], lanes=[32], warps=[4], order=[0]>> -> tile<128xi32, #shared<offset=0>>
    %r = convert_layout %s : tile<128xi32, #shared<offset=0>> -> tile<128xi32, #blocked<per_thread=[4], lanes=[32], warps=[1], order=[0]>>
    %p1 = reshape %p : tile<ptr<f32>, #replicated> -> tile<1xptr<f32>, #replicated>
    %pb = broadcast %p1 : tile<1xptr<f32>, #replicated> -> tile<128xptr<f32>, #blocked<per_thread=[4], lanes=[32], warps=[1], order=[0]>>
    %a = offset %pb, %r : tile<128xptr<f32>, #blocked<per_thread=[4], lanes=[32], warps=[1], order=[0]>>, tile<128xi32, #blocked<per_thread=[4], lanes=[32], warps=[1], order=[0]>> -> tile<128xptr<f32>, #blocked<per_thread=[4], lanes=[32], warps=[1], order=[0]>>
    %c = constant <f32: 2.0> : tile<128xf32, #blocked<per_thread=[4], lanes=[32], warps=[1], order=[0]>>
    %w = store_ptr_tko weak %a, %c : tile<128xptr<f32>, #blocked<per_thread=[4], lanes=[32], warps=[1], order=[0]>>, tile<128xf32, #blocked<per_thread=[4], lanes=[32], warps=[1], order=[0]>> -> token
    %y, %t = load_ptr_tko weak %a : tile<128xptr<f32>, #blocked<per_thread=[4], lanes=[32], warps=[1], order=[0]>> -> tile<128xf32, #blocked<per_thread=[4], lanes=[32], warps=[1], order=[0]>>, token
    return
  }
}
