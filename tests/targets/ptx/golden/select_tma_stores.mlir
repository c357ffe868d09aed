// RUN: nanotile-passes %s -p 'assume-to-facts,select-tma-stores{gpu=sm_90}' | filecheck %s
// select-tma-stores turns the store of a matmul's result (here through ftof to f16)
// into tma_store: the value, the tile's first element (index * tile size) and the
// tensor map's description: C (128x128 f16) leaves in two 128x64 boxes with the
// 128-byte swizzle. The store of the loaded tile %x (no mmaf behind it) and the store
// through a view whose stride is not known to be a multiple of 16 bytes stay.

// CHECK-LABEL: entry @epilogue(
// CHECK: %[[H:.+]] = ftof %d
// CHECK: %[[R:.+]] = muli %x, %{{.+}} : tile<i32>
// CHECK: %[[C:.+]] = muli %y, %{{.+}} : tile<i32>
// CHECK: tma_store %[[H]] at %[[R]], %[[C]] map "f16 base=a2 shape=[a3,a4] strides=[a5,1] box=[128,64] swizzle=128" : tile<128x128xf16> at tile<i32>, tile<i32>
// CHECK-NOT: store_view_tko weak %[[H]]
// CHECK: store_view_tko weak %x_tile
// CHECK: store_view_tko weak %h2
cuda_tile.module @tests {
  entry @epilogue(%pa: tile<ptr<f16>>, %pb: tile<ptr<f16>>, %c: tile<ptr<f16>>, %m: tile<i32>,
                  %n: tile<i32>, %sc: tile<i32>, %e: tile<ptr<f16>>, %se: tile<i32>) {
    %c16 = assume div_by<16>, %c : tile<ptr<f16>>
    %sc8 = assume div_by<8>, %sc : tile<i32>
    %e16 = assume div_by<16>, %e : tile<ptr<f16>>
    %ta = make_tensor_view %pa, shape = [128, 32], strides = [32, 1] : tensor_view<128x32xf16, strides=[32,1]>
    %tb = make_tensor_view %pb, shape = [32, 128], strides = [128, 1] : tensor_view<32x128xf16, strides=[128,1]>
    %tc = make_tensor_view %c16, shape = [%m, %n], strides = [%sc8, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
    %te = make_tensor_view %e16, shape = [%m, %n], strides = [%se, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
    %pva = make_partition_view %ta : partition_view<tile=(128x32), tensor_view<128x32xf16, strides=[32,1]>>
    %pvb = make_partition_view %tb : partition_view<tile=(32x128), tensor_view<32x128xf16, strides=[128,1]>>
    %pvc = make_partition_view %tc : partition_view<tile=(128x128), tensor_view<?x?xf16, strides=[?,1]>>
    %pvx = make_partition_view %tc : partition_view<tile=(128x32), tensor_view<?x?xf16, strides=[?,1]>>
    %pve = make_partition_view %te : partition_view<tile=(128x128), tensor_view<?x?xf16, strides=[?,1]>>
    %x, %y, %z = get_tile_block_id : tile<i32>
    %lo = constant <i32: 0> : tile<i32>
    %zero = constant <f32: 0.0> : tile<128x128xf32>
    %a, %t1 = load_view_tko weak %pva[%lo, %lo] : partition_view<tile=(128x32), tensor_view<128x32xf16, strides=[32,1]>>, tile<i32> -> tile<128x32xf16>, token
    %b, %t2 = load_view_tko weak %pvb[%lo, %lo] : partition_view<tile=(32x128), tensor_view<32x128xf16, strides=[128,1]>>, tile<i32> -> tile<32x128xf16>, token
    %d = mmaf %a, %b, %zero : tile<128x32xf16>, tile<32x128xf16>, tile<128x128xf32>
    %h = ftof %d : tile<128x128xf32> -> tile<128x128xf16>
    %t3 = store_view_tko weak %h, %pvc[%x, %y] : tile<128x128xf16>, partition_view<tile=(128x128), tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> token
    %x_tile, %t4 = load_view_tko weak %pva[%lo, %lo] : partition_view<tile=(128x32), tensor_view<128x32xf16, strides=[32,1]>>, tile<i32> -> tile<128x32xf16>, token
    %t5 = store_view_tko weak %x_tile, %pvx[%x, %lo] : tile<128x32xf16>, partition_view<tile=(128x32), tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> token
    %d2 = mmaf %a, %b, %zero : tile<128x32xf16>, tile<32x128xf16>, tile<128x128xf32>
    %h2 = ftof %d2 : tile<128x128xf32> -> tile<128x128xf16>
    %t6 = store_view_tko weak %h2, %pve[%x, %y] : tile<128x128xf16>, partition_view<tile=(128x128), tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> token
    return
  }
}
