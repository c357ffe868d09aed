// A case of the lab 5 grader: divi rounding down (floor) on i8, widened to i32 for the store.
//   .venv/bin/nanotile labs/05-lowering/divi_floor_i8.mlir --gpu-name=sm_90 --dump-after=simt-dce
cuda_tile.module @lab5 {
  entry @k(%a: tile<ptr<i8>>, %b: tile<ptr<i8>>, %out: tile<ptr<i32>>) {
    %i = iota : tile<128xi32>
    %a1 = reshape %a : tile<ptr<i8>> -> tile<1xptr<i8>>
    %an = broadcast %a1 : tile<1xptr<i8>> -> tile<128xptr<i8>>
    %ap = offset %an, %i : tile<128xptr<i8>>, tile<128xi32> -> tile<128xptr<i8>>
    %x, %at = load_ptr_tko weak %ap : tile<128xptr<i8>> -> tile<128xi8>, token
    %b1 = reshape %b : tile<ptr<i8>> -> tile<1xptr<i8>>
    %bn = broadcast %b1 : tile<1xptr<i8>> -> tile<128xptr<i8>>
    %bp = offset %bn, %i : tile<128xptr<i8>>, tile<128xi32> -> tile<128xptr<i8>>
    %y, %bt = load_ptr_tko weak %bp : tile<128xptr<i8>> -> tile<128xi8>, token
    %r = divi %x, %y signed rounding<negative_inf> : tile<128xi8>
    %w = exti %r signed : tile<128xi8> -> tile<128xi32>
    %out1 = reshape %out : tile<ptr<i32>> -> tile<1xptr<i32>>
    %outn = broadcast %out1 : tile<1xptr<i32>> -> tile<128xptr<i32>>
    %outp = offset %outn, %i : tile<128xptr<i32>>, tile<128xi32> -> tile<128xptr<i32>>
    %st = store_ptr_tko weak %outp, %w : tile<128xptr<i32>>, tile<128xi32> -> token
    return
  }
}
