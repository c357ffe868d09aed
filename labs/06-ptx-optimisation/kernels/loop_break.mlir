// Lab 6: acc = acc*3 + k for k < n, leaving the loop by break; the count xor-ed into
// the result. Arguments: x (i32, 128), out (i32, 128), n.
cuda_tile.module @lab6 {
  entry @loop_break(%x: tile<ptr<i32>>, %out: tile<ptr<i32>>, %n: tile<i32>) {
    %i = iota : tile<128xi32>
    %x1 = reshape %x : tile<ptr<i32>> -> tile<1xptr<i32>>
    %xn = broadcast %x1 : tile<1xptr<i32>> -> tile<128xptr<i32>>
    %xp = offset %xn, %i : tile<128xptr<i32>>, tile<128xi32> -> tile<128xptr<i32>>
    %x0, %t = load_ptr_tko weak %xp : tile<128xptr<i32>> -> tile<128xi32>, token
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %y, %count = loop iter_values(%acc = %x0, %k = %c0) : tile<128xi32>, tile<i32> -> tile<128xi32>, tile<i32> {
      %done = cmpi greater_than_or_equal %k, %n, signed : tile<i32> -> tile<i1>
      if %done {
        break %acc, %k : tile<128xi32>, tile<i32>
      }
      %three = constant <i32: 3> : tile<128xi32>
      %a2 = muli %acc, %three : tile<128xi32>
      %k1 = reshape %k : tile<i32> -> tile<1xi32>
      %kb = broadcast %k1 : tile<1xi32> -> tile<128xi32>
      %a3 = addi %a2, %kb : tile<128xi32>
      %k2 = addi %k, %c1 : tile<i32>
      continue %a3, %k2 : tile<128xi32>, tile<i32>
    }
    %cr = reshape %count : tile<i32> -> tile<1xi32>
    %cb = broadcast %cr : tile<1xi32> -> tile<128xi32>
    %r = xori %y, %cb : tile<128xi32>
    %out1 = reshape %out : tile<ptr<i32>> -> tile<1xptr<i32>>
    %outn = broadcast %out1 : tile<1xptr<i32>> -> tile<128xptr<i32>>
    %outp = offset %outn, %i : tile<128xptr<i32>>, tile<128xi32> -> tile<128xptr<i32>>
    %st = store_ptr_tko weak %outp, %r : tile<128xptr<i32>>, tile<128xi32> -> token
    return
  }
}
