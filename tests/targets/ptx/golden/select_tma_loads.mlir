// RUN: nanotile-passes %s -p 'assume-to-facts,select-tma-loads{gpu=sm_90}' | filecheck %s
// select-tma-loads turns a view load whose only use is a wgmma operand into tma_load:
// the tile's first element (index * tile size, outermost first) and the tensor map's
// description. @tma (matmul_f16_tma's K loop): A (128x32 f16, 64-byte rows) is one
// 128x32 box with the 64-byte swizzle, B (32x128, read MN-major) two 32x64 boxes with
// the 128-byte swizzle, as tileiras' own maps; base, shape and strides are the kernel's
// arguments (a0, a1, a2, a3: 16-byte aligned, the stride div_by 8 elements).
// @no_tma keeps its loads: B's stride is not known to be a multiple of 16 bytes, and
// A is also stored (a second use). @vector (layernorm's weight): a 1-D tile of 1024 f32
// that every tile block loads (a constant index) is copied into a row-major buffer in
// boxes of 256, unswizzled; the tile of %x, whose index is the block id, is not.

// CHECK-LABEL: entry @tma(
// CHECK-NOT: load_view_tko
// CHECK: %[[R:.+]] = muli %{{.+}}, %{{.+}} : tile<i32>
// CHECK: %[[A:.+]] = tma_load %[[R]], %{{.+}} map "f16 base=a0 shape=[a1,a2] strides=[a3,1] box=[128,32] swizzle=64" : tile<i32>, tile<i32> -> tile<128x32xf16>
// CHECK: %[[B:.+]] = tma_load %{{.+}}, %{{.+}} map "f16 base=a4 shape=[a5,a6] strides=[a7,1] box=[32,64] swizzle=128" : tile<i32>, tile<i32> -> tile<32x128xf16>
// CHECK: mmaf %[[A]], %[[B]],
// CHECK-LABEL: entry @no_tma(
// CHECK-NOT: tma_load
// CHECK: load_view_tko
// CHECK: load_view_tko
// CHECK-NOT: tma_load
// CHECK-LABEL: entry @vector(
// CHECK: %[[W:.+]] = tma_load %{{.+}} map "f32 base=a0 shape=[a1] strides=[1] box=[256] swizzle=0" : tile<i32> -> tile<1024xf32>
// CHECK: load_view_tko weak %px[%i]
cuda_tile.module @tests {
  entry @tma(%a: tile<ptr<f16>>, %m: tile<i32>, %k: tile<i32>, %sa: tile<i32>,
             %b: tile<ptr<f16>>, %k2: tile<i32>, %n: tile<i32>, %sb: tile<i32>,
             %c: tile<ptr<f32>>) {
    %a16 = assume div_by<16>, %a : tile<ptr<f16>>
    %b16 = assume div_by<16>, %b : tile<ptr<f16>>
    %sa8 = assume div_by<8>, %sa : tile<i32>
    %sb8 = assume div_by<8>, %sb : tile<i32>
    %ta = make_tensor_view %a16, shape = [%m, %k], strides = [%sa8, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
    %tb = make_tensor_view %b16, shape = [%k2, %n], strides = [%sb8, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
    %tc = make_tensor_view %c, shape = [128, 128], strides = [128, 1] : tensor_view<128x128xf32, strides=[128,1]>
    %pa = make_partition_view %ta : partition_view<tile=(128x32), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(32x128), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>
    %pc = make_partition_view %tc : partition_view<tile=(128x128), tensor_view<128x128xf32, strides=[128,1]>>
    %x, %y, %z = get_tile_block_id : tile<i32>
    %zero = constant <f32: 0.0> : tile<128x128xf32>
    %lo = constant <i32: 0> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %steps = constant <i32: 2> : tile<i32>
    %acc = for %i in (%lo to %steps, step %one) : tile<i32> iter_values(%sum = %zero) -> (tile<128x128xf32>) {
      %ta_tile, %t1 = load_view_tko weak %pa[%x, %i] : partition_view<tile=(128x32), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> tile<128x32xf16>, token
      %tb_tile, %t2 = load_view_tko weak %pb[%i, %y] : partition_view<tile=(32x128), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> tile<32x128xf16>, token
      %d = mmaf %ta_tile, %tb_tile, %sum : tile<128x32xf16>, tile<32x128xf16>, tile<128x128xf32>
      continue %d : tile<128x128xf32>
    }
    %t3 = store_view_tko weak %acc, %pc[%lo, %lo] : tile<128x128xf32>, partition_view<tile=(128x128), tensor_view<128x128xf32, strides=[128,1]>>, tile<i32> -> token
    return
  }
  entry @no_tma(%a: tile<ptr<f16>>, %m: tile<i32>, %k: tile<i32>, %sa: tile<i32>,
                %b: tile<ptr<f16>>, %k2: tile<i32>, %n: tile<i32>, %sb: tile<i32>,
                %c: tile<ptr<f32>>, %e: tile<ptr<f16>>) {
    %a16 = assume div_by<16>, %a : tile<ptr<f16>>
    %b16 = assume div_by<16>, %b : tile<ptr<f16>>
    %sa8 = assume div_by<8>, %sa : tile<i32>
    %ta = make_tensor_view %a16, shape = [%m, %k], strides = [%sa8, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
    %tb = make_tensor_view %b16, shape = [%k2, %n], strides = [%sb, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
    %tc = make_tensor_view %c, shape = [128, 128], strides = [128, 1] : tensor_view<128x128xf32, strides=[128,1]>
    %te = make_tensor_view %e, shape = [128, 32], strides = [32, 1] : tensor_view<128x32xf16, strides=[32,1]>
    %pa = make_partition_view %ta : partition_view<tile=(128x32), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(32x128), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>
    %pc = make_partition_view %tc : partition_view<tile=(128x128), tensor_view<128x128xf32, strides=[128,1]>>
    %pe = make_partition_view %te : partition_view<tile=(128x32), tensor_view<128x32xf16, strides=[32,1]>>
    %zero = constant <f32: 0.0> : tile<128x128xf32>
    %lo = constant <i32: 0> : tile<i32>
    %ta_tile, %t1 = load_view_tko weak %pa[%lo, %lo] : partition_view<tile=(128x32), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> tile<128x32xf16>, token
    %tb_tile, %t2 = load_view_tko weak %pb[%lo, %lo] : partition_view<tile=(32x128), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> tile<32x128xf16>, token
    %d = mmaf %ta_tile, %tb_tile, %zero : tile<128x32xf16>, tile<32x128xf16>, tile<128x128xf32>
    %t3 = store_view_tko weak %d, %pc[%lo, %lo] : tile<128x128xf32>, partition_view<tile=(128x128), tensor_view<128x128xf32, strides=[128,1]>>, tile<i32> -> token
    %t4 = store_view_tko weak %ta_tile, %pe[%lo, %lo] : tile<128x32xf16>, partition_view<tile=(128x32), tensor_view<128x32xf16, strides=[32,1]>>, tile<i32> -> token
    return
  }
  entry @vector(%w: tile<ptr<f32>>, %n: tile<i32>, %x: tile<ptr<f32>>, %y: tile<ptr<f32>>) {
    %w16 = assume div_by<16>, %w : tile<ptr<f32>>
    %x16 = assume div_by<16>, %x : tile<ptr<f32>>
    %tw = make_tensor_view %w16, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %tx = make_tensor_view %x16, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %ty = make_tensor_view %y, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %pw = make_partition_view %tw : partition_view<tile=(1024), tensor_view<?xf32, strides=[1]>>
    %px = make_partition_view %tx : partition_view<tile=(1024), tensor_view<?xf32, strides=[1]>>
    %py = make_partition_view %ty : partition_view<tile=(1024), tensor_view<?xf32, strides=[1]>>
    %i, %j, %k = get_tile_block_id : tile<i32>
    %lo = constant <i32: 0> : tile<i32>
    %wt, %t1 = load_view_tko weak %pw[%lo] : partition_view<tile=(1024), tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<1024xf32>, token
    %xt, %t2 = load_view_tko weak %px[%i] : partition_view<tile=(1024), tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<1024xf32>, token
    %yt = mulf %wt, %xt rounding<nearest_even> : tile<1024xf32>
    %t3 = store_view_tko weak %yt, %py[%i] : tile<1024xf32>, partition_view<tile=(1024), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
    return
  }
}
