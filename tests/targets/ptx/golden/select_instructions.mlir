// RUN: nanotile-passes %s -p assume-to-facts,lower-views,resolve-tokens,assign-layouts{gpu=sm_90},vectorize-memory,lower-reductions,lower-convert-layout,allocate-shared,insert-barriers,distribute,select-instructions{gpu=sm_90} | filecheck %s
// select-instructions writes PTX for a simt kernel: the thread's part of each address
// from %tid.x once at the entry; a vector load (nanotile.vector = 4) as one predicated
// ld.global.v4.f32 (the mask of its first element: the bound is a multiple of 16); the
// reduce's register fold as add.rn.f32, its lane butterfly as shfl.sync.bfly with masks
// 1..16, the warps' partials through shared memory (st.shared, bar.sync, one
// ld.shared.v4 of the four partials); the one-element store from its owner thread only.

// CHECK: .visible .entry sum_rows(
// CHECK: .shared .align 16 .b8 __nt_smem[16];
// CHECK: mov.u32 %r[[TID:[0-9]+]], %tid.x;
// CHECK: @%p{{[0-9]+}} ld.global.v4.f32 {%f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}, %f{{[0-9]+}}}, [%rd{{[0-9]+}}];
// CHECK: add.rn.f32
// CHECK: shfl.sync.bfly.b32 %f{{[0-9]+}}, %f{{[0-9]+}}, 1, 31, 0xffffffff;
// CHECK: shfl.sync.bfly.b32 %f{{[0-9]+}}, %f{{[0-9]+}}, 2, 31, 0xffffffff;
// CHECK: shfl.sync.bfly.b32 %f{{[0-9]+}}, %f{{[0-9]+}}, 4, 31, 0xffffffff;
// CHECK: shfl.sync.bfly.b32 %f{{[0-9]+}}, %f{{[0-9]+}}, 8, 31, 0xffffffff;
// CHECK: shfl.sync.bfly.b32 %f{{[0-9]+}}, %f{{[0-9]+}}, 16, 31, 0xffffffff;
// CHECK: bar.sync 0;
// CHECK-NEXT: st.shared.f32
// CHECK-NEXT: bar.sync 0;
// CHECK-NEXT: ld.shared.v4.f32
// CHECK: @%p{{[0-9]+}} st.global.f32
// CHECK-NEXT: ret;

cuda_tile.module @tests {
  entry @sum_rows(%x: tile<ptr<f32>>, %y: tile<ptr<f32>>, %n: tile<i32>) {
    %ax = assume div_by<16>, %x : tile<ptr<f32>>
    %an = assume div_by<16>, %n : tile<i32>
    %tx = make_tensor_view %ax, shape = [%an], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %px = make_partition_view %tx : partition_view<tile=(512), tensor_view<?xf32, strides=[1]>>
    %b, %bb, %bbb = get_tile_block_id : tile<i32>
    %v, %t = load_view_tko weak %px[%b] : partition_view<tile=(512), tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<512xf32>, token
    %s = reduce %v dim=0 identities=[0.000000e+00 : f32] : tile<512xf32> -> tile<f32>
    (%e: tile<f32>, %acc: tile<f32>) {
      %a = addf %e, %acc : tile<f32>
      yield %a : tile<f32>
    }
    %py = offset %y, %b : tile<ptr<f32>>, tile<i32> -> tile<ptr<f32>>
    %w = store_ptr_tko weak %py, %s : tile<ptr<f32>>, tile<f32> -> token
    return
  }
}
