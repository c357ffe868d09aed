// extract's constant indices: a negative or too large one is a warning (the op still
// verifies).

cuda_tile.module @m {
  testing$func @k(%t: !cuda_tile.tile<8xf32>) {
    %i = constant <i32: 4> : tile<i32>
    // expected-warning @below{{extract index 0 value 4 may be out of bounds (max valid index: 3)}}
    %0 = extract %t[%i] : tile<8xf32> -> tile<2xf32>
    %n = constant <i32: -1> : tile<i32>
    // expected-warning @below{{extract index 0 has negative value -1, which may cause undefined behavior}}
    %1 = extract %t[%n] : tile<8xf32> -> tile<2xf32>
    %z = constant <i32: 3> : tile<i32>
    %2 = extract %t[%z] : tile<8xf32> -> tile<2xf32>
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%t: !cuda_tile.tile<8x4xf32>) {
    %i = constant <i32: 9> : tile<i32>
    %n = constant <i32: -2> : tile<i32>
    // expected-warning @below{{extract index 0 value 9 may be out of bounds (max valid index: 3)}}
    // expected-warning @below{{extract index 1 has negative value -2, which may cause undefined behavior}}
    %0 = extract %t[%i, %n] : tile<8x4xf32> -> tile<2x4xf32>
    // an index that is not a constant: no warning
    %1 = addi %i, %n : tile<i32>
    %2 = extract %t[%1, %1] : tile<8x4xf32> -> tile<2x4xf32>
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%t: !cuda_tile.tile<4xf32>) {
    %i = constant <i32: 9> : tile<i32>
    // expected-error @below{{'cuda_tile.extract' op source dimension 0 size (4) must be evenly divisible by result dimension 0 size (8)}}
    %0 = extract %t[%i] : tile<4xf32> -> tile<8xf32>
  }
}
