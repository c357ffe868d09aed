// RUN: nanotile-passes %s -p lower-views | filecheck %s
// lower-views turns view loads/stores into pointer tiles: coordinates from iota plus the
// tile index times the tile size, an unsigned bounds mask per dimension, i64 offsets
// scaled by the strides, and the view's padding value for out-of-bounds loads. A tile of
// 1024 elements or more adds the widened start to a 64-bit iota for the address (not the
// 32-bit coordinate widened), so that each register's address is another's plus a
// constant times the stride; a constant index's start is a constant.

cuda_tile.module @tests {
  // CHECK-LABEL: @copy_rows
  entry @copy_rows(%src: tile<ptr<f32>>, %dst: tile<ptr<f32>>, %n: tile<i32>, %ld: tile<i32>, %i: tile<i32>) {
    // CHECK-NOT: make_tensor_view
    // CHECK-NOT: make_partition_view
    // the padding value of the view (neg_inf) fills out-of-bounds lanes
    // CHECK: %[[PAD:.*]] = constant <f32: 0xFF800000> : tile<4x8xf32>
    // CHECK: iota : tile<4xi32>
    // CHECK: %[[START:.*]] = muli %i, %{{.*}} : tile<i32>
    // CHECK: %[[ROW:.*]] = addi
    // CHECK: iota : tile<8xi32>
    // CHECK: cmpi less_than %[[ROW]], %{{.*}}, unsigned : tile<4x8xi32> -> tile<4x8xi1>
    // CHECK: %[[R64:.*]] = exti %[[ROW]] signed : tile<4x8xi32> -> tile<4x8xi64>
    // CHECK: muli %[[R64]], %{{.*}} : tile<4x8xi64>
    // CHECK: %[[MASK:.*]] = andi
    // CHECK: %[[PTRS:.*]] = offset %{{.*}}, %{{.*}} : tile<4x8xptr<f32>>, tile<4x8xi64> -> tile<4x8xptr<f32>>
    // CHECK: load_ptr_tko weak %[[PTRS]], %[[MASK]], %[[PAD]]
    // CHECK: store_ptr_tko weak %{{.*}}, %{{.*}}, %{{.*}} :
    // CHECK-NOT: load_view_tko
    // CHECK-NOT: store_view_tko
    %c0 = constant <i32: 0> : tile<i32>
    %tv = make_tensor_view %src, shape = [%n, 8], strides = [%ld, 1] : tile<i32> -> tensor_view<?x8xf32, strides=[?,1]>
    %pv = make_partition_view %tv : partition_view<tile=(4x8), padding_value = neg_inf, tensor_view<?x8xf32, strides=[?,1]>>
    %t, %tok = load_view_tko weak %pv[%i, %c0] : partition_view<tile=(4x8), padding_value = neg_inf, tensor_view<?x8xf32, strides=[?,1]>>, tile<i32> -> tile<4x8xf32>, token
    %tv2 = make_tensor_view %dst, shape = [%n, 8], strides = [%ld, 1] : tile<i32> -> tensor_view<?x8xf32, strides=[?,1]>
    %pv2 = make_partition_view %tv2 : partition_view<tile=(4x8), tensor_view<?x8xf32, strides=[?,1]>>
    %s = store_view_tko weak %t, %pv2[%i, %c0] : tile<4x8xf32>, partition_view<tile=(4x8), tensor_view<?x8xf32, strides=[?,1]>>, tile<i32> -> token
    return
  }

  // CHECK-LABEL: @tile_count
  entry @tile_count(%src: tile<ptr<f32>>, %n: tile<i32>, %out: tile<ptr<i32>>) {
    // ceil(n / 16) replaces the index-space query
    // CHECK-NOT: get_index_space_shape
    // CHECK: %[[A:.*]] = addi %{{.*}}, %{{.*}} : tile<i32>
    // CHECK: divi %[[A]], %{{.*}} unsigned : tile<i32>
    %tv = make_tensor_view %src, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %pv = make_partition_view %tv : partition_view<tile=(16), tensor_view<?xf32, strides=[1]>>
    %c = get_index_space_shape %pv : partition_view<tile=(16), tensor_view<?xf32, strides=[1]>> -> tile<i32>
    %s = store_ptr_tko weak %out, %c : tile<ptr<i32>>, tile<i32> -> token
    return
  }

  // CHECK-LABEL: @copy_1d
  entry @copy_1d(%src: tile<ptr<i32>>, %n: tile<i32>, %i: tile<i32>) {
    // a 1-D view needs no reshape or broadcast of its iota: the coordinate tile already
    // has the tile's shape, so no identity reshape/broadcast is emitted
    // CHECK-NOT: reshape %{{.*}} : tile<1024xi32> -> tile<1024xi32>
    // CHECK-NOT: broadcast %{{.*}} : tile<1024xi32> -> tile<1024xi32>
    // CHECK: %[[IOTA:.*]] = iota : tile<1024xi32>
    // CHECK-NOT: reshape %{{.*}} : tile<1024xi32> -> tile<1024xi32>
    // CHECK-NOT: broadcast %{{.*}} : tile<1024xi32> -> tile<1024xi32>
    // CHECK: addi %{{.*}}, %[[IOTA]] : tile<1024xi32>
    // CHECK-NOT: reshape %{{.*}} : tile<1024xi32> -> tile<1024xi32>
    // CHECK-NOT: broadcast %{{.*}} : tile<1024xi32> -> tile<1024xi32>
    // CHECK: load_ptr_tko
    %tv = make_tensor_view %src, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xi32, strides=[1]>
    %pv = make_partition_view %tv : partition_view<tile=(1024), tensor_view<?xi32, strides=[1]>>
    %t, %tok = load_view_tko weak %pv[%i] : partition_view<tile=(1024), tensor_view<?xi32, strides=[1]>>, tile<i32> -> tile<1024xi32>, token
    %s = store_view_tko weak %t, %pv[%i] : tile<1024xi32>, partition_view<tile=(1024), tensor_view<?xi32, strides=[1]>>, tile<i32> -> token
    return
  }

  // CHECK-LABEL: @copy_big_rows
  entry @copy_big_rows(%src: tile<ptr<f32>>, %n: tile<i32>, %ld: tile<i32>, %i: tile<i32>) {
    // CHECK: iota : tile<64xi32>
    // CHECK: %[[IOTA64:.*]] = iota : tile<64xi64>
    // CHECK: %[[START:.*]] = muli %i, %{{.*}} : tile<i32>
    // CHECK: %[[ROW:.*]] = addi %{{.*}} : tile<64x32xi32>
    // CHECK: %[[START64:.*]] = exti %[[START]] signed : tile<i32> -> tile<i64>
    // CHECK: %[[ROW64:.*]] = addi %{{.*}} : tile<64x32xi64>
    // the column index is the constant 0: its start is 0, no addition
    // CHECK: %[[COL:.*]] = broadcast %{{.*}} : tile<1x32xi32> -> tile<64x32xi32>
    // CHECK: %[[COL64:.*]] = broadcast %{{.*}} : tile<1x32xi64> -> tile<64x32xi64>
    // CHECK: cmpi less_than %[[ROW]], %{{.*}}, unsigned : tile<64x32xi32> -> tile<64x32xi1>
    // CHECK-NOT: exti %[[ROW]]
    // CHECK: muli %[[ROW64]], %{{.*}} : tile<64x32xi64>
    // CHECK: cmpi less_than %[[COL]], %{{.*}}, unsigned
    // CHECK: addi %{{.*}}, %[[COL64]] : tile<64x32xi64>
    // CHECK: load_ptr_tko
    %c0 = constant <i32: 0> : tile<i32>
    %tv = make_tensor_view %src, shape = [%n, 32], strides = [%ld, 1] : tile<i32> -> tensor_view<?x32xf32, strides=[?,1]>
    %pv = make_partition_view %tv : partition_view<tile=(64x32), tensor_view<?x32xf32, strides=[?,1]>>
    %t, %tok = load_view_tko weak %pv[%i, %c0] : partition_view<tile=(64x32), tensor_view<?x32xf32, strides=[?,1]>>, tile<i32> -> tile<64x32xf32>, token
    %s = store_view_tko weak %t, %pv[%i, %c0] : tile<64x32xf32>, partition_view<tile=(64x32), tensor_view<?x32xf32, strides=[?,1]>>, tile<i32> -> token
    return
  }
}
