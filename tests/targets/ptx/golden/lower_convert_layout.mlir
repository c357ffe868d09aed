// RUN: nanotile-passes %s -p lower-convert-layout | filecheck %s
// lower-convert-layout classifies each convert_layout with the layout algebra: a
// conversion to the same layout goes; one where every thread already holds its new
// elements (here: the two registers swap their roles) stays, for distribute to rename
// registers; one that moves elements between threads (a transpose) becomes a round trip
// through a swizzled #shared buffer.

cuda_tile.module @tests {
  // CHECK-LABEL: entry @conversions(
  // CHECK-NOT: convert_layout %x : {{.+}} -> tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
  // CHECK: %[[R:.+]] = convert_layout %x : {{.+}} -> tile<128xf32, #linear<register=[[2], [1]],
  // CHECK: convert_layout %x : {{.+}} -> tile<128xf32, #shared<offset=?
  // CHECK-NEXT: convert_layout {{.+}} : tile<128xf32, #shared<{{.+}}> -> tile<128xf32, #linear<register=[[32], [64]], lane=[[1], [2], [4], [8], [16]], warp=[]>>
  entry @conversions(%p: tile<ptr<f32>, #replicated>) {
    %x = constant <f32: 1.0> : tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
    %same = convert_layout %x : tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>> -> tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
    %renamed = convert_layout %x : tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>> -> tile<128xf32, #linear<register=[[2], [1]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
    %moved = convert_layout %x : tile<128xf32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>> -> tile<128xf32, #linear<register=[[32], [64]], lane=[[1], [2], [4], [8], [16]], warp=[]>>
    return
  }
}
