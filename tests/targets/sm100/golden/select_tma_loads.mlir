// RUN: nanotile-passes %s -p 'assume-to-facts,select-tma-loads{gpu=sm_100}' | filecheck %s
// select-tma-loads on sm_100: the operands of an mmaf tcgen05 runs come by TMA. @batched
// (the cutile-tests batched f8 matmul's shape, smaller): each operand is a 1 x R x C tile
// of a 3-D tensor reshaped to R x C; the copy lands the reshaped tile (the reshape goes),
// through a 3-D map with a box of 1 along the batch. A (128 x 128 f8, K-major: 128-byte
// rows) is one box with the 128-byte swizzle; B (128 x 128, rows along N as in global
// memory) too: tcgen05 reads an f8 B MN-major, which wgmma cannot. @column_major (the
// block-scaled matmul's B: a tensor with strides [1, s], K contiguous): B lands K-major
// through the transposed tensor's map (shape and strides reversed, coordinates too: N's
// first, the box 128 N-rows of 128 K-bytes), its description marked ``transposed``.

// CHECK-LABEL: entry @batched(
// CHECK-NOT: load_view_tko
// CHECK: %[[A:.+]] = tma_load %{{.+}}, %{{.+}}, %{{.+}} map "f8E4M3FN base=a0 shape=[2,128,128] strides=[16384,128,1] box=[1,128,128] swizzle=128" : tile<i32>, tile<i32>, tile<i32> -> tile<128x128xf8E4M3FN>
// CHECK-NEXT: %[[B:.+]] = tma_load %{{.+}}, %{{.+}}, %{{.+}} map "f8E4M3FN base=a1 shape=[2,128,128] strides=[16384,128,1] box=[1,128,128] swizzle=128" : tile<i32>, tile<i32>, tile<i32> -> tile<128x128xf8E4M3FN>
// CHECK-NEXT: mmaf %[[A]], %[[B]],
// CHECK-NOT: reshape %{{.+}} : tile<1x128x128xf8E4M3FN>
// CHECK-LABEL: entry @column_major(
// CHECK: %[[Y:.+]] = muli %y, %{{.+}} : tile<i32>
// CHECK: %[[A:.+]] = tma_load %{{.+}}, %{{.+}} map "f8E4M3FN base=a0 shape=[128,128] strides=[128,1] box=[128,128] swizzle=128" : tile<i32>, tile<i32> -> tile<128x128xf8E4M3FN>
// CHECK-NEXT: %[[B:.+]] = tma_load %[[Y]], %{{.+}} map "f8E4M3FN base=a1 shape=[256,128] strides=[128,1] box=[128,128] swizzle=128 transposed" : tile<i32>, tile<i32> -> tile<128x128xf8E4M3FN>
// CHECK-NEXT: mmaf %[[A]], %[[B]],
cuda_tile.module @tests {
  entry @batched(%a: tile<ptr<f8E4M3FN>>, %b: tile<ptr<f8E4M3FN>>, %c: tile<ptr<f32>>) {
    %a16 = assume div_by<16>, %a : tile<ptr<f8E4M3FN>>
    %b16 = assume div_by<16>, %b : tile<ptr<f8E4M3FN>>
    %ta = make_tensor_view %a16, shape = [2, 128, 128], strides = [16384, 128, 1] : tensor_view<2x128x128xf8E4M3FN, strides=[16384,128,1]>
    %tb = make_tensor_view %b16, shape = [2, 128, 128], strides = [16384, 128, 1] : tensor_view<2x128x128xf8E4M3FN, strides=[16384,128,1]>
    %tc = make_tensor_view %c, shape = [2, 128, 128], strides = [16384, 128, 1] : tensor_view<2x128x128xf32, strides=[16384,128,1]>
    %pa = make_partition_view %ta : partition_view<tile=(1x128x128), padding_value = zero, tensor_view<2x128x128xf8E4M3FN, strides=[16384,128,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(1x128x128), padding_value = zero, tensor_view<2x128x128xf8E4M3FN, strides=[16384,128,1]>>
    %pc = make_partition_view %tc : partition_view<tile=(1x128x128), tensor_view<2x128x128xf32, strides=[16384,128,1]>>
    %x, %y, %z = get_tile_block_id : tile<i32>
    %lo = constant <i32: 0> : tile<i32>
    %zero = constant <f32: 0.0> : tile<128x128xf32>
    %at, %t1 = load_view_tko weak %pa[%x, %lo, %lo] : partition_view<tile=(1x128x128), padding_value = zero, tensor_view<2x128x128xf8E4M3FN, strides=[16384,128,1]>>, tile<i32> -> tile<1x128x128xf8E4M3FN>, token
    %a2 = reshape %at : tile<1x128x128xf8E4M3FN> -> tile<128x128xf8E4M3FN>
    %bt, %t2 = load_view_tko weak %pb[%x, %lo, %lo] : partition_view<tile=(1x128x128), padding_value = zero, tensor_view<2x128x128xf8E4M3FN, strides=[16384,128,1]>>, tile<i32> -> tile<1x128x128xf8E4M3FN>, token
    %b2 = reshape %bt : tile<1x128x128xf8E4M3FN> -> tile<128x128xf8E4M3FN>
    %d = mmaf %a2, %b2, %zero : tile<128x128xf8E4M3FN>, tile<128x128xf8E4M3FN>, tile<128x128xf32>
    %d3 = reshape %d : tile<128x128xf32> -> tile<1x128x128xf32>
    %t3 = store_view_tko weak %d3, %pc[%x, %lo, %lo] : tile<1x128x128xf32>, partition_view<tile=(1x128x128), tensor_view<2x128x128xf32, strides=[16384,128,1]>>, tile<i32> -> token
    return
  }
  entry @column_major(%a: tile<ptr<f8E4M3FN>>, %b: tile<ptr<f8E4M3FN>>, %c: tile<ptr<f32>>) {
    %a16 = assume div_by<16>, %a : tile<ptr<f8E4M3FN>>
    %b16 = assume div_by<16>, %b : tile<ptr<f8E4M3FN>>
    %ta = make_tensor_view %a16, shape = [128, 128], strides = [128, 1] : tensor_view<128x128xf8E4M3FN, strides=[128,1]>
    %tb = make_tensor_view %b16, shape = [128, 256], strides = [1, 128] : tensor_view<128x256xf8E4M3FN, strides=[1,128]>
    %tc = make_tensor_view %c, shape = [128, 256], strides = [256, 1] : tensor_view<128x256xf32, strides=[256,1]>
    %pa = make_partition_view %ta : partition_view<tile=(128x128), padding_value = zero, tensor_view<128x128xf8E4M3FN, strides=[128,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(128x128), padding_value = zero, tensor_view<128x256xf8E4M3FN, strides=[1,128]>>
    %pc = make_partition_view %tc : partition_view<tile=(128x128), tensor_view<128x256xf32, strides=[256,1]>>
    %x, %y, %z = get_tile_block_id : tile<i32>
    %lo = constant <i32: 0> : tile<i32>
    %zero = constant <f32: 0.0> : tile<128x128xf32>
    %at, %t1 = load_view_tko weak %pa[%lo, %lo] : partition_view<tile=(128x128), padding_value = zero, tensor_view<128x128xf8E4M3FN, strides=[128,1]>>, tile<i32> -> tile<128x128xf8E4M3FN>, token
    %bt, %t2 = load_view_tko weak %pb[%lo, %y] : partition_view<tile=(128x128), padding_value = zero, tensor_view<128x256xf8E4M3FN, strides=[1,128]>>, tile<i32> -> tile<128x128xf8E4M3FN>, token
    %d = mmaf %at, %bt, %zero : tile<128x128xf8E4M3FN>, tile<128x128xf8E4M3FN>, tile<128x128xf32>
    %t3 = store_view_tko weak %d, %pc[%lo, %y] : tile<128x128xf32>, partition_view<tile=(128x128), tensor_view<128x256xf32, strides=[256,1]>>, tile<i32> -> token
    return
  }
}
