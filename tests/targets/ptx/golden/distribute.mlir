// RUN: nanotile-passes %s -p distribute | filecheck %s
// distribute rewrites tile ops over whole tiles into ops over one thread's registers
// (#regs): a tile<128xi32> spread as one element per thread becomes tile<1xi32> per
// thread, and four per thread tile<4xi32>. iota becomes the thread's coordinates; a
// broadcast of a scalar a splat; conversions through shared memory shared_store and
// shared_load (the layouts say which element each register holds); a conversion that
// only renames registers (here: the two register bits trade places, so registers 1 and 2 swap) is a
// pick of registers, no instruction; element-wise ops keep their names. The stored
// layout has no warp bits, so every warp holds the same 128 elements: the store is masked
// to the owning copy (is_owner) so that each element is written once. A conversion that
// moves elements between the lanes of a warp (here lane bits 0 and 1 trade places) is a
// shuffle_idx by the layout algebra's plan: each register read from register registers[r]
// of lane lanes[r] XOR lane_map(%tid.x bits).

cuda_tile.module @tests {
  // CHECK-LABEL: entry @per_thread(
  // CHECK-SAME: tile<ptr<f32>, #regs>
  // CHECK: %[[X:.+]] = coordinates 0 of {{.+}} : tile<1xi32, #regs>
  // CHECK: shared_store %[[X]] of {{.+}} to tile<128xi32, #shared<offset=0>> : tile<1xi32, #regs>
  // CHECK: %[[R:.+]] = shared_load from tile<128xi32, #shared<offset=0>> as {{.+}} : tile<4xi32, #regs>
  // CHECK: %[[P:.+]] = splat %p : tile<ptr<f32>, #regs> -> tile<4xptr<f32>, #regs>
  // CHECK: %[[S:.+]] = pick %[[R]] [0, 2, 1, 3]
  // CHECK: %a = offset %[[P]], %[[S]] : tile<4xptr<f32>, #regs>, tile<4xi32, #regs> -> tile<4xptr<f32>, #regs>
  // CHECK: %[[O:.+]] = is_owner of {{.+}} : tile<i1, #regs>
  // CHECK: %[[M:.+]] = splat %[[O]] : tile<i1, #regs> -> tile<4xi1, #regs>
  // CHECK: %w = store_ptr_tko weak %a, {{.+}}, %[[M]] : tile<4xptr<f32>, #regs>, tile<4xf32, #regs>, tile<4xi1, #regs> -> token
  entry @per_thread(%p: tile<ptr<f32>, #replicated>) attributes {nanotile.shared_bytes = 512} {
    %x = iota : tile<128xi32, #blocked<per_thread=[1], lanes=[32], warps=[4], order=[0]>>
    barrier
    %s = convert_layout %x : tile<128xi32, #blocked<per_thread=[1], lanes=[32], warps=[4], order=[0]>> -> tile<128xi32, #shared<offset=0>>
    barrier
    %r = convert_layout %s : tile<128xi32, #shared<offset=0>> -> tile<128xi32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
    %q = convert_layout %r : tile<128xi32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>> -> tile<128xi32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
    %p1 = reshape %p : tile<ptr<f32>, #replicated> -> tile<1xptr<f32>, #replicated>
    %pb = broadcast %p1 : tile<1xptr<f32>, #replicated> -> tile<128xptr<f32>, #linear<register=[[2], [1]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
    %sw = convert_layout %r : tile<128xi32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>> -> tile<128xi32, #linear<register=[[2], [1]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
    %a = offset %pb, %sw : tile<128xptr<f32>, #linear<register=[[2], [1]], lane=[[4], [8], [16], [32], [64]], warp=[]>>, tile<128xi32, #linear<register=[[2], [1]], lane=[[4], [8], [16], [32], [64]], warp=[]>> -> tile<128xptr<f32>, #linear<register=[[2], [1]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
    %c = constant <f32: 2.0> : tile<128xf32, #linear<register=[[2], [1]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
    %w = store_ptr_tko weak %a, %c : tile<128xptr<f32>, #linear<register=[[2], [1]], lane=[[4], [8], [16], [32], [64]], warp=[]>>, tile<128xf32, #linear<register=[[2], [1]], lane=[[4], [8], [16], [32], [64]], warp=[]>> -> token
    return
  }

  // CHECK-LABEL: entry @shuffles(
  // CHECK: %[[X:.+]] = coordinates 0 of {{.+}} : tile<4xi32, #regs>
  // CHECK: %[[S:.+]] = shuffle_idx %[[X]] [0, 1, 2, 3] lanes [0, 0, 0, 0] lane_map [2, 1, 4, 8, 16] register_map [0, 0, 0, 0, 0] : tile<4xi32, #regs> -> tile<4xi32, #regs>
  // CHECK: store_ptr_tko weak %a, %[[S]]
  entry @shuffles(%p: tile<ptr<i32>, #replicated>) {
    %x = iota : tile<128xi32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>>
    %s = convert_layout %x : tile<128xi32, #linear<register=[[1], [2]], lane=[[4], [8], [16], [32], [64]], warp=[]>> -> tile<128xi32, #linear<register=[[1], [2]], lane=[[8], [4], [16], [32], [64]], warp=[]>>
    %p1 = reshape %p : tile<ptr<i32>, #replicated> -> tile<1xptr<i32>, #replicated>
    %pb = broadcast %p1 : tile<1xptr<i32>, #replicated> -> tile<128xptr<i32>, #linear<register=[[1], [2]], lane=[[8], [4], [16], [32], [64]], warp=[]>>
    %a = offset %pb, %s : tile<128xptr<i32>, #linear<register=[[1], [2]], lane=[[8], [4], [16], [32], [64]], warp=[]>>, tile<128xi32, #linear<register=[[1], [2]], lane=[[8], [4], [16], [32], [64]], warp=[]>> -> tile<128xptr<i32>, #linear<register=[[1], [2]], lane=[[8], [4], [16], [32], [64]], warp=[]>>
    %w = store_ptr_tko weak %a, %s : tile<128xptr<i32>, #linear<register=[[1], [2]], lane=[[8], [4], [16], [32], [64]], warp=[]>>, tile<128xi32, #linear<register=[[1], [2]], lane=[[8], [4], [16], [32], [64]], warp=[]>> -> token
    return
  }
}
