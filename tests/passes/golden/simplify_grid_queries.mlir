// RUN: nanotile-passes %s -p simplify-grid-queries,dce | filecheck %s
// simplify-grid-queries keeps one block-id and one grid-size query per kernel, at the
// top, folds comparisons the grid decides, and the index space of static views.

cuda_tile.module @tests {
  // CHECK-LABEL: @grid
  entry @grid(%p: tile<ptr<i1>>, %c: tile<i1>) {
    // CHECK-NEXT: %[[X:[a-z0-9_]+]], %{{.*}}, %{{.*}} = get_tile_block_id
    // CHECK-NEXT: %[[NX:[a-z0-9_]+]], %{{.*}}, %{{.*}} = get_num_tile_blocks
    // CHECK-NOT: get_tile_block_id
    // CHECK-NOT: get_num_tile_blocks
    // CHECK: if
    // CHECK-NOT: cmpi less_than
    // CHECK: constant <i1: true>
    // CHECK-NOT: cmpi less_than
    // CHECK: cmpi equal %[[X]]
    %r = if %c -> (tile<i1>) {
      %bx, %by, %bz = get_tile_block_id : tile<i32>
      %nx, %ny, %nz = get_num_tile_blocks : tile<i32>
      %lt = cmpi less_than %bx, %nx, signed : tile<i32> -> tile<i1>
      yield %lt : tile<i1>
    } else {
      %bx2, %by2, %bz2 = get_tile_block_id : tile<i32>
      %n2x, %n2y, %n2z = get_num_tile_blocks : tile<i32>
      %eq = cmpi equal %bx2, %n2y, signed : tile<i32> -> tile<i1>
      yield %eq : tile<i1>
    }
    %t = store_ptr_tko weak %p, %r : tile<ptr<i1>>, tile<i1> -> token
    return
  }

  // CHECK-LABEL: @index_space
  entry @index_space(%base: tile<ptr<f32>>, %q: tile<ptr<i32>>) {
    // 64x96 cut into 16x32 tiles: a 4x3 index space
    // CHECK-NOT: get_index_space_shape
    // CHECK-DAG: constant <i32: 4>
    // CHECK-DAG: constant <i32: 3>
    %tv = make_tensor_view %base, shape = [64, 96], strides = [96, 1] : tensor_view<64x96xf32, strides=[96,1]>
    %pv = make_partition_view %tv : partition_view<tile=(16x32), tensor_view<64x96xf32, strides=[96,1]>>
    %a, %b = get_index_space_shape %pv : partition_view<tile=(16x32), tensor_view<64x96xf32, strides=[96,1]>> -> tile<i32>
    %s = addi %a, %b : tile<i32>
    %t = store_ptr_tko weak %q, %a : tile<ptr<i32>>, tile<i32> -> token
    %t2 = store_ptr_tko weak %q, %b token=%t : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
