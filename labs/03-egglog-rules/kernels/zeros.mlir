// zeros: out = (x - 0.0) + (y + 0.0) + x * 0.0: only x - 0.0 is x for every x
cuda_tile.module @lab3 {
  entry @zeros(%px: tile<ptr<f32>>, %py: tile<ptr<f32>>, %pout: tile<ptr<f32>>) {
    %i = iota : tile<128xi32>
    %bx = reshape %px : tile<ptr<f32>> -> tile<1xptr<f32>>
    %ax = broadcast %bx : tile<1xptr<f32>> -> tile<128xptr<f32>>
    %ptrx = offset %ax, %i : tile<128xptr<f32>>, tile<128xi32> -> tile<128xptr<f32>>
    %x, %tx = load_ptr_tko weak %ptrx : tile<128xptr<f32>> -> tile<128xf32>, token
    %by = reshape %py : tile<ptr<f32>> -> tile<1xptr<f32>>
    %ay = broadcast %by : tile<1xptr<f32>> -> tile<128xptr<f32>>
    %ptry = offset %ay, %i : tile<128xptr<f32>>, tile<128xi32> -> tile<128xptr<f32>>
    %y, %ty = load_ptr_tko weak %ptry : tile<128xptr<f32>> -> tile<128xf32>, token
    %zero = constant <f32: 0.0> : tile<128xf32>
    %a = subf %x, %zero : tile<128xf32>
    %b = addf %y, %zero : tile<128xf32>
    %c = addf %a, %b : tile<128xf32>
    %d = mulf %x, %zero : tile<128xf32>
    %r = addf %c, %d : tile<128xf32>
    %bo = reshape %pout : tile<ptr<f32>> -> tile<1xptr<f32>>
    %ao = broadcast %bo : tile<1xptr<f32>> -> tile<128xptr<f32>>
    %ptro = offset %ao, %i : tile<128xptr<f32>>, tile<128xi32> -> tile<128xptr<f32>>
    %tr = store_ptr_tko weak %ptro, %r : tile<128xptr<f32>>, tile<128xf32> -> token
    return
  }
}
