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
// select-tma-stores turns an atomic_red_view_tko into a tma_store with its mode as the
// reduction (cp.reduce.async.bulk.tensor), as tileiras does (UTMAREDG), whatever
// computed the value: an f32 addf and an i32 xor leave by TMA, each through its own
// tensor map, the xor's of unsigned integers (as the hardware needs for and, or and
// xor). A umax stays an atomic (TMA's min/max take signedness from the map's type, and
// nanotile's maps of i32 for min/max are signed), and so does a reduction through a view
// whose row stride is not known to be a multiple of 16 bytes.
// CHECK-LABEL: entry @reductions(
// CHECK: tma_store %bv at %{{.+}}, %{{.+}} map "f32 base=a0 shape=[a1,a2] strides=[a3,1] box=[64,32] swizzle=128" reduce "addf" : tile<64x64xf32>
// CHECK-NOT: atomic_red_view_tko relaxed device %vp
// CHECK: tma_store %bw at %{{.+}}, %{{.+}} map "i32 base=a4 shape=[a1,a2] strides=[a3,1] box=[64,32] swizzle=128 unsigned" reduce "xor" : tile<64x64xi32>
// CHECK: atomic_red_view_tko relaxed device %vq[%x, %y], umax, %bw
// CHECK: atomic_red_view_tko relaxed device %vu[%x, %y], addf, %bv
// CHECK-NOT: tma_store

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
  entry @reductions(%p: tile<ptr<f32>>, %m: tile<i32>, %n: tile<i32>, %s: tile<i32>,
                    %q: tile<ptr<i32>>, %v: tile<f32>, %w: tile<i32>, %s2: tile<i32>) {
    %p16 = assume div_by<16>, %p : tile<ptr<f32>>
    %s4 = assume div_by<4>, %s : tile<i32>
    %q16 = assume div_by<16>, %q : tile<ptr<i32>>
    %tp = make_tensor_view %p16, shape = [%m, %n], strides = [%s4, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %tq = make_tensor_view %q16, shape = [%m, %n], strides = [%s4, 1] : tile<i32> -> tensor_view<?x?xi32, strides=[?,1]>
    %vp = make_partition_view %tp : partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[?,1]>>
    %tu = make_tensor_view %p16, shape = [%m, %n], strides = [%s2, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %vu = make_partition_view %tu : partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[?,1]>>
    %vq = make_partition_view %tq : partition_view<tile=(64x64), tensor_view<?x?xi32, strides=[?,1]>>
    %x, %y, %z = get_tile_block_id : tile<i32>
    %rv = reshape %v : tile<f32> -> tile<1x1xf32>
    %bv = broadcast %rv : tile<1x1xf32> -> tile<64x64xf32>
    %rw = reshape %w : tile<i32> -> tile<1x1xi32>
    %bw = broadcast %rw : tile<1x1xi32> -> tile<64x64xi32>
    %t1 = atomic_red_view_tko relaxed device %vp[%x, %y], addf, %bv : tile<64x64xf32>, partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
    %t2 = atomic_red_view_tko relaxed device %vq[%x, %y], xor, %bw : tile<64x64xi32>, partition_view<tile=(64x64), tensor_view<?x?xi32, strides=[?,1]>>, tile<i32> -> token
    %t3 = atomic_red_view_tko relaxed device %vq[%x, %y], umax, %bw : tile<64x64xi32>, partition_view<tile=(64x64), tensor_view<?x?xi32, strides=[?,1]>>, tile<i32> -> token
    %t6 = atomic_red_view_tko relaxed device %vu[%x, %y], addf, %bv : tile<64x64xf32>, partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
    return
  }
}
