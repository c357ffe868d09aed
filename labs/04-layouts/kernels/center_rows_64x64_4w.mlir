// center_rows_64x64_4w: out = in minus the sum of its row; a 64x64 f32 tile over 4 warps.
// The sums (a reduce) are broadcast back to the tile's layout: a convert_layout.
cuda_tile.module @lab4 {
  entry @center_rows_64x64_4w(%pin: tile<ptr<f32>>, %pout: tile<ptr<f32>>) {
    %rows_src = iota : tile<64xi32>
    %r_src = reshape %rows_src : tile<64xi32> -> tile<64x1xi32>
    %n_src = constant <i32: 64> : tile<64x1xi32>
    %rn_src = muli %r_src, %n_src : tile<64x1xi32>
    %rb_src = broadcast %rn_src : tile<64x1xi32> -> tile<64x64xi32>
    %cols_src = iota : tile<64xi32>
    %c_src = reshape %cols_src : tile<64xi32> -> tile<1x64xi32>
    %cb_src = broadcast %c_src : tile<1x64xi32> -> tile<64x64xi32>
    %src = addi %rb_src, %cb_src : tile<64x64xi32>
    %b_pi = reshape %pin : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %bb_pi = broadcast %b_pi : tile<1x1xptr<f32>> -> tile<64x64xptr<f32>>
    %pi = offset %bb_pi, %src : tile<64x64xptr<f32>>, tile<64x64xi32> -> tile<64x64xptr<f32>>
    %x, %t1 = load_ptr_tko weak %pi : tile<64x64xptr<f32>> -> tile<64x64xf32>, token
    %s = reduce %x dim=1 identities=[0.000000e+00 : f32] : tile<64x64xf32> -> tile<64xf32>
    (%a: tile<f32>, %b: tile<f32>) {
      %c = addf %a, %b : tile<f32>
      yield %c : tile<f32>
    }
    %sr = reshape %s : tile<64xf32> -> tile<64x1xf32>
    %sb = broadcast %sr : tile<64x1xf32> -> tile<64x64xf32>
    %y = subf %x, %sb : tile<64x64xf32>
    %b_po = reshape %pout : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %bb_po = broadcast %b_po : tile<1x1xptr<f32>> -> tile<64x64xptr<f32>>
    %po = offset %bb_po, %src : tile<64x64xptr<f32>>, tile<64x64xi32> -> tile<64x64xptr<f32>>
    %t2 = store_ptr_tko weak %po, %y : tile<64x64xptr<f32>>, tile<64x64xf32> -> token
    return
  }
}
