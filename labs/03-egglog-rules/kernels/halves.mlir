// halves: out = -(-x) * 1.0 - (-(y / 1.0)) in f16, which is x + y: rules must not name a type
cuda_tile.module @lab3 {
  entry @halves(%px: tile<ptr<f16>>, %py: tile<ptr<f16>>, %pout: tile<ptr<f16>>) {
    %i = iota : tile<128xi32>
    %bx = reshape %px : tile<ptr<f16>> -> tile<1xptr<f16>>
    %ax = broadcast %bx : tile<1xptr<f16>> -> tile<128xptr<f16>>
    %ptrx = offset %ax, %i : tile<128xptr<f16>>, tile<128xi32> -> tile<128xptr<f16>>
    %x, %tx = load_ptr_tko weak %ptrx : tile<128xptr<f16>> -> tile<128xf16>, token
    %by = reshape %py : tile<ptr<f16>> -> tile<1xptr<f16>>
    %ay = broadcast %by : tile<1xptr<f16>> -> tile<128xptr<f16>>
    %ptry = offset %ay, %i : tile<128xptr<f16>>, tile<128xi32> -> tile<128xptr<f16>>
    %y, %ty = load_ptr_tko weak %ptry : tile<128xptr<f16>> -> tile<128xf16>, token
    %one = constant <f16: 1.0> : tile<128xf16>
    %nx = negf %x : tile<128xf16>
    %nnx = negf %nx : tile<128xf16>
    %a = mulf %nnx, %one : tile<128xf16>
    %b = divf %y, %one : tile<128xf16>
    %nb = negf %b : tile<128xf16>
    %r = subf %a, %nb : tile<128xf16>
    %bo = reshape %pout : tile<ptr<f16>> -> tile<1xptr<f16>>
    %ao = broadcast %bo : tile<1xptr<f16>> -> tile<128xptr<f16>>
    %ptro = offset %ao, %i : tile<128xptr<f16>>, tile<128xi32> -> tile<128xptr<f16>>
    %tr = store_ptr_tko weak %ptro, %r : tile<128xptr<f16>>, tile<128xf16> -> token
    return
  }
}
