// RUN: nanotile-passes %s -p eqsat | filecheck %s
// eqsat runs nanotile's egglog rulesets: identities, strength reduction with the
// int-facts analysis, shape algebra, select/cmp and cast chains.

cuda_tile.module @tests {
  // CHECK-LABEL: @strength
  entry @strength(%p: tile<ptr<i32>>, %x: tile<i32>) {
    // x * 8 => x << 3; (x & 255) / 4 => >> 2 (non-negative); x % 16 unsigned => x & 15
    // CHECK-NOT: muli
    // CHECK-NOT: divi
    // CHECK-NOT: remi
    // CHECK-DAG: shli %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} :
    // CHECK-DAG: shri %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} signed :
    // CHECK-DAG: constant <i32: 15>
    %c8 = constant <i32: 8> : tile<i32>
    %c4 = constant <i32: 4> : tile<i32>
    %c16 = constant <i32: 16> : tile<i32>
    %c255 = constant <i32: 255> : tile<i32>
    %a = muli %x, %c8 : tile<i32>
    %m = andi %x, %c255 : tile<i32>
    %d = divi %m, %c4 signed : tile<i32>
    %r = remi %x, %c16 unsigned : tile<i32>
    %t1 = store_ptr_tko weak %p, %a : tile<ptr<i32>>, tile<i32> -> token
    %t2 = store_ptr_tko weak %p, %d : tile<ptr<i32>>, tile<i32> -> token
    %t3 = store_ptr_tko weak %p, %r : tile<ptr<i32>>, tile<i32> -> token
    return
  }

  // CHECK-LABEL: @identities
  entry @identities(%p: tile<ptr<i32>>, %x: tile<i32>) {
    // (x - x) + x => x; x == x => true, so the select is its first value
    // CHECK-NOT: subi
    // CHECK-NOT: cmpi
    // CHECK-NOT: select
    // CHECK: store_ptr_tko weak %{{[a-z0-9_]+}}, %x :
    %s = subi %x, %x : tile<i32>
    %y = addi %s, %x : tile<i32>
    %c = cmpi equal %x, %x, signed : tile<i32> -> tile<i1>
    %z = select %c, %y, %s : tile<i1>, tile<i32>
    %t = store_ptr_tko weak %p, %z : tile<ptr<i32>>, tile<i32> -> token
    return
  }

  // CHECK-LABEL: @shapes_and_casts
  entry @shapes_and_casts(%p: tile<ptr<f32>>, %x: tile<f32>) {
    // reshape chains collapse; f32 -> f64 -> f32 is x; -(-x) * 1.0 is x
    // CHECK-NOT: ftof
    // CHECK-NOT: negf
    // CHECK-NOT: mulf
    // CHECK-NOT: tile<1xf32>
    // CHECK: reshape %x : tile<f32> -> tile<1x1xf32>
    %w = ftof %x : tile<f32> -> tile<f64>
    %n = ftof %w : tile<f64> -> tile<f32>
    %g = negf %n : tile<f32>
    %h = negf %g : tile<f32>
    %one = constant <f32: 1.0> : tile<f32>
    %k = mulf %h, %one : tile<f32>
    %r1 = reshape %k : tile<f32> -> tile<1xf32>
    %r2 = reshape %r1 : tile<1xf32> -> tile<1x1xf32>
    %b = broadcast %r2 : tile<1x1xf32> -> tile<4x8xf32>
    %q = reshape %p : tile<ptr<f32>> -> tile<1x1xptr<f32>>
    %ps = broadcast %q : tile<1x1xptr<f32>> -> tile<4x8xptr<f32>>
    %t = store_ptr_tko weak %ps, %b : tile<4x8xptr<f32>>, tile<4x8xf32> -> token
    return
  }

  // CHECK-LABEL: @kept
  entry @kept(%p: tile<ptr<f32>>, %x: tile<f32>) {
    // x + 0.0 is not x (-0.0 + 0.0 = +0.0) and x * y + z is not contracted by default
    // CHECK: addf
    // CHECK: mulf
    // CHECK: addf
    // CHECK-NOT: fma
    %zero = constant <f32: 0.0> : tile<f32>
    %a = addf %x, %zero : tile<f32>
    %m = mulf %a, %x : tile<f32>
    %s = addf %m, %x : tile<f32>
    %t = store_ptr_tko weak %p, %s : tile<ptr<f32>>, tile<f32> -> token
    return
  }
}
