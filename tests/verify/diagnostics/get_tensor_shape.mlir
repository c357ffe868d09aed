// get_tensor_shape's parser reads the source's type as written: it must be a tensor_view.

cuda_tile.module @m {
  testing$func @k(%t: !cuda_tile.tile<4xf32>) {
    // expected-error @below{{custom op 'cuda_tile.get_tensor_shape' expected tensor_view, got '!cuda_tile.tile<4xf32>'}}
    %0 = get_tensor_shape %t : tile<4xf32> -> tile<i64>
  }
}

// -----

// The type written is checked, not the value's: a tensor_view written for a tile value
// is a use of the value with another type.
cuda_tile.module @m {
  // expected-note @below{{prior use here}}
  testing$func @k(%t: !cuda_tile.tile<4xf32>) {
    // expected-error @below{{use of value '%t' expects different type than prior uses: '!cuda_tile.tensor_view<4xf32, strides=[1]>' vs '!cuda_tile.tile<4xf32>'}}
    %0 = get_tensor_shape %t : tensor_view<4xf32, strides=[1]> -> tile<i64>
  }
}

// -----

// get_index_space_shape's parser: the same for a tile view.
cuda_tile.module @m {
  testing$func @k(%t: !cuda_tile.tile<4xf32>) {
    // expected-error @below{{custom op 'cuda_tile.get_index_space_shape' expected tile view, got '!cuda_tile.tile<4xf32>'}}
    %0 = get_index_space_shape %t : tile<4xf32> -> tile<i32>
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%t: !cuda_tile.tensor_view<64xf32, strides=[1]>) {
    // expected-error @below{{custom op 'cuda_tile.get_index_space_shape' expected tile view, got '!cuda_tile.tensor_view<64xf32, strides=[1]>'}}
    %0 = get_index_space_shape %t : tensor_view<64xf32, strides=[1]> -> tile<i32>
  }
}
