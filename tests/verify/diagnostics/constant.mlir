// constant's values as cuda-tile's parser reads them: a number type, values of that
// type, brackets whose nesting gives the shape, then the tile type.

cuda_tile.module @m {
  entry @k() {
    // expected-error @below{{custom op 'cuda_tile.constant' inferred shape of elements literal ([3]) does not match type ([4])}}
    %0 = constant <i32: [1, 2, 3]> : tile<4xi32>
  }
}

// -----

cuda_tile.module @m {
  entry @k() {
    // expected-error @below{{custom op 'cuda_tile.constant' inferred shape of elements literal ([1]) does not match type ([])}}
    %0 = constant <i32: [1]> : tile<i32>
  }
}

// -----

// A single value is a splat: any shape.
cuda_tile.module @m {
  entry @k() {
    %0 = constant <i32: 7> : tile<2x2xi32>
    // expected-error @below{{custom op 'cuda_tile.constant' tensor literal is invalid; ranks are not consistent between elements}}
    %1 = constant <i32: [[1, 2], [3]]> : tile<2x2xi32>
  }
}

// -----

cuda_tile.module @m {
  entry @k() {
    // expected-error @below{{custom op 'cuda_tile.constant' tensor literal is invalid; ranks are not consistent between elements}}
    %0 = constant <i32: [[1, [2]]]> : tile<1x2xi32>
  }
}

// -----

cuda_tile.module @m {
  entry @k() {
    // expected-error @below{{custom op 'cuda_tile.constant' expected integer value}}
    %0 = constant <i32: []> : tile<i32>
  }
}

// -----

cuda_tile.module @m {
  entry @k() {
    // expected-error @below{{custom op 'cuda_tile.constant' expected integer value}}
    %0 = constant <i32: 1.5> : tile<i32>
  }
}

// -----

cuda_tile.module @m {
  entry @k() {
    // expected-error @below{{custom op 'cuda_tile.constant' expected integer value}}
    %0 = constant <i8: true> : tile<i8>
  }
}

// -----

// i8 takes the signed and the unsigned range: -128 to 255.
cuda_tile.module @m {
  entry @k() {
    %0 = constant <i8: [-128, 255]> : tile<2xi8>
    // expected-error @below{{custom op 'cuda_tile.constant' integer constant out of range for type}}
    %1 = constant <i8: 256> : tile<i8>
  }
}

// -----

cuda_tile.module @m {
  entry @k() {
    // expected-error @below{{custom op 'cuda_tile.constant' integer value too large}}
    // expected-error @below{{custom op 'cuda_tile.constant' expected integer value}}
    %0 = constant <i64: 9223372036854775808> : tile<i64>
  }
}

// -----

// MLIR's float literal parser words these (no op prefix).
cuda_tile.module @m {
  entry @k() {
    // expected-error @below{{unexpected decimal integer literal for a floating point value}}
    // expected-note @below{{add a trailing dot to make the literal a float}}
    %0 = constant <f16: [1.0, 2]> : tile<2xf16>
  }
}

// -----

cuda_tile.module @m {
  entry @k() {
    // expected-error @below{{hexadecimal float constant out of range for type}}
    %0 = constant <f8E4M3FN: 0x100> : tile<f8E4M3FN>
  }
}

// -----

cuda_tile.module @m {
  entry @k() {
    // expected-error @below{{expected floating point literal}}
    %0 = constant <f32: one> : tile<f32>
  }
}

// -----

cuda_tile.module @m {
  entry @k() {
    // expected-error @below{{custom op 'cuda_tile.constant' mismatch between the element type: 'i16' and the tile element type 'i32'}}
    %0 = constant <i16: 1> : tile<i32>
  }
}

// -----

cuda_tile.module @m {
  entry @k() {
    // expected-error @below{{custom op 'cuda_tile.constant' expect element type to be one of i1 or i8 or i16 or i32 or i64 or f16 or bf16 or f32 or f64 or tf32 or f8E4M3FN or f8E5M2 or f8E8M0FNU or f4E2M1FN values, but got '!cuda_tile.ptr<f32>'}}
    %0 = constant <ptr<f32>: 1> : tile<ptr<f32>>
  }
}

// -----

cuda_tile.module @m {
  entry @k() {
    // expected-error @below{{custom op 'cuda_tile.constant' unknown type: real}}
    // expected-error @below{{custom op 'cuda_tile.constant' expect element type to be one of i1 or i8 or i16 or i32 or i64 or f16 or bf16 or f32 or f64 or tf32 or f8E4M3FN or f8E5M2 or f8E8M0FNU or f4E2M1FN values, but got '<<NULL TYPE>>'}}
    %0 = constant <real: 1.0> : tile<f32>
  }
}

// -----

// The type after the colon must be a tile (cuda-tile's parser says so in the words of the
// op's result constraint).
cuda_tile.module @m {
  entry @k() {
    // expected-error @below{{custom op 'cuda_tile.constant' result #0 must be tile of i1 or i8 or i16 or i32 or i64 or f16 or bf16 or f32 or f64 or tf32 or f8E4M3FN or f8E5M2 or f8E8M0FNU or f4E2M1FN values, but got '!cuda_tile.token'}}
    %0 = constant <i32: 1> : !cuda_tile.token
  }
}

// -----

// A global's values are read by the same parser.
cuda_tile.module @m {
  // expected-error @below{{custom op 'cuda_tile.global' inferred shape of elements literal ([2]) does not match type ([4])}}
  global @g <f32: [1.0, 2.0]> : tile<4xf32>
}
