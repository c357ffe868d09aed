// tensor_view, partition_view and strided_view types: their parsers and their own rules,
// reported where the type is written.

// expected-error @below{{strides must not be provided for 0-d tiles}}
%0 = "test.use"() : () -> !cuda_tile.tensor_view<i8, strides=[1]>

// -----

// expected-error @below{{unexpected token after element type in 0-d tensor_view}}
%0 = "test.use"() : () -> !cuda_tile.tensor_view<i8, >

// -----

// expected-error @below{{expected 'strides'}}
%0 = "test.use"() : () -> !cuda_tile.tensor_view<8x?xi8>

// -----

// expected-error @below{{expected strictly positive integer, got -1}}
%0 = "test.use"() : () -> !cuda_tile.tensor_view<8xi8, strides=[-1]>

// -----

// expected-error @below{{expected strictly positive integer, got 0}}
%0 = "test.use"() : () -> !cuda_tile.tensor_view<8x8xi8, strides=[8, 0x0]>

// -----

// expected-error @below{{integer value too large}}
%0 = "test.use"() : () -> !cuda_tile.tensor_view<8xi8, strides=[9223372036854775808]>

// -----

// expected-error @below{{expected either 64-bit integer or question mark}}
%0 = "test.use"() : () -> !cuda_tile.tensor_view<8x8xi8, strides=[?, ]>

// -----

// expected-error @below{{expected shape and stride to be of same rank but got shape of rank 2 and stride of rank 1}}
%0 = "test.use"() : () -> !cuda_tile.tensor_view<8x8xi8, strides=[1]>

// -----

// expected-error @below{{dimensions must have strictly positive constant sizes but got [?, 0]}}
%0 = "test.use"() : () -> !cuda_tile.tensor_view<?x0xi8, strides=[?, 1]>

// -----

// The element type's constraint is checked before the ranks.
// expected-error @below{{failed to verify 'elementType': f16 or bf16 or f32 or tf32 or f64 or f8E4M3FN or f8E5M2 or f8E8M0FNU or f4E2M1FN or i1 or i8 or i16 or i32 or i64}}
%0 = "test.use"() : () -> !cuda_tile.tensor_view<8xtile<2xf32>, strides=[1, 1]>

// -----

// expected-error @below{{tile dimension 1 exceeds i32 limitations (got 4294967296, expected strictly positive and less than or equal to 2147483647)}}
%0 = "test.use"() : () -> !cuda_tile.partition_view<tile=(2x4294967296), !cuda_tile.tensor_view<8x8xi8, strides=[8,1]>>

// -----

// expected-error @below{{tile dimension 0 exceeds i32 limitations (got 0, expected strictly positive and less than or equal to 2147483647)}}
%0 = "test.use"() : () -> !cuda_tile.partition_view<tile=(0x2), !cuda_tile.tensor_view<8x8xi8, strides=[8,1]>>

// -----

// expected-error @below{{0-dimension tile shape is not supported}}
%0 = "test.use"() : () -> !cuda_tile.strided_view<tile=(), traversal_strides=[], !cuda_tile.tensor_view<i8>>

// -----

// expected-error @below{{expected 'tensor_view' type, but got '!cuda_tile.tile<8xi8>'}}
%0 = "test.use"() : () -> !cuda_tile.partition_view<tile=(8), !cuda_tile.tile<8xi8>>

// -----

// expected-error @below{{invalid padding_value attribute specification. Got "one" but expect one of: zero, neg_zero, nan, pos_inf, neg_inf}}
%0 = "test.use"() : () -> !cuda_tile.partition_view<tile=(8), padding_value = one, !cuda_tile.tensor_view<8xf32, strides=[1]>>

// -----

// A view's own rules are checked as it is read, before the ops that follow.
cuda_tile.module @m {
  // expected-error @below{{target dimension 1 mapped at least twice (for tile dimensions 0 and 1)}}
  testing$func @k(%v: !cuda_tile.partition_view<tile=(2x2), !cuda_tile.tensor_view<8x8xi8, strides=[8,1]>, dim_map=[1, 1]>) {
    %0 = constant <i8: 300> : tile<i8>
  }
}
