// softmax_rows: exported from examples/softmax_rows.py by cuTile Python (examples/export.py, bytecode 13.4), printed by nanotile.
// Run it: python examples/check.py softmax_rows
entry @softmax_rows(%arg0: tile<ptr<f32>>, %arg1: tile<i32>, %arg2: tile<i32>, %arg3: tile<i32>, %arg4: tile<i32>, %arg5: tile<ptr<f32>>, %arg6: tile<i32>, %arg7: tile<i32>, %arg8: tile<i32>, %arg9: tile<i32>) optimization_hints=<default = {}> {
  %0 = make_token : token
  %1 = assume div_by<16>, %arg0 : tile<ptr<f32>>
  %2 = assume div_by<16>, %arg5 : tile<ptr<f32>>
  %3 = constant <i32: 1> : tile<i32>
  %4 = constant <i32: 1> : tile<i32>
  %5 = assume bounded<0, ?>, %arg1 : tile<i32>
  %6 = assume bounded<0, ?>, %arg2 : tile<i32>
  %7 = assume bounded<0, ?>, %arg3 : tile<i32>
  %8 = make_tensor_view %1, shape = [%5, %6], strides = [%7, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
  %9 = assume bounded<0, ?>, %arg6 : tile<i32>
  %10 = assume bounded<0, ?>, %arg7 : tile<i32>
  %11 = assume bounded<0, ?>, %arg8 : tile<i32>
  %12 = make_tensor_view %2, shape = [%9, %10], strides = [%11, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
  %13, %14, %15 = get_tile_block_id : tile<i32>
  %16 = constant <i32: 0> : tile<i32>
  %17 = make_partition_view %8 : partition_view<tile=(1x128), padding_value = neg_inf, tensor_view<?x?xf32, strides=[?,1]>>
  %18, %19 = load_view_tko weak %17[%13, %16] token = %0 : partition_view<tile=(1x128), padding_value = neg_inf, tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<1x128xf32>, token
  %20 = reduce %18 dim=1 identities=[0xFF800000 : f32] : tile<1x128xf32> -> tile<1xf32> 
  (%arg10: tile<f32>, %arg11: tile<f32>) {
    %32 = maxf %arg10, %arg11 : tile<f32>
    yield %32 : tile<f32>
  }
  %21 = reshape %20 : tile<1xf32> -> tile<1x1xf32>
  %22 = broadcast %21 : tile<1x1xf32> -> tile<1x128xf32>
  %23 = subf %18, %22  : tile<1x128xf32>
  %24 = exp %23  : tile<1x128xf32>
  %25 = constant <i32: 0> : tile<i32>
  %26 = reduce %24 dim=1 identities=[0.000000e+00 : f32] : tile<1x128xf32> -> tile<1xf32> 
  (%arg10: tile<f32>, %arg11: tile<f32>) {
    %32 = addf %arg10, %arg11  : tile<f32>
    yield %32 : tile<f32>
  }
  %27 = reshape %26 : tile<1xf32> -> tile<1x1xf32>
  %28 = broadcast %27 : tile<1x1xf32> -> tile<1x128xf32>
  %29 = divf %24, %28  : tile<1x128xf32>
  %30 = make_partition_view %12 : partition_view<tile=(1x128), tensor_view<?x?xf32, strides=[?,1]>>
  %31 = store_view_tko weak %29, %30[%13, %25] token = %0 : tile<1x128xf32>, partition_view<tile=(1x128), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
  return
}
