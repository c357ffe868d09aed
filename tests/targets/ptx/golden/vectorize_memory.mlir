// RUN: nanotile-passes %s -p assume-to-facts,lower-views,resolve-tokens,assign-layouts{gpu=sm_90},vectorize-memory | filecheck %s
// vectorize-memory marks a load or store whose thread holds consecutive elements in
// consecutive registers (the layout), at consecutive 16-byte aligned addresses (the
// div_by facts of the base pointer and the row stride), under a mask constant over the
// vector (the row bound divisible by 16): nanotile.vector = 4 (ld/st.v4 of f32). Without
// the facts, or for a mask that may change inside the vector, nothing is marked.

cuda_tile.module @tests {
  // CHECK-LABEL: entry @aligned(
  // CHECK: load_ptr_tko weak {{.+}} {nanotile.vector = 4 : i32}
  // CHECK: store_ptr_tko weak {{.+}} {nanotile.vector = 4 : i32}
  entry @aligned(%x: tile<ptr<f32>>, %y: tile<ptr<f32>>, %n: tile<i32>) {
    %ax = assume div_by<16>, %x : tile<ptr<f32>>
    %ay = assume div_by<16>, %y : tile<ptr<f32>>
    %an = assume div_by<16>, %n : tile<i32>
    %tx = make_tensor_view %ax, shape = [%an], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %px = make_partition_view %tx : partition_view<tile=(512), tensor_view<?xf32, strides=[1]>>
    %ty = make_tensor_view %ay, shape = [%an], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %py = make_partition_view %ty : partition_view<tile=(512), tensor_view<?xf32, strides=[1]>>
    %b, %bb, %bbb = get_tile_block_id : tile<i32>
    %v, %t = load_view_tko weak %px[%b] : partition_view<tile=(512), tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<512xf32>, token
    %w = store_view_tko weak %v, %py[%b] : tile<512xf32>, partition_view<tile=(512), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
    return
  }

  // CHECK-LABEL: entry @unknown_bound(
  // CHECK-NOT: nanotile.vector
  // CHECK: return
  entry @unknown_bound(%x: tile<ptr<f32>>, %y: tile<ptr<f32>>, %n: tile<i32>) {
    %ax = assume div_by<16>, %x : tile<ptr<f32>>
    %ay = assume div_by<16>, %y : tile<ptr<f32>>
    %tx = make_tensor_view %ax, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %px = make_partition_view %tx : partition_view<tile=(512), tensor_view<?xf32, strides=[1]>>
    %ty = make_tensor_view %ay, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %py = make_partition_view %ty : partition_view<tile=(512), tensor_view<?xf32, strides=[1]>>
    %b, %bb, %bbb = get_tile_block_id : tile<i32>
    %v, %t = load_view_tko weak %px[%b] : partition_view<tile=(512), tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<512xf32>, token
    %w = store_view_tko weak %v, %py[%b] : tile<512xf32>, partition_view<tile=(512), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
    return
  }
}
