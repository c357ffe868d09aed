// RUN: nanotile-passes %s -p lower-convert-layout | filecheck %s
// lower-convert-layout classifies each convert_layout with the layout algebra: a
// conversion to the same layout goes; one where every thread already holds its new
// elements (here: the two registers swap their roles) stays, for distribute to rename
// registers; one that only exchanges lanes of a warp, each destination register reading
// one source register (here lanes 1 and 2 swap), stays too, for distribute to make warp
// shuffles of it; one that moves elements between warps, or inside a warp with a source
// register that depends on more than two lane bits (a transpose of 8 registers by 32
// lanes), becomes a round trip through a swizzled #shared buffer.

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
}
