// rms_norm: exported from examples/rms_norm.py by cuTile Python (examples/export.py, bytecode 13.4), printed by nanotile.
// Run it: python examples/check.py rms_norm
entry @rms_norm(%arg0: tile<ptr<f32>>, %arg1: tile<i32>, %arg2: tile<i32>, %arg3: tile<i32>, %arg4: tile<i32>, %arg5: tile<ptr<f32>>, %arg6: tile<i32>, %arg7: tile<i32>, %arg8: tile<ptr<f32>>, %arg9: tile<i32>, %arg10: tile<i32>, %arg11: tile<i32>, %arg12: tile<i32>, %arg13: tile<f32>) optimization_hints=<default = {}> {
  %0 = make_token : token
  %1 = assume div_by<16>, %arg0 : tile<ptr<f32>>
  %2 = assume div_by<16>, %arg5 : tile<ptr<f32>>
  %3 = assume div_by<16>, %arg8 : tile<ptr<f32>>
  %4 = constant <i32: 1> : tile<i32>
  %5 = constant <i32: 1> : tile<i32>
  %6 = constant <i32: 1> : tile<i32>
  %7 = assume bounded<0, ?>, %arg1 : tile<i32>
  %8 = assume bounded<0, ?>, %arg2 : tile<i32>
  %9 = assume bounded<0, ?>, %arg3 : tile<i32>
  %10 = make_tensor_view %1, shape = [%7, %8], strides = [%9, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
  %11 = assume bounded<0, ?>, %arg6 : tile<i32>
  %12 = make_tensor_view %2, shape = [%11], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
  %13 = assume bounded<0, ?>, %arg9 : tile<i32>
  %14 = assume bounded<0, ?>, %arg10 : tile<i32>
  %15 = assume bounded<0, ?>, %arg11 : tile<i32>
  %16 = make_tensor_view %3, shape = [%13, %14], strides = [%15, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
  %17, %18, %19 = get_tile_block_id : tile<i32>
  %20 = constant <i32: 0> : tile<i32>
  %21 = make_partition_view %10 : partition_view<tile=(1x256), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>
  %22, %23 = load_view_tko weak %21[%17, %20] token = %0 : partition_view<tile=(1x256), padding_value = zero, tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<1x256xf32>, token
  %24 = constant <i32: 0> : tile<i32>
  %25 = make_partition_view %12 : partition_view<tile=(256), padding_value = zero, tensor_view<?xf32, strides=[1]>>
  %26, %27 = load_view_tko weak %25[%24] token = %0 : partition_view<tile=(256), padding_value = zero, tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<256xf32>, token
  %28 = mulf %22, %22  : tile<1x256xf32>
  %29 = reduce %28 dim=1 identities=[0.000000e+00 : f32] : tile<1x256xf32> -> tile<1xf32> 
  (%arg14: tile<f32>, %arg15: tile<f32>) {
    %44 = addf %arg14, %arg15  : tile<f32>
    yield %44 : tile<f32>
  }
  %30 = reshape %29 : tile<1xf32> -> tile<1x1xf32>
  %31 = itof %8 signed  : tile<i32> -> tile<f32>
  %32 = reshape %31 : tile<f32> -> tile<1x1xf32>
  %33 = divf %30, %32  : tile<1x1xf32>
  %34 = reshape %arg13 : tile<f32> -> tile<1x1xf32>
  %35 = addf %33, %34  : tile<1x1xf32>
  %36 = rsqrt %35 : tile<1x1xf32>
  %37 = constant <i32: 0> : tile<i32>
  %38 = broadcast %36 : tile<1x1xf32> -> tile<1x256xf32>
  %39 = mulf %22, %38  : tile<1x256xf32>
  %40 = reshape %26 : tile<256xf32> -> tile<1x256xf32>
  %41 = mulf %39, %40  : tile<1x256xf32>
  %42 = make_partition_view %16 : partition_view<tile=(1x256), tensor_view<?x?xf32, strides=[?,1]>>
  %43 = store_view_tko weak %41, %42[%17, %37] token = %0 : tile<1x256xf32>, partition_view<tile=(1x256), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
  return
}
