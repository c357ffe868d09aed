// transpose_32x32_f32_1w: out = in transposed; a 32x32 f32 tile over 1 warp.
// The permute leaves the tile in a layout the store does not want: a convert_layout.
cuda_tile.module @lab4 {
  entry @transpose_32x32_f32_1w(%pin: tile<ptr<f32>>, %pout: tile<ptr<f32>>) optimization_hints=<default = {num_warps = 1}> {
    %rows_src = iota : tile<32xi32>
    %r_src = reshape %rows_src : tile<32xi32> -> tile<32x1xi32>
    %n_src = constant <i32: 32> : tile<32x1xi32>
    %rn_src = muli %r_src, %n_src : tile<32x1xi32>
    %rb_src = broadcast %rn_src : tile<32x1xi32> -> tile<32x32xi32>
    %cols_src = iota : tile<32xi32>
    %c_src = reshape %cols_src : tile<32xi32> -> tile<1x32xi32>
    %cb_src = broadcast %c_src : tile<1x32xi32> -> tile<32x32xi32>
    %src = addi %rb_src, %cb_src : tile<32x32xi32>
    %b_pi = reshape %pin : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %bb_pi = broadcast %b_pi : tile<1x1xptr<f32>> -> tile<32x32xptr<f32>>
    %pi = offset %bb_pi, %src : tile<32x32xptr<f32>>, tile<32x32xi32> -> tile<32x32xptr<f32>>
    %x, %t1 = load_ptr_tko weak %pi : tile<32x32xptr<f32>> -> tile<32x32xf32>, token
    %y = permute %x [1, 0] : tile<32x32xf32> -> tile<32x32xf32>
    %rows_dst = iota : tile<32xi32>
    %r_dst = reshape %rows_dst : tile<32xi32> -> tile<32x1xi32>
    %n_dst = constant <i32: 32> : tile<32x1xi32>
    %rn_dst = muli %r_dst, %n_dst : tile<32x1xi32>
    %rb_dst = broadcast %rn_dst : tile<32x1xi32> -> tile<32x32xi32>
    %cols_dst = iota : tile<32xi32>
    %c_dst = reshape %cols_dst : tile<32xi32> -> tile<1x32xi32>
    %cb_dst = broadcast %c_dst : tile<1x32xi32> -> tile<32x32xi32>
    %dst = addi %rb_dst, %cb_dst : tile<32x32xi32>
    %b_po = reshape %pout : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %bb_po = broadcast %b_po : tile<1x1xptr<f32>> -> tile<32x32xptr<f32>>
    %po = offset %bb_po, %dst : tile<32x32xptr<f32>>, tile<32x32xi32> -> tile<32x32xptr<f32>>
    %t2 = store_ptr_tko weak %po, %y : tile<32x32xptr<f32>>, tile<32x32xf32> -> token
    return
  }
}
