// RUN: nanotile-passes %s -p resolve-tokens | filecheck %s
// resolve-tokens drops token operands, make_token/join_tokens, and tokens carried by
// for loops and ifs; memory ops keep their (unused) token results.

cuda_tile.module @tests {
  // CHECK-LABEL: @ordered
  entry @ordered(%p: tile<ptr<f32>>, %q: tile<ptr<f32>>, %x: tile<f32>) {
    // CHECK-NOT: make_token
    // CHECK-NOT: join_tokens
    // CHECK: store_ptr_tko weak %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} :
    // CHECK: load_ptr_tko weak %{{[a-z0-9_]+}} :
    // CHECK-NOT: token=
    %t0 = make_token : token
    %t1 = store_ptr_tko weak %p, %x token=%t0 : tile<ptr<f32>>, tile<f32> -> token
    %t2 = join_tokens %t0, %t1 : token
    %v, %t3 = load_ptr_tko weak %q token=%t2 : tile<ptr<f32>> -> tile<f32>, token
    %t4 = store_ptr_tko weak %p, %v token=%t3 : tile<ptr<f32>>, tile<f32> -> token
    return
  }

  // CHECK-LABEL: @carried
  entry @carried(%p: tile<ptr<i32>>, %n: tile<i32>) {
    // the token iteration value goes; the i32 one stays
    // CHECK: for %{{.*}} in (%{{.*}} to %{{.*}}, step %{{.*}}) : tile<i32> iter_values(%[[ACC:.*]] = %{{.*}}) -> (tile<i32>)
    // CHECK: continue %{{[a-z0-9_]+}} : tile<i32>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %t0 = make_token : token
    %r:2 = for %i in (%c0 to %n, step %c1) : tile<i32> iter_values(%acc = %c0, %tok = %t0) -> (tile<i32>, token) {
      %s = addi %acc, %i : tile<i32>
      %t = store_ptr_tko weak %p, %s token=%tok : tile<ptr<i32>>, tile<i32> -> token
      continue %s, %t : tile<i32>, token
    }
    %t5 = store_ptr_tko weak %p, %r#0 token=%r#1 : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
