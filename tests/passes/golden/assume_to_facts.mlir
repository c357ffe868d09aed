// RUN: nanotile-passes %s -p assume-to-facts | filecheck %s
// assume-to-facts drops assume ops (their facts are kept for later passes) and makes
// the users read the assumed value directly.

cuda_tile.module @tests {
  // CHECK-LABEL: @facts
  entry @facts(%p: tile<ptr<f32>>, %n: tile<i32>) {
    // CHECK-NOT: assume
    // CHECK: make_tensor_view %[[P:[a-z0-9_]+]], shape = [%[[N:[a-z0-9_]+]]]
    %ap = assume div_by<16>, %p : tile<ptr<f32>>
    %an = assume bounded<0, ?>, %n : tile<i32>
    %an2 = assume div_by<4>, %an : tile<i32>
    %tv = make_tensor_view %ap, shape = [%an2], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %pv = make_partition_view %tv : partition_view<tile=(16), tensor_view<?xf32, strides=[1]>>
    %c0 = constant <i32: 0> : tile<i32>
    %v, %t = load_view_tko weak %pv[%c0] : partition_view<tile=(16), tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<16xf32>, token
    %t2 = store_view_tko weak %v, %pv[%c0] : tile<16xf32>, partition_view<tile=(16), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
    return
  }
}
