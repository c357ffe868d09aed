// fast_math (compiled with eqsat{fast-math=true}): out = (x*y + x*x) + (y - y), which fast-math lets become x * (y + x)
cuda_tile.module @lab3 {
  entry @fast_math(%px: tile<ptr<f32>>, %py: tile<ptr<f32>>, %pout: tile<ptr<f32>>) {
    %i = iota : tile<128xi32>
    %bx = reshape %px : tile<ptr<f32>> -> tile<1xptr<f32>>
    %ax = broadcast %bx : tile<1xptr<f32>> -> tile<128xptr<f32>>
    %ptrx = offset %ax, %i : tile<128xptr<f32>>, tile<128xi32> -> tile<128xptr<f32>>
    %x, %tx = load_ptr_tko weak %ptrx : tile<128xptr<f32>> -> tile<128xf32>, token
    %by = reshape %py : tile<ptr<f32>> -> tile<1xptr<f32>>
    %ay = broadcast %by : tile<1xptr<f32>> -> tile<128xptr<f32>>
    %ptry = offset %ay, %i : tile<128xptr<f32>>, tile<128xi32> -> tile<128xptr<f32>>
    %y, %ty = load_ptr_tko weak %ptry : tile<128xptr<f32>> -> tile<128xf32>, token
    %xy = mulf %x, %y : tile<128xf32>
    %xx = mulf %x, %x : tile<128xf32>
    %s = addf %xy, %xx : tile<128xf32>
    %d = subf %y, %y : tile<128xf32>
    %r = addf %s, %d : tile<128xf32>
    %bo = reshape %pout : tile<ptr<f32>> -> tile<1xptr<f32>>
    %ao = broadcast %bo : tile<1xptr<f32>> -> tile<128xptr<f32>>
    %ptro = offset %ao, %i : tile<128xptr<f32>>, tile<128xi32> -> tile<128xptr<f32>>
    %tr = store_ptr_tko weak %ptro, %r : tile<128xptr<f32>>, tile<128xf32> -> token
    return
  }
}
