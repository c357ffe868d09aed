// RUN: nanotile-passes %s -p lower-convert-layout | filecheck %s
// lower-convert-layout classifies each convert_layout with the layout algebra: a
// conversion to the same layout goes; one where every thread already holds its new
// elements (here: the two registers swap their roles) stays, for distribute to rename
// registers; one that only exchanges lanes of a warp, each destination register reading
// one source register (here lanes 1 and 2 swap), stays too, for distribute to make warp
// shuffles of it; one that moves elements between warps, or inside a warp with a source
// register that depends on more than two lane bits (a transpose of 8 registers by 32
// lanes), becomes a round trip through a #shared buffer: row-major and swizzled, or,
// where both ends' registers run along another dimension (the warps' partials of a
// reduction, four consecutive rows a thread), with that dimension fastest and no swizzle,
// so that each thread stores and loads whole vectors.

cuda_tile.module @tests {
  // CHECK-LABEL: entry @conversions(
  // CHECK-NOT: convert_layout %x : {{.+}} -> tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
  // CHECK: convert_layout %x : {{.+}} -> tile<128xf32, #linear<register=[[2], [1]],
  // CHECK: convert_layout %x : {{.+}} -> tile<128xf32, #linear<register=[[1], [2]], lane=[[8], [4], [16], [32], [64]], warp=[]>>
  // CHECK: convert_layout %w : {{.+}} -> tile<128xf32, #shared<offset=?
  // CHECK-NEXT: convert_layout {{.+}} : tile<128xf32, #shared<{{.+}}> -> tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
  // CHECK: convert_layout %t : {{.+}} -> tile<256xf32, #shared<offset=?
  // CHECK-NEXT: convert_layout {{.+}} : tile<256xf32, #shared<{{.+}}> -> tile<256xf32, #linear<register=[[32], [64], [128]], lane=[[1], [2], [4], [8], [16]], warp=[]>>
  entry @conversions(%p: tile<ptr<f32>, #replicated>) {
    %x = constant <f32: 1.0> : tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
    %same = convert_layout %x : tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>> -> tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
    %renamed = convert_layout %x : tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>> -> tile<128xf32, #linear<register=[[2], [1]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
    %shuffled = convert_layout %x : tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>> -> tile<128xf32, #linear<register=[[1], [2]], lane=[[8], [4], [16], [32], [64]], warp=[]>>
    %w = constant <f32: 2.0> : tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32]], warp=[[64]]>>
    %across = convert_layout %w : tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32]], warp=[[64]]>> -> tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
    %t = constant <f32: 3.0> : tile<256xf32, #linear<register=[[1], [2], [4]], lane=[[8], [16], [32], [64], [128]], warp=[]>>
    %transposed = convert_layout %t : tile<256xf32, #linear<register=[[1], [2], [4]], lane=[[8], [16], [32], [64], [128]], warp=[]>> -> tile<256xf32, #linear<register=[[32], [64], [128]], lane=[[1], [2], [4], [8], [16]], warp=[]>>
    return
  }

  // CHECK-LABEL: entry @two_dimensional(
  // CHECK: convert_layout %s : {{.+}} -> tile<128x4xf32, #shared<offset=?, order=[0, 1]>>
  // CHECK: convert_layout %r : {{.+}} -> tile<64x32xf32, #shared<offset=?, swizzle=[4, 1, 8]>>
  entry @two_dimensional() {
    %s = constant <f32: 4.0> : tile<128x4xf32, #linear<register=[[1, 0], [2, 0]], lane=[[4, 0], [8, 0], [16, 0], [32, 0], [64, 0]], warp=[[0, 1], [0, 2]]>>
    %gathered = convert_layout %s : tile<128x4xf32, #linear<register=[[1, 0], [2, 0]], lane=[[4, 0], [8, 0], [16, 0], [32, 0], [64, 0]], warp=[[0, 1], [0, 2]]>> -> tile<128x4xf32, #linear<register=[[1, 0], [2, 0], [0, 1], [0, 2]], lane=[[4, 0], [8, 0], [16, 0], [32, 0], [64, 0]], warp=[]>>
    %r = constant <f32: 5.0> : tile<64x32xf32, #linear<register=[[0, 1], [0, 2]], lane=[[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], warp=[[4, 0], [8, 0]]>>
    %moved = convert_layout %r : tile<64x32xf32, #linear<register=[[0, 1], [0, 2]], lane=[[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], warp=[[4, 0], [8, 0]]>> -> tile<64x32xf32, #linear<register=[[0, 1], [0, 2]], lane=[[0, 4], [0, 8], [0, 16], [1, 0], [2, 0]], warp=[[16, 0], [32, 0]]>>
    return
  }
}
