// RUN: nanotile-passes %s -p simplify-tokens,dce | filecheck %s
// simplify-tokens prunes join_tokens and removes make_token inputs of memory ops.

cuda_tile.module @tests {
  // CHECK-LABEL: @joins
  entry @joins(%p: tile<ptr<f32>>, %q: tile<ptr<f32>>) {
    // the load ordered after a fresh token becomes unordered (no token operand)
    // CHECK-NOT: make_token
    // CHECK: %[[V:.*]], %[[T:.*]] = load_ptr_tko weak %{{[a-z0-9_]+}} :
    // the joins with the fresh token, with themselves, and nested, all reduce to %[[T]]
    // CHECK-NOT: join_tokens
    // CHECK: store_ptr_tko weak %{{.*}}, %[[V]] token=%[[T]]
    %0 = make_token : token
    %v, %t = load_ptr_tko weak %p token=%0 : tile<ptr<f32>> -> tile<f32>, token
    %j1 = join_tokens %0, %t : token
    %j2 = join_tokens %j1, %t, %0 : token
    %s = store_ptr_tko weak %q, %v token=%j2 : tile<ptr<f32>>, tile<f32> -> token
    return
  }

  // CHECK-LABEL: @implied
  entry @implied(%p: tile<ptr<f32>>, %q: tile<ptr<f32>>, %x: tile<f32>) {
    // %s2 is ordered after %s1 already: join(%s1, %s2) is just %s2
    // CHECK: %[[S1:.*]] = store_ptr_tko weak
    // CHECK: %[[S2:.*]] = store_ptr_tko weak %{{.*}} token=%[[S1]]
    // CHECK-NOT: join_tokens
    // CHECK: store_ptr_tko weak %{{.*}} token=%[[S2]]
    %s1 = store_ptr_tko weak %p, %x : tile<ptr<f32>>, tile<f32> -> token
    %s2 = store_ptr_tko weak %q, %x token=%s1 : tile<ptr<f32>>, tile<f32> -> token
    %j = join_tokens %s1, %s2 : token
    %s3 = store_ptr_tko weak %p, %x token=%j : tile<ptr<f32>>, tile<f32> -> token
    return
  }

  // CHECK-LABEL: @kept
  entry @kept(%p: tile<ptr<f32>>, %q: tile<ptr<f32>>, %x: tile<f32>) {
    // two independent stores: the join is needed
    // CHECK: join_tokens
    %s1 = store_ptr_tko weak %p, %x : tile<ptr<f32>>, tile<f32> -> token
    %s2 = store_ptr_tko weak %q, %x : tile<ptr<f32>>, tile<f32> -> token
    %j = join_tokens %s1, %s2 : token
    %s3 = store_ptr_tko weak %p, %x token=%j : tile<ptr<f32>>, tile<f32> -> token
    return
  }

  // CHECK-LABEL: @read_after_read
  entry @read_after_read(%p: tile<ptr<f32>>, %x: tile<f32>) {
    // nothing waits for the second load, which only waited for the first one: it now
    // waits for the store. The third load's token is used: it keeps its order.
    // CHECK: %[[S:.*]] = store_ptr_tko weak
    // CHECK: %{{.*}}, %[[T1:.*]] = load_ptr_tko weak %{{.*}} token=%[[S]]
    // CHECK: load_ptr_tko weak %{{.*}} token=%[[S]]
    // CHECK: %{{.*}}, %[[T3:.*]] = load_ptr_tko weak %{{.*}} token=%[[T1]]
    // CHECK: store_ptr_tko weak %{{.*}} token=%[[T3]]
    %s = store_ptr_tko weak %p, %x : tile<ptr<f32>>, tile<f32> -> token
    %v1, %t1 = load_ptr_tko weak %p token=%s : tile<ptr<f32>> -> tile<f32>, token
    %v2, %t2 = load_ptr_tko weak %p token=%t1 : tile<ptr<f32>> -> tile<f32>, token
    %v3, %t3 = load_ptr_tko weak %p token=%t1 : tile<ptr<f32>> -> tile<f32>, token
    %a = addf %v2, %v3 : tile<f32>
    %s2 = store_ptr_tko weak %p, %a token=%t3 : tile<ptr<f32>>, tile<f32> -> token
    return
  }
}
