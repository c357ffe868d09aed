// RUN: nanotile-passes %s -p fold-constants,dce | filecheck %s
// fold-constants evaluates scalar and splat arithmetic on constants and removes
// integer identities; it leaves division by zero to run time.

cuda_tile.module @tests {
  // CHECK-LABEL: @ints
  entry @ints(%p: tile<ptr<i32>>, %x: tile<i32>) {
    // 7 * 6 - 2 = 40; (40 >> 2) = 10 (signed), -7 / 2 = -3 (toward zero)
    // CHECK-DAG: constant <i32: 40>
    // CHECK-DAG: constant <i32: 10>
    // CHECK-DAG: constant <i32: -3>
    // CHECK-NOT: muli
    // CHECK-NOT: subi
    // CHECK-NOT: shri
    %c7 = constant <i32: 7> : tile<i32>
    %c6 = constant <i32: 6> : tile<i32>
    %c2 = constant <i32: 2> : tile<i32>
    %cm7 = constant <i32: -7> : tile<i32>
    %a = muli %c7, %c6 : tile<i32>
    %b = subi %a, %c2 : tile<i32>
    %s = shri %b, %c2 signed : tile<i32>
    %d = divi %cm7, %c2 signed : tile<i32>
    %t1 = store_ptr_tko weak %p, %b : tile<ptr<i32>>, tile<i32> -> token
    %t2 = store_ptr_tko weak %p, %s : tile<ptr<i32>>, tile<i32> -> token
    %t3 = store_ptr_tko weak %p, %d : tile<ptr<i32>>, tile<i32> -> token
    return
  }

  // CHECK-LABEL: @wrap_and_identities
  entry @wrap_and_identities(%p: tile<ptr<i8>>, %x: tile<i8>) {
    // 100 + 100 wraps to -56 in i8; x + 0 and x * 1 are x
    // CHECK: constant <i8: -56>
    // CHECK-NOT: addi
    // CHECK-NOT: muli
    // CHECK: store_ptr_tko weak %{{.*}}, %{{[a-z0-9_]+}} :
    %c100 = constant <i8: 100> : tile<i8>
    %c0 = constant <i8: 0> : tile<i8>
    %c1 = constant <i8: 1> : tile<i8>
    %w = addi %c100, %c100 : tile<i8>
    %y = addi %x, %c0 : tile<i8>
    %z = muli %y, %c1 : tile<i8>
    %t1 = store_ptr_tko weak %p, %w : tile<ptr<i8>>, tile<i8> -> token
    %t2 = store_ptr_tko weak %p, %z : tile<ptr<i8>>, tile<i8> -> token
    return
  }

  // CHECK-LABEL: @splats
  entry @splats(%p: tile<ptr<f32>>) {
    // a splat 1.5 reshaped and broadcast, then multiplied by 2: a splat 3.0
    // CHECK: constant <f32: 3.000000e+00> : tile<4xf32>
    // CHECK-NOT: mulf
    // CHECK-NOT: tile<1xf32>
    %h = constant <f32: 1.5> : tile<f32>
    %r = reshape %h : tile<f32> -> tile<1xf32>
    %b = broadcast %r : tile<1xf32> -> tile<4xf32>
    %two = constant <f32: 2.0> : tile<4xf32>
    %m = mulf %b, %two : tile<4xf32>
    %q = reshape %p : tile<ptr<f32>> -> tile<1xptr<f32>>
    %ps = broadcast %q : tile<1xptr<f32>> -> tile<4xptr<f32>>
    %t = store_ptr_tko weak %ps, %m : tile<4xptr<f32>>, tile<4xf32> -> token
    return
  }

  // CHECK-LABEL: @no_fold_div_by_zero
  entry @no_fold_div_by_zero(%p: tile<ptr<i32>>) {
    // CHECK: divi
    %c1 = constant <i32: 1> : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %d = divi %c1, %c0 signed : tile<i32>
    %t = store_ptr_tko weak %p, %d : tile<ptr<i32>>, tile<i32> -> token
    return
  }

  // CHECK-LABEL: @running_max
  entry @running_max(%p: tile<ptr<f32>>) {
    // a for whose operands are all constants (bounds, and -inf as the running max) is
    // not folded, nor are its operands read as integers; the body still takes the max
    // CHECK: for
    // CHECK: maxf
    // CHECK: store_ptr_tko
    %ninf = constant <f32: 0xFF800000> : tile<f32>
    %lo = constant <i32: 0> : tile<i32>
    %hi = constant <i32: 4> : tile<i32>
    %one = constant <i32: 1> : tile<i32>
    %r = for %i in (%lo to %hi, step %one) : tile<i32> iter_values(%acc = %ninf) -> (tile<f32>) {
      %f = itof %i signed : tile<i32> -> tile<f32>
      %m = maxf %acc, %f : tile<f32>
      continue %m : tile<f32>
    }
    %t = store_ptr_tko weak %p, %r : tile<ptr<f32>>, tile<f32> -> token
    return
  }
}
