// cuda-tile checks the rest of the suite did not exercise, one input each, with the
// message cuda-tile's source gives (lib/Dialect/CudaTile/IR/CudaTile.cpp).

cuda_tile.module @m {
  testing$func @k(%t: !cuda_tile.tile<8xi32>) {
    // expected-error @below{{'cuda_tile.itof' op integer to f8E8M0FNU conversion is not supported, please first convert to another float type}}
    %0 = itof %t signed : tile<8xi32> -> tile<8xf8E8M0FNU>
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%t: !cuda_tile.tile<8xf32>) {
    // expected-error @below{{'cuda_tile.ftof' op converting tiles must not be a no-op}}
    %0 = ftof %t : tile<8xf32> -> tile<8xf32>
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%t: !cuda_tile.tile<8xf32>) {
    // expected-error @below{{'cuda_tile.permute' op expects at least rank 2, but got: 1}}
    %0 = permute %t [0] : tile<8xf32> -> tile<8xf32>
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%t: !cuda_tile.tile<8xf32>) {
    // expected-error @below{{'cuda_tile.exp' op invalid rounding mode specified, expect one of [approx, full]}}
    %0 = exp %t rounding<zero> : tile<8xf32>
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%lb: !cuda_tile.tile<i32>) {
    // expected-error @below{{mismatch in number of loop-carried values and defined values}}
    %r = for %iv in (%lb to %lb, step %lb) : tile<i32> iter_values(%a = %lb, %b = %lb) -> (tile<i32>) {
      continue %a : tile<i32>
    }
  }
}

// -----

// The generic form lets the body go without its induction variable.
cuda_tile.module @m {
  testing$func @k(%lb: !cuda_tile.tile<i32>) {
    // expected-error @below{{'cuda_tile.for' op expected at least one block argument for induction variable}}
    "cuda_tile.for"(%lb, %lb, %lb) ({
    ^bb0:
      "cuda_tile.continue"() : () -> ()
    }) : (!cuda_tile.tile<i32>, !cuda_tile.tile<i32>, !cuda_tile.tile<i32>) -> ()
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%lb: !cuda_tile.tile<i32>) {
    // expected-error @below{{'cuda_tile.for' op expected induction variable to be same type as bounds and step: '!cuda_tile.tile<i64>' vs '!cuda_tile.tile<i32>'}}
    "cuda_tile.for"(%lb, %lb, %lb) ({
    ^bb0(%iv: !cuda_tile.tile<i64>):
      "cuda_tile.continue"() : () -> ()
    }) : (!cuda_tile.tile<i32>, !cuda_tile.tile<i32>, !cuda_tile.tile<i32>) -> ()
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%tv: !cuda_tile.tensor_view<8xf32, strides=[1]>) {
    // expected-error @below{{expected 'gather_scatter_view' type, but got '!cuda_tile.partition_view<tile=(8), tensor_view<8xf32, strides=[1]>>'}}
    %0 = make_gather_scatter_view %tv : partition_view<tile=(8), tensor_view<8xf32, strides=[1]>>
  }
}

// -----

cuda_tile.module @m {
  // expected-error @below{{duplicate optimization_hints key `sm_100`}}
  entry @k(%arg0: !cuda_tile.tile<ptr<f32>>) optimization_hints=<sm_100={num_cta_in_cga=2}, sm_100={num_cta_in_cga=2}> {
    return
  }
}
