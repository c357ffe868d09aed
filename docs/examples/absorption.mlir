// The kernel of docs/guide-write-rules.md: out = (a | (a & b)) + (a & (a | b)), which the
// rules of absorption.egg turn into a + a.
cuda_tile.module @examples {
  entry @absorb(%a: tile<ptr<i32>>, %b: tile<ptr<i32>>, %out: tile<ptr<i32>>) {
    %x, %t1 = load_ptr_tko weak %a : tile<ptr<i32>> -> tile<i32>, token
    %y, %t2 = load_ptr_tko weak %b : tile<ptr<i32>> -> tile<i32>, token
    %and = andi %x, %y : tile<i32>
    %r1 = ori %x, %and : tile<i32>
    %or = ori %x, %y : tile<i32>
    %r2 = andi %x, %or : tile<i32>
    %s = addi %r1, %r2 : tile<i32>
    %t3 = store_ptr_tko weak %out, %s : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
