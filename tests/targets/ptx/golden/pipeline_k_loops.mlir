// RUN: nanotile-passes %s -p 'assume-to-facts,select-tma-loads{gpu=sm_90},lower-views,resolve-tokens,assign-layouts{gpu=sm_90 mma=wgmma},lower-convert-layout,allocate-shared,insert-barriers,distribute,lower-wgmma,pipeline-k-loops{stages=2}' | filecheck %s
// pipeline-k-loops: the K loop of a 64x64 f16 matmul whose A and B arrive by TMA (its
// trip count %k a kernel argument) gets a 2-stage ring. Before the loop, a barrier and
// the copies of iteration 0 into stage 0, guarded by the loop running at all (thread 0
// announces both copies' 8192 bytes once); in the loop, which now carries the stage and
// its parity, the copies of iteration i+1 into the other stage, if it exists; then the
// wait for this stage's parity, the descriptors moved by stage * 8192 bytes (512
// 16-byte units), the MMA and its wait; the stage wraps and the parity flips. Shared
// memory grows to two stages of A and B.

// CHECK-LABEL: entry @ring(
// CHECK: barrier
// CHECK: %[[RUNS:.+]] = cmpi less_than %lo, %k, signed
// CHECK: tma_issue %[[FIRST:[0-9]+]], {{.+}} ring 0 stages 2 stride 8192 expect 8192
// CHECK-NEXT: tma_issue %[[FIRST]], {{.+}} ring 0 stages 2 stride 8192 expect 0
// CHECK: for %i in {{.+}} iter_values(%sum = %zero, %stage = %[[Z:[0-9]+]], %phase = %[[Z]])
// CHECK-NOT: tma_copy
// CHECK: %[[AHEAD:.+]] = addi %i,
// CHECK: %[[NEXT:.+]] = select
// CHECK: cmpi less_than %[[AHEAD]], %k, signed
// CHECK: tma_issue %[[NEXT]], {{.+}} expect 8192
// CHECK: tma_wait %stage, %phase ring 0 stages 2
// CHECK: %[[UNITS:.+]] = muli %stage,
// CHECK: %[[OFFSET:.+]] = exti %[[UNITS]] unsigned
// CHECK: %[[A:.+]] = wgmma_descriptor
// CHECK-NEXT: %[[MOVED:.+]] = addi %[[A]], %[[OFFSET]]
// CHECK: wgmma_mma_async %{{.+}}, %[[MOVED]],
// CHECK: wgmma_wait 0
// CHECK: xori %phase
// CHECK: continue
// CHECK: nanotile.shared_bytes = 16384
cuda_tile.module @tests {
  entry @ring(%a: tile<ptr<f16>>, %m: tile<i32>, %k: tile<i32>, %sa: tile<i32>,
              %b: tile<ptr<f16>>, %k2: tile<i32>, %n: tile<i32>, %sb: tile<i32>,
              %c: tile<ptr<f32>>) {
    %a16 = assume div_by<16>, %a : tile<ptr<f16>>
    %b16 = assume div_by<16>, %b : tile<ptr<f16>>
    %sa8 = assume div_by<8>, %sa : tile<i32>
    %sb8 = assume div_by<8>, %sb : tile<i32>
    %ta = make_tensor_view %a16, shape = [%m, %k], strides = [%sa8, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
    %tb = make_tensor_view %b16, shape = [%k2, %n], strides = [%sb8, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
    %tc = make_tensor_view %c, shape = [64, 64], strides = [64, 1] : tensor_view<64x64xf32, strides=[64,1]>
    %pa = make_partition_view %ta : partition_view<tile=(64x32), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>
    %pb = make_partition_view %tb : partition_view<tile=(32x64), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>
    %pc = make_partition_view %tc : partition_view<tile=(64x64), tensor_view<64x64xf32, strides=[64,1]>>
    %zero = constant <f32: 0.0> : tile<64x64xf32>
    %lo = constant <i32: 0> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %acc = for %i in (%lo to %k, step %one) : tile<i32> iter_values(%sum = %zero) -> (tile<64x64xf32>) {
      %xa, %t1 = load_view_tko weak %pa[%lo, %i] : partition_view<tile=(64x32), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> tile<64x32xf16>, token
      %xb, %t2 = load_view_tko weak %pb[%i, %lo] : partition_view<tile=(32x64), padding_value = zero, tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> tile<32x64xf16>, token
      %d = mmaf %xa, %xb, %sum : tile<64x32xf16>, tile<32x64xf16>, tile<64x64xf32>
      continue %d : tile<64x64xf32>
    }
    %t3 = store_view_tko weak %acc, %pc[%lo, %lo] : tile<64x64xf32>, partition_view<tile=(64x64), tensor_view<64x64xf32, strides=[64,1]>>, tile<i32> -> token
    return
  }
}
