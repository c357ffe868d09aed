// flags: the same identities under other rounding modes and flush_to_zero
cuda_tile.module @lab3 {
  entry @flags(%px: tile<ptr<f32>>, %py: tile<ptr<f32>>, %pout: tile<ptr<f32>>) {
    %i = iota : tile<128xi32>
    %bx = reshape %px : tile<ptr<f32>> -> tile<1xptr<f32>>
    %ax = broadcast %bx : tile<1xptr<f32>> -> tile<128xptr<f32>>
    %ptrx = offset %ax, %i : tile<128xptr<f32>>, tile<128xi32> -> tile<128xptr<f32>>
    %x, %tx = load_ptr_tko weak %ptrx : tile<128xptr<f32>> -> tile<128xf32>, token
    %by = reshape %py : tile<ptr<f32>> -> tile<1xptr<f32>>
    %ay = broadcast %by : tile<1xptr<f32>> -> tile<128xptr<f32>>
    %ptry = offset %ay, %i : tile<128xptr<f32>>, tile<128xi32> -> tile<128xptr<f32>>
    %y, %ty = load_ptr_tko weak %ptry : tile<128xptr<f32>> -> tile<128xf32>, token
    // x * 1.0 rounding toward zero is x; with flush_to_zero a subnormal x becomes 0
    %one = constant <f32: 1.0> : tile<128xf32>
    %zero = constant <f32: 0.0> : tile<128xf32>
    %a = mulf %x, %one rounding<zero> : tile<128xf32>
    %b = mulf %y, %one flush_to_zero : tile<128xf32>
    %c = subf %b, %zero rounding<negative_inf> : tile<128xf32>
    %r = subf %a, %c rounding<positive_inf> : tile<128xf32>
    %bo = reshape %pout : tile<ptr<f32>> -> tile<1xptr<f32>>
    %ao = broadcast %bo : tile<1xptr<f32>> -> tile<128xptr<f32>>
    %ptro = offset %ao, %i : tile<128xptr<f32>>, tile<128xi32> -> tile<128xptr<f32>>
    %tr = store_ptr_tko weak %ptro, %r : tile<128xptr<f32>>, tile<128xf32> -> token
    return
  }
}
