// RUN: nanotile-passes %s -p assume-to-facts,canonicalize-cmp-select,dce | filecheck %s
// canonicalize-cmp-select puts constants on the right of comparisons, simplifies
// trivial and negated selects, and decides comparisons that bounded facts settle.

cuda_tile.module @tests {
  // CHECK-LABEL: @cmp
  entry @cmp(%p: tile<ptr<i1>>, %x: tile<i32>, %y: tile<f32>) {
    // 5 < x  ->  x > 5 ; 1.0 >= y -> y <= 1.0
    // CHECK: cmpi greater_than %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, signed
    // CHECK: cmpf less_than_or_equal ordered %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}
    // x <= x is true
    // CHECK: constant <i1: true>
    %c5 = constant <i32: 5> : tile<i32>
    %one = constant <f32: 1.0> : tile<f32>
    %a = cmpi less_than %c5, %x, signed : tile<i32> -> tile<i1>
    %b = cmpf greater_than_or_equal ordered %one, %y : tile<f32> -> tile<i1>
    %c = cmpi less_than_or_equal %x, %x, signed : tile<i32> -> tile<i1>
    %t1 = store_ptr_tko weak %p, %a : tile<ptr<i1>>, tile<i1> -> token
    %t2 = store_ptr_tko weak %p, %b : tile<ptr<i1>>, tile<i1> -> token
    %t3 = store_ptr_tko weak %p, %c : tile<ptr<i1>>, tile<i1> -> token
    return
  }

  // CHECK-LABEL: @select
  entry @select(%p: tile<ptr<i32>>, %c: tile<i1>, %x: tile<i32>, %y: tile<i32>) {
    // CHECK-NOT: xori
    // CHECK: %[[S:.*]] = select %[[C:[a-z0-9_]+]], %[[Y:[a-z0-9_]+]], %[[X:[a-z0-9_]+]] :
    // CHECK-NOT: select
    // CHECK: store_ptr_tko weak %{{.*}}, %[[S]]
    // CHECK: store_ptr_tko weak %{{.*}}, %[[X]]
    // CHECK: store_ptr_tko weak %{{.*}}, %[[Y]]
    %true = constant <i1: true> : tile<i1>
    %false = constant <i1: false> : tile<i1>
    %nc = xori %c, %true : tile<i1>
    %s = select %nc, %x, %y : tile<i1>, tile<i32>
    %same = select %c, %x, %x : tile<i1>, tile<i32>
    %fixed = select %false, %x, %y : tile<i1>, tile<i32>
    %t1 = store_ptr_tko weak %p, %s : tile<ptr<i32>>, tile<i32> -> token
    %t2 = store_ptr_tko weak %p, %same : tile<ptr<i32>>, tile<i32> -> token
    %t3 = store_ptr_tko weak %p, %fixed : tile<ptr<i32>>, tile<i32> -> token
    return
  }

  // CHECK-LABEL: @facts
  entry @facts(%p: tile<ptr<i1>>, %n: tile<i32>) {
    // n is assumed >= 0: n < 0 is false, n >= 0 true; n < 5 stays
    // CHECK-DAG: constant <i1: false>
    // CHECK-DAG: constant <i1: true>
    // CHECK: cmpi less_than %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, signed
    // CHECK-NOT: cmpi
    %an = assume bounded<0, ?>, %n : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %c5 = constant <i32: 5> : tile<i32>
    %a = cmpi less_than %an, %c0, signed : tile<i32> -> tile<i1>
    %b = cmpi greater_than_or_equal %an, %c0, signed : tile<i32> -> tile<i1>
    %c = cmpi less_than %an, %c5, signed : tile<i32> -> tile<i1>
    %t1 = store_ptr_tko weak %p, %a : tile<ptr<i1>>, tile<i1> -> token
    %t2 = store_ptr_tko weak %p, %b : tile<ptr<i1>>, tile<i1> -> token
    %t3 = store_ptr_tko weak %p, %c : tile<ptr<i1>>, tile<i1> -> token
    return
  }
}
