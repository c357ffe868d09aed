// A function's arguments are all named (`%a: type`) or all unnamed (`type`): cuda-tile's
// signature parser says so at the first argument that breaks the pattern.

cuda_tile.module @m {
  // expected-error @below{{custom op 'cuda_tile.testing$func' expected SSA identifier}}
  testing$func @k(%a: !cuda_tile.tile<f32>, !cuda_tile.tile<f32>) {
  }
}

// -----

cuda_tile.module @m {
  // expected-error @below{{custom op 'cuda_tile.entry' expected SSA identifier}}
  entry @k(%a: tile<f32>, ) {
  }
}

// -----

cuda_tile.module @m {
  // expected-error @below{{custom op 'cuda_tile.testing$func' expected type instead of SSA identifier}}
  testing$func @k(!cuda_tile.tile<f32>, %a: !cuda_tile.tile<f32>) {
  }
}

// -----

cuda_tile.module @m {
  // expected-error @below{{custom op 'cuda_tile.entry' expected type instead of SSA identifier}}
  entry @k(tile<f32>, tile<i32>, %a: tile<f32>) {
  }
}
