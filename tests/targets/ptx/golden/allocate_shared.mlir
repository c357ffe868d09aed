// RUN: nanotile-passes %s -p allocate-shared | filecheck %s
// allocate-shared places each #shared<offset=?> value in the CTA's shared buffer: %a
// (512 bytes) and %b (256 bytes) are alive together (both feed %sum), so they get
// distinct bytes; %c is made after both died and reuses offset 0. The entry records the
// bytes it needs (printed after its body, where cuda-tile prints an entry's attributes).

cuda_tile.module @tests {
  // CHECK-LABEL: entry @buffers(
  // CHECK: %a = convert_layout {{.+}} -> tile<128xf32, #shared<offset=0>>
  // CHECK: %b = convert_layout {{.+}} -> tile<128xf16, #shared<offset=512>>
  // CHECK: %c = convert_layout {{.+}} -> tile<128xf32, #shared<offset=0>>
  // CHECK: return
  // CHECK-NEXT: } {nanotile.shared_bytes = 768}
  entry @buffers(%p: tile<ptr<f32>, #replicated>) {
    %x = constant <f32: 1.0> : tile<128xf32, #linear<register=[], lane=[[1], [2], [4], [8], [16]], warp=[[32], [64]]>>
    %h = constant <f16: 1.0> : tile<128xf16, #linear<register=[], lane=[[1], [2], [4], [8], [16]], warp=[[32], [64]]>>
    %a = convert_layout %x : tile<128xf32, #linear<register=[], lane=[[1], [2], [4], [8], [16]], warp=[[32], [64]]>> -> tile<128xf32, #shared<offset=?>>
    %b = convert_layout %h : tile<128xf16, #linear<register=[], lane=[[1], [2], [4], [8], [16]], warp=[[32], [64]]>> -> tile<128xf16, #shared<offset=?>>
    %ar = convert_layout %a : tile<128xf32, #shared<offset=?>> -> tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[[0], [0]]>>
    %br = convert_layout %b : tile<128xf16, #shared<offset=?>> -> tile<128xf16, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[[0], [0]]>>
    %bf = ftof %br : tile<128xf16, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[[0], [0]]>> -> tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[[0], [0]]>>
    %sum = addf %ar, %bf : tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[[0], [0]]>>
    %c = convert_layout %sum : tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[[0], [0]]>> -> tile<128xf32, #shared<offset=?>>
    %cr = convert_layout %c : tile<128xf32, #shared<offset=?>> -> tile<128xf32, #linear<register=[], lane=[[1], [2], [4], [8], [16]], warp=[[32], [64]]>>
    return
  }
}
