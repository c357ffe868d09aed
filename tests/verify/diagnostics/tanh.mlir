// tanh's verifier emits its rounding error and goes on to succeed: the ops after it are
// still verified (exp's, the same check, fails the op).

cuda_tile.module @m {
  testing$func @k(%x: !cuda_tile.tile<4xf32>) {
    // expected-error @below{{'cuda_tile.tanh' op invalid rounding mode specified, expect one of [approx, full]}}
    %0 = tanh %x rounding<zero> : tile<4xf32>
    // expected-error @below{{'cuda_tile.exp' op invalid rounding mode specified, expect one of [approx, full]}}
    %1 = exp %x rounding<zero> : tile<4xf32>
    // not reached
    %2 = exp %x rounding<zero> : tile<4xf32>
  }
}
