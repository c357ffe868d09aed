// matmul_f16: exported from examples/matmul_f16.py by cuTile Python (examples/export.py, bytecode 13.4), printed by nanotile.
// Run it: python examples/check.py matmul_f16
entry @matmul_f16(%arg0: tile<ptr<f16>>, %arg1: tile<i32>, %arg2: tile<i32>, %arg3: tile<i32>, %arg4: tile<i32>, %arg5: tile<ptr<f16>>, %arg6: tile<i32>, %arg7: tile<i32>, %arg8: tile<i32>, %arg9: tile<i32>, %arg10: tile<ptr<f16>>, %arg11: tile<i32>, %arg12: tile<i32>, %arg13: tile<i32>, %arg14: tile<i32>) optimization_hints=<default = {}> {
  %0 = make_token : token
  %1 = assume div_by<16>, %arg0 : tile<ptr<f16>>
  %2 = assume div_by<16>, %arg5 : tile<ptr<f16>>
  %3 = assume div_by<16>, %arg10 : tile<ptr<f16>>
  %4 = constant <i32: 1> : tile<i32>
  %5 = constant <i32: 1> : tile<i32>
  %6 = constant <i32: 1> : tile<i32>
  %7 = assume bounded<0, ?>, %arg1 : tile<i32>
  %8 = assume bounded<0, ?>, %arg2 : tile<i32>
  %9 = assume bounded<0, ?>, %arg3 : tile<i32>
  %10 = make_tensor_view %1, shape = [%7, %8], strides = [%9, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
  %11 = assume bounded<0, ?>, %arg6 : tile<i32>
  %12 = assume bounded<0, ?>, %arg7 : tile<i32>
  %13 = assume bounded<0, ?>, %arg8 : tile<i32>
  %14 = make_tensor_view %2, shape = [%11, %12], strides = [%13, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
  %15 = assume bounded<0, ?>, %arg11 : tile<i32>
  %16 = assume bounded<0, ?>, %arg12 : tile<i32>
  %17 = assume bounded<0, ?>, %arg13 : tile<i32>
  %18 = make_tensor_view %3, shape = [%15, %16], strides = [%17, 1] : tile<i32> -> tensor_view<?x?xf16, strides=[?,1]>
  %19, %20, %21 = get_tile_block_id : tile<i32>
  %22, %23, %24 = get_tile_block_id : tile<i32>
  %25 = constant <f32: 0.000000e+00> : tile<32x32xf32>
  %26 = make_partition_view %10 : partition_view<tile=(32x16), tensor_view<?x?xf16, strides=[?,1]>>
  %27:2 = get_index_space_shape %26 : partition_view<tile=(32x16), tensor_view<?x?xf16, strides=[?,1]>> -> tile<i32>
  %28 = constant <i32: 0> : tile<i32>
  %29 = constant <i32: 1> : tile<i32>
  %30 = make_partition_view %10 : partition_view<tile=(32x16), tensor_view<?x?xf16, strides=[?,1]>>
  %31 = make_partition_view %14 : partition_view<tile=(16x32), tensor_view<?x?xf16, strides=[?,1]>>
  %32 = for %arg15 in (%28 to %27#1, step %29) : tile<i32> iter_values(%arg16 = %25) -> (tile<32x32xf32>) {
    %36, %37 = load_view_tko weak %30[%19, %arg15] token = %0 : partition_view<tile=(32x16), tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> tile<32x16xf16>, token
    %38, %39 = load_view_tko weak %31[%arg15, %23] token = %0 : partition_view<tile=(16x32), tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> tile<16x32xf16>, token
    %40 = mmaf %36, %38, %arg16 : tile<32x16xf16>, tile<16x32xf16>, tile<32x32xf32>
    continue %40 : tile<32x32xf32>
  }
  %33 = ftof %32  : tile<32x32xf32> -> tile<32x32xf16>
  %34 = make_partition_view %18 : partition_view<tile=(32x32), tensor_view<?x?xf16, strides=[?,1]>>
  %35 = store_view_tko weak %33, %34[%19, %23] token = %0 : tile<32x32xf16>, partition_view<tile=(32x32), tensor_view<?x?xf16, strides=[?,1]>>, tile<i32> -> token
  return
}
