// Lab 6: the sum over n blocks of 128 of x*x, then halved (n > 2) or plus 7: a for loop
// and an if. Arguments: x (i32, n*128), out (i32, 128), n.
cuda_tile.module @lab6 {
  entry @loop_and_branch(%x: tile<ptr<i32>>, %out: tile<ptr<i32>>, %n: tile<i32>) {
    %i = iota : tile<128xi32>
    %x1 = reshape %x : tile<ptr<i32>> -> tile<1xptr<i32>>
    %xn = broadcast %x1 : tile<1xptr<i32>> -> tile<128xptr<i32>>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %c2 = constant <i32: 2> : tile<i32>
    %c128 = constant <i32: 128> : tile<i32>
    %zero = constant <i32: 0> : tile<128xi32>
    %acc = for %k in (%c0 to %n, step %c1) : tile<i32> iter_values(%a = %zero) -> (tile<128xi32>) {
      %off = muli %k, %c128 : tile<i32>
      %o1 = reshape %off : tile<i32> -> tile<1xi32>
      %ob = broadcast %o1 : tile<1xi32> -> tile<128xi32>
      %idx = addi %ob, %i : tile<128xi32>
      %p = offset %xn, %idx : tile<128xptr<i32>>, tile<128xi32> -> tile<128xptr<i32>>
      %v, %t = load_ptr_tko weak %p : tile<128xptr<i32>> -> tile<128xi32>, token
      %sq = muli %v, %v : tile<128xi32>
      %s = addi %a, %sq : tile<128xi32>
      continue %s : tile<128xi32>
    }
    %big = cmpi greater_than %n, %c2, signed : tile<i32> -> tile<i1>
    %r = if %big -> (tile<128xi32>) {
      %one = constant <i32: 1> : tile<128xi32>
      %h = shri %acc, %one signed : tile<128xi32>
      yield %h : tile<128xi32>
    } else {
      %seven = constant <i32: 7> : tile<128xi32>
      %m = addi %acc, %seven : tile<128xi32>
      yield %m : tile<128xi32>
    }
    %out1 = reshape %out : tile<ptr<i32>> -> tile<1xptr<i32>>
    %outn = broadcast %out1 : tile<1xptr<i32>> -> tile<128xptr<i32>>
    %outp = offset %outn, %i : tile<128xptr<i32>>, tile<128xi32> -> tile<128xptr<i32>>
    %st = store_ptr_tko weak %outp, %r : tile<128xptr<i32>>, tile<128xi32> -> token
    return
  }
}
