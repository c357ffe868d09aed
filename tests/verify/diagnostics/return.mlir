// return's parent must be a function or an if (ParentOneOf); through ifs, its verifier
// looks for the function.

cuda_tile.module @m {
  testing$func @k(%c: !cuda_tile.tile<i1>) {
    %lb = constant <i32: 0> : tile<i32>
    %ub = constant <i32: 4> : tile<i32>
    %s = constant <i32: 1> : tile<i32>
    for %iv in (%lb to %ub, step %s) : tile<i32> {
      if %c {
        // expected-error @below{{'cuda_tile.return' op must be used within a cuda_tile.testing$func, cuda_tile.entry, or cuda_tile.if operation}}
        return
      }
      continue
    }
  }
}

// -----

cuda_tile.module @m {
  entry @k(%c: !cuda_tile.tile<i1>) {
    if %c {
      if %c {
        return
      }
      return
    }
  }
}
