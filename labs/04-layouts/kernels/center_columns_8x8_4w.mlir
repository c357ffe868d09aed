// center_columns_8x8_4w: out = in minus the sum of its column; an 8x8 f32 tile over 4 warps.
// The sums (a reduce) are broadcast back to the tile's layout: a convert_layout.
cuda_tile.module @lab4 {
  entry @center_columns_8x8_4w(%pin: tile<ptr<f32>>, %pout: tile<ptr<f32>>) {
    %rows_src = iota : tile<8xi32>
    %r_src = reshape %rows_src : tile<8xi32> -> tile<8x1xi32>
    %n_src = constant <i32: 8> : tile<8x1xi32>
    %rn_src = muli %r_src, %n_src : tile<8x1xi32>
    %rb_src = broadcast %rn_src : tile<8x1xi32> -> tile<8x8xi32>
    %cols_src = iota : tile<8xi32>
    %c_src = reshape %cols_src : tile<8xi32> -> tile<1x8xi32>
    %cb_src = broadcast %c_src : tile<1x8xi32> -> tile<8x8xi32>
    %src = addi %rb_src, %cb_src : tile<8x8xi32>
    %b_pi = reshape %pin : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %bb_pi = broadcast %b_pi : tile<1x1xptr<f32>> -> tile<8x8xptr<f32>>
    %pi = offset %bb_pi, %src : tile<8x8xptr<f32>>, tile<8x8xi32> -> tile<8x8xptr<f32>>
    %x, %t1 = load_ptr_tko weak %pi : tile<8x8xptr<f32>> -> tile<8x8xf32>, token
    %s = reduce %x dim=0 identities=[0.000000e+00 : f32] : tile<8x8xf32> -> tile<8xf32>
    (%a: tile<f32>, %b: tile<f32>) {
      %c = addf %a, %b : tile<f32>
      yield %c : tile<f32>
    }
    %sr = reshape %s : tile<8xf32> -> tile<1x8xf32>
    %sb = broadcast %sr : tile<1x8xf32> -> tile<8x8xf32>
    %y = subf %x, %sb : tile<8x8xf32>
    %b_po = reshape %pout : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %bb_po = broadcast %b_po : tile<1x1xptr<f32>> -> tile<8x8xptr<f32>>
    %po = offset %bb_po, %src : tile<8x8xptr<f32>>, tile<8x8xi32> -> tile<8x8xptr<f32>>
    %t2 = store_ptr_tko weak %po, %y : tile<8x8xptr<f32>>, tile<8x8xf32> -> token
    return
  }
}
