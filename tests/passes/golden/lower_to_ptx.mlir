// RUN: nanotile-passes %s -p lower-views,resolve-tokens,assign-layouts{gpu=sm_90},allocate-shared,lower-to-ptx{gpu=sm_90} | filecheck %s
// lower-to-ptx turns the tile program into a PTX program for the target of its option:
// one .entry per kernel, its parameters in order (pointers as u64, scalars by type), each
// tile spread over the CTA's 128 threads, loads and stores through global memory. The
// module is then in ptx-sm90 and prints as PTX.

// CHECK: .version 8.0
// CHECK: .target sm_90a
// CHECK-LABEL: .visible .entry scale_add(
// CHECK: .param .u64 scale_add_param_0,
// CHECK: .param .f32 scale_add_param_1,
// CHECK: .param .u64 scale_add_param_2
// CHECK: .reqntid 128
// CHECK: mov.u32 %r{{[0-9]+}}, %tid.x;
// CHECK: ld.global{{.*}}.f32
// CHECK: mul{{.*}}.f32
// CHECK: add{{.*}}.f32
// CHECK: st.global{{.*}}
// CHECK: ret;
// CHECK-NOT: cuda_tile
cuda_tile.module @tests {
  entry @scale_add(%x: tile<ptr<f32>>, %a: tile<f32>, %y: tile<ptr<f32>>) {
    %n = constant <i32: 256> : tile<i32>
    %tx = make_tensor_view %x, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %px = make_partition_view %tx : partition_view<tile=(256), tensor_view<?xf32, strides=[1]>>
    %ty = make_tensor_view %y, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %py = make_partition_view %ty : partition_view<tile=(256), tensor_view<?xf32, strides=[1]>>
    %c0 = constant <i32: 0> : tile<i32>
    %vx, %t0 = load_view_tko weak %px[%c0] : partition_view<tile=(256), tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<256xf32>, token
    %vy, %t1 = load_view_tko weak %py[%c0] : partition_view<tile=(256), tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<256xf32>, token
    %a1 = reshape %a : tile<f32> -> tile<1xf32>
    %as = broadcast %a1 : tile<1xf32> -> tile<256xf32>
    %m = mulf %vx, %as rounding<nearest_even> : tile<256xf32>
    %s = addf %m, %vy rounding<nearest_even> : tile<256xf32>
    %t2 = store_view_tko weak %s, %py[%c0] token = %t1 : tile<256xf32>, partition_view<tile=(256), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
    return
  }
}
