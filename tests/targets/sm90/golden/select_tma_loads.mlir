// RUN: nanotile-passes %s -p 'assume-to-facts,select-tma-loads{gpu=sm_90 stage-operands=true}' | filecheck %s
// select-tma-loads{stage-operands=true} (sm_90's pipeline): an MMA operand whose copy
// cannot land in the layout its MMA reads is copied into a staging buffer instead
// (unswizzled: swizzle=0, boxes of up to 256 rows and columns), and read from there.
// @tf32 (cuTile's f32 matmul): A and B reach the mmaf through an ftof (f32 -> tf32,
// which rounds; the tensor cores would truncate), and wgmma reads B K-major; both are
// staged, and the ftofs move after the two copies, so the copies sit side by side.
// @batch (an f8 batched matmul): 3-D tiles of one matrix, reshaped. A, K-major, lands
// in wgmma's layout (the copy makes the reshaped tile: a 3-D map, a box of 1 along the
// batch); B, which wgmma reads K-major, is staged: copied whole.
// @kept: A is also stored (two uses) and keeps its load; B is staged.
// @hinted: cuTile's allow_tma=False (optimization hint allow_tma = false, by default)
// keeps A's load, as tileiras does; B's hint is for sm_100 only, and B is staged.

// CHECK-LABEL: entry @tf32(
// CHECK: %[[A:.+]] = tma_load %{{.+}}, %{{.+}} map "f32 base=a0 shape=[a1,a2] strides=[a3,1] box=[64,32] swizzle=0" : tile<i32>, tile<i32> -> tile<64x32xf32>
// CHECK-NEXT: %[[B:.+]] = tma_load %{{.+}}, %{{.+}} map "f32 base=a4 shape=[a5,a6] strides=[a7,1] box=[32,64] swizzle=0" : tile<i32>, tile<i32> -> tile<32x64xf32>
// CHECK-NEXT: %[[RA:.+]] = ftof %[[A]]
// CHECK-NEXT: %[[RB:.+]] = ftof %[[B]]
// CHECK-NEXT: mmaf %[[RA]], %[[RB]],
// CHECK-LABEL: entry @batch(
// CHECK: %[[A:.+]] = tma_load %{{.+}}, %{{.+}}, %{{.+}} map "f8E4M3FN base=a0 shape=[a1,a2,a3] strides=[a4,a5,1] box=[1,64,64] swizzle=64" : tile<i32>, tile<i32>, tile<i32> -> tile<64x64xf8E4M3FN>
// CHECK: tma_load %{{.+}}, %{{.+}}, %{{.+}} map "f8E4M3FN base=a6 shape=[a7,a8,a9] strides=[a10,a11,1] box=[1,64,64] swizzle=0" : tile<i32>, tile<i32>, tile<i32> -> tile<1x64x64xf8E4M3FN>
// CHECK: mmaf %[[A]], 
// CHECK-LABEL: entry @kept(
// CHECK: load_view_tko
// CHECK: tma_load %{{.+}}, %{{.+}} map "f32 base=a4
// CHECK-NOT: load_view_tko
// CHECK-LABEL: entry @hinted(
// CHECK: load_view_tko weak %pa[%lo, %lo] optimization_hints = <default = {allow_tma = false}>
// CHECK: tma_load %{{.+}}, %{{.+}} map "f32 base=a4
cuda_tile.module @tests {
  entry @tf32(%a: tile<ptr<f32>>, %m: tile<i32>, %k: tile<i32>, %sa: tile<i32>,
              %b: tile<ptr<f32>>, %k2: tile<i32>, %n: tile<i32>, %sb: tile<i32>,
              %c: tile<ptr<f32>>) {
    %a16 = assume div_by<16>, %a : tile<ptr<f32>>
    %b16 = assume div_by<16>, %b : tile<ptr<f32>>
    %sa4 = assume div_by<4>, %sa : tile<i32>
    %sb4 = assume div_by<4>, %sb : tile<i32>
    %ta = make_tensor_view %a16, shape = [%m, %k], strides = [%sa4, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %tb = make_tensor_view %b16, shape = [%k2, %n], strides = [%sb4, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %tc = make_tensor_view %c, shape = [64, 64], strides = [64, 1] : tensor_view<64x64xf32, strides=[64,1]>
    %pa = make_partition_view %ta : partition_view<tile=(64x32), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(32x64), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>
    %pc = make_partition_view %tc : partition_view<tile=(64x64), tensor_view<64x64xf32, strides=[64,1]>>
    %zero = constant <f32: 0.0> : tile<64x64xf32>
    %lo = constant <i32: 0> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %steps = constant <i32: 2> : tile<i32>
    %acc = for %i in (%lo to %steps, step %one) : tile<i32> iter_values(%sum = %zero) -> (tile<64x64xf32>) {
      %xa, %t1 = load_view_tko weak %pa[%lo, %i] : partition_view<tile=(64x32), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<64x32xf32>, token
      %ra = ftof %xa : tile<64x32xf32> -> tile<64x32xtf32>
      %xb, %t2 = load_view_tko weak %pb[%i, %lo] : partition_view<tile=(32x64), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<32x64xf32>, token
      %rb = ftof %xb : tile<32x64xf32> -> tile<32x64xtf32>
      %d = mmaf %ra, %rb, %sum : tile<64x32xtf32>, tile<32x64xtf32>, tile<64x64xf32>
      continue %d : tile<64x64xf32>
    }
    %t3 = store_view_tko weak %acc, %pc[%lo, %lo] : tile<64x64xf32>, partition_view<tile=(64x64), tensor_view<64x64xf32, strides=[64,1]>>, tile<i32> -> token
    return
  }
  entry @batch(%a: tile<ptr<f8E4M3FN>>, %g: tile<i32>, %m: tile<i32>, %k: tile<i32>, %sa0: tile<i32>, %sa1: tile<i32>,
               %b: tile<ptr<f8E4M3FN>>, %g2: tile<i32>, %k2: tile<i32>, %n: tile<i32>, %sb0: tile<i32>, %sb1: tile<i32>,
               %c: tile<ptr<f32>>) {
    %a16 = assume div_by<16>, %a : tile<ptr<f8E4M3FN>>
    %b16 = assume div_by<16>, %b : tile<ptr<f8E4M3FN>>
    %sa016 = assume div_by<16>, %sa0 : tile<i32>
    %sa116 = assume div_by<16>, %sa1 : tile<i32>
    %sb016 = assume div_by<16>, %sb0 : tile<i32>
    %sb116 = assume div_by<16>, %sb1 : tile<i32>
    %ta = make_tensor_view %a16, shape = [%g, %m, %k], strides = [%sa016, %sa116, 1] : tile<i32> -> tensor_view<?x?x?xf8E4M3FN, strides=[?,?,1]>
    %tb = make_tensor_view %b16, shape = [%g2, %k2, %n], strides = [%sb016, %sb116, 1] : tile<i32> -> tensor_view<?x?x?xf8E4M3FN, strides=[?,?,1]>
    %tc = make_tensor_view %c, shape = [64, 64], strides = [64, 1] : tensor_view<64x64xf32, strides=[64,1]>
    %pa = make_partition_view %ta : partition_view<tile=(1x64x64), padding_value = zero, tensor_view<?x?x?xf8E4M3FN, strides=[?,?,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(1x64x64), padding_value = zero, tensor_view<?x?x?xf8E4M3FN, strides=[?,?,1]>>
    %pc = make_partition_view %tc : partition_view<tile=(64x64), tensor_view<64x64xf32, strides=[64,1]>>
    %zero = constant <f32: 0.0> : tile<64x64xf32>
    %lo = constant <i32: 0> : tile<i32>
    %xa, %t1 = load_view_tko weak %pa[%lo, %lo, %lo] : partition_view<tile=(1x64x64), padding_value = zero, tensor_view<?x?x?xf8E4M3FN, strides=[?,?,1]>>, tile<i32> -> tile<1x64x64xf8E4M3FN>, token
    %ra = reshape %xa : tile<1x64x64xf8E4M3FN> -> tile<64x64xf8E4M3FN>
    %xb, %t2 = load_view_tko weak %pb[%lo, %lo, %lo] : partition_view<tile=(1x64x64), padding_value = zero, tensor_view<?x?x?xf8E4M3FN, strides=[?,?,1]>>, tile<i32> -> tile<1x64x64xf8E4M3FN>, token
    %rb = reshape %xb : tile<1x64x64xf8E4M3FN> -> tile<64x64xf8E4M3FN>
    %d = mmaf %ra, %rb, %zero : tile<64x64xf8E4M3FN>, tile<64x64xf8E4M3FN>, tile<64x64xf32>
    %t3 = store_view_tko weak %d, %pc[%lo, %lo] : tile<64x64xf32>, partition_view<tile=(64x64), tensor_view<64x64xf32, strides=[64,1]>>, tile<i32> -> token
    return
  }
  entry @kept(%a: tile<ptr<f32>>, %m: tile<i32>, %k: tile<i32>, %sa: tile<i32>,
              %b: tile<ptr<f32>>, %k2: tile<i32>, %n: tile<i32>, %sb: tile<i32>,
              %c: tile<ptr<f32>>) {
    %a16 = assume div_by<16>, %a : tile<ptr<f32>>
    %b16 = assume div_by<16>, %b : tile<ptr<f32>>
    %sa4 = assume div_by<4>, %sa : tile<i32>
    %sb4 = assume div_by<4>, %sb : tile<i32>
    %ta = make_tensor_view %a16, shape = [%m, %k], strides = [%sa4, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %tb = make_tensor_view %b16, shape = [%k2, %n], strides = [%sb4, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %tc = make_tensor_view %c, shape = [16, 16], strides = [16, 1] : tensor_view<16x16xf32, strides=[16,1]>
    %pa = make_partition_view %ta : partition_view<tile=(16x16), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(16x16), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>
    %pc = make_partition_view %tc : partition_view<tile=(16x16), tensor_view<16x16xf32, strides=[16,1]>>
    %zero = constant <f32: 0.0> : tile<16x16xf32>
    %lo = constant <i32: 0> : tile<i32>
    %xa, %t1 = load_view_tko weak %pa[%lo, %lo] : partition_view<tile=(16x16), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<16x16xf32>, token
    %xb, %t2 = load_view_tko weak %pb[%lo, %lo] : partition_view<tile=(16x16), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<16x16xf32>, token
    %d = mmaf %xa, %xb, %zero : tile<16x16xf32>, tile<16x16xf32>, tile<16x16xf32>
    %t3 = store_view_tko weak %d, %pc[%lo, %lo] : tile<16x16xf32>, partition_view<tile=(16x16), tensor_view<16x16xf32, strides=[16,1]>>, tile<i32> -> token
    %t4 = store_view_tko weak %xa, %pc[%lo, %lo] : tile<16x16xf32>, partition_view<tile=(16x16), tensor_view<16x16xf32, strides=[16,1]>>, tile<i32> -> token
    return
  }
  entry @hinted(%a: tile<ptr<f32>>, %m: tile<i32>, %k: tile<i32>, %sa: tile<i32>,
                %b: tile<ptr<f32>>, %k2: tile<i32>, %n: tile<i32>, %sb: tile<i32>,
                %c: tile<ptr<f32>>) {
    %a16 = assume div_by<16>, %a : tile<ptr<f32>>
    %b16 = assume div_by<16>, %b : tile<ptr<f32>>
    %sa4 = assume div_by<4>, %sa : tile<i32>
    %sb4 = assume div_by<4>, %sb : tile<i32>
    %ta = make_tensor_view %a16, shape = [%m, %k], strides = [%sa4, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %tb = make_tensor_view %b16, shape = [%k2, %n], strides = [%sb4, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %tc = make_tensor_view %c, shape = [16, 16], strides = [16, 1] : tensor_view<16x16xf32, strides=[16,1]>
    %pa = make_partition_view %ta : partition_view<tile=(16x16), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(16x16), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>
    %pc = make_partition_view %tc : partition_view<tile=(16x16), tensor_view<16x16xf32, strides=[16,1]>>
    %zero = constant <f32: 0.0> : tile<16x16xf32>
    %lo = constant <i32: 0> : tile<i32>
    %xa, %t1 = load_view_tko weak %pa[%lo, %lo] optimization_hints = <default = {allow_tma = false}> : partition_view<tile=(16x16), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<16x16xf32>, token
    %xb, %t2 = load_view_tko weak %pb[%lo, %lo] optimization_hints = <sm_100 = {allow_tma = false}> : partition_view<tile=(16x16), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<16x16xf32>, token
    %d = mmaf %xa, %xb, %zero : tile<16x16xf32>, tile<16x16xf32>, tile<16x16xf32>
    %t3 = store_view_tko weak %d, %pc[%lo, %lo] : tile<16x16xf32>, partition_view<tile=(16x16), tensor_view<16x16xf32, strides=[16,1]>>, tile<i32> -> token
    return
  }
}
