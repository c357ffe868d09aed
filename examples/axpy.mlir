// axpy: exported from examples/axpy.py by cuTile Python (examples/export.py, bytecode 13.4), printed by nanotile.
// Run it: python examples/check.py axpy
entry @axpy(%arg0: tile<ptr<f32>>, %arg1: tile<i32>, %arg2: tile<i32>, %arg3: tile<ptr<f32>>, %arg4: tile<i32>, %arg5: tile<i32>, %arg6: tile<ptr<f32>>, %arg7: tile<i32>, %arg8: tile<i32>, %arg9: tile<f32>) optimization_hints=<default = {}> {
  %0 = make_token : token
  %1 = assume div_by<16>, %arg0 : tile<ptr<f32>>
  %2 = assume div_by<16>, %arg3 : tile<ptr<f32>>
  %3 = assume div_by<16>, %arg6 : tile<ptr<f32>>
  %4 = constant <i32: 1> : tile<i32>
  %5 = constant <i32: 1> : tile<i32>
  %6 = constant <i32: 1> : tile<i32>
  %7 = assume bounded<0, ?>, %arg1 : tile<i32>
  %8 = make_tensor_view %1, shape = [%7], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
  %9 = assume bounded<0, ?>, %arg4 : tile<i32>
  %10 = make_tensor_view %2, shape = [%9], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
  %11 = assume bounded<0, ?>, %arg7 : tile<i32>
  %12 = make_tensor_view %3, shape = [%11], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
  %13, %14, %15 = get_tile_block_id : tile<i32>
  %16 = make_partition_view %8 : partition_view<tile=(128), padding_value = zero, tensor_view<?xf32, strides=[1]>>
  %17, %18 = load_view_tko weak %16[%13] token = %0 : partition_view<tile=(128), padding_value = zero, tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<128xf32>, token
  %19 = make_partition_view %10 : partition_view<tile=(128), padding_value = zero, tensor_view<?xf32, strides=[1]>>
  %20, %21 = load_view_tko weak %19[%13] token = %0 : partition_view<tile=(128), padding_value = zero, tensor_view<?xf32, strides=[1]>>, tile<i32> -> tile<128xf32>, token
  %22 = reshape %arg9 : tile<f32> -> tile<1xf32>
  %23 = broadcast %22 : tile<1xf32> -> tile<128xf32>
  %24 = fma %23, %17, %20  : tile<128xf32>
  %25 = make_partition_view %12 : partition_view<tile=(128), tensor_view<?xf32, strides=[1]>>
  %26 = store_view_tko weak %24, %25[%13] token = %0 : tile<128xf32>, partition_view<tile=(128), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
  return
}
