// make_tensor_view, make_partition_view and the view loads and stores: what their
// parsers check, and their verifiers reached through the generic form.

cuda_tile.module @m {
  testing$func @k(%base: !cuda_tile.tile<!cuda_tile.ptr<i8>>) {
    // expected-error @below{{custom op 'cuda_tile.make_tensor_view' expected shape declaration to contain 1 elements due to tensor_view type, but 2 were provided}}
    make_tensor_view %base, shape = [8, 8], strides = [1] : tensor_view<8xi8, strides=[1]>
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%base: !cuda_tile.tile<!cuda_tile.ptr<i8>>) {
    // expected-error @below{{custom op 'cuda_tile.make_tensor_view' expected stride declaration to contain 1 elements due to tensor_view type, but 0 were provided}}
    make_tensor_view %base, shape = [8], strides = [] : tensor_view<8xi8, strides=[1]>
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%base: !cuda_tile.tile<!cuda_tile.ptr<i8>>, %n: !cuda_tile.tile<i32>) {
    // expected-error @below{{custom op 'cuda_tile.make_tensor_view' input shape dimension 0 does not match tensor_view type (expected 8, got dynamic)}}
    make_tensor_view %base, shape = [%n], strides = [1] : tile<i32> -> tensor_view<8xi8, strides=[1]>
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%base: !cuda_tile.tile<!cuda_tile.ptr<i8>>) {
    // expected-error @below{{custom op 'cuda_tile.make_tensor_view' input stride dimension 1 does not match tensor_view type (expected dynamic, got 1)}}
    make_tensor_view %base, shape = [8, 8], strides = [8, 1] : tensor_view<8x8xi8, strides=[8, ?]>
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%base: !cuda_tile.tile<!cuda_tile.ptr<i8>>) {
    // expected-error @below{{custom op 'cuda_tile.make_tensor_view' expected either integer or SSA value}}
    make_tensor_view %base, shape = [?], strides = [1] : tensor_view<?xi8, strides=[1]>
  }
}

// -----

// The base is read as a pointer to the view's elements.
cuda_tile.module @m {
  // expected-note @below{{prior use here}}
  testing$func @k(%base: !cuda_tile.tile<!cuda_tile.ptr<i8>>) {
    // expected-error @below{{use of value '%base' expects different type than prior uses: '!cuda_tile.tile<ptr<i16>>' vs '!cuda_tile.tile<ptr<i8>>'}}
    make_tensor_view %base, shape = [8], strides = [1] : tensor_view<8xi16, strides=[1]>
  }
}

// -----

// Without dynamic values, the one type written is the view's.
cuda_tile.module @m {
  testing$func @k(%base: !cuda_tile.tile<!cuda_tile.ptr<i8>>) {
    // expected-error @below{{custom op 'cuda_tile.make_tensor_view' expected 'tensor_view' type, but got '!cuda_tile.tile<i32>'}}
    make_tensor_view %base, shape = [8], strides = [1] : tile<i32> -> tensor_view<8xi8, strides=[1]>
  }
}

// -----

// The tensor_view operand is read with the view's tensor_view type.
cuda_tile.module @m {
  // expected-note @below{{prior use here}}
  testing$func @k(%t: !cuda_tile.tensor_view<8xi8, strides=[1]>) {
    // expected-error @below{{use of value '%t' expects different type than prior uses: '!cuda_tile.tensor_view<16xi8, strides=[1]>' vs '!cuda_tile.tensor_view<8xi8, strides=[1]>'}}
    make_partition_view %t : partition_view<tile=(4), tensor_view<16xi8, strides=[1]>>
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%t: !cuda_tile.tensor_view<8xi8, strides=[1]>) {
    // expected-error @below{{custom op 'cuda_tile.make_strided_view' expected 'strided_view' type, but got '!cuda_tile.partition_view<tile=(4), tensor_view<8xi8, strides=[1]>>'}}
    make_strided_view %t : !cuda_tile.partition_view<tile=(4), tensor_view<8xi8, strides=[1]>>
  }
}

// -----

// memory_ordering_semantics and memory_scope are plain i32 attributes in the generic form.
cuda_tile.module @m {
  testing$func @k(%v: !cuda_tile.partition_view<tile=(4), !cuda_tile.tensor_view<8xi8, strides=[1]>>, %i: !cuda_tile.tile<i32>) {
    // expected-error @below{{expected 1 index operands (based on view type), got 2}}
    %x, %t = "cuda_tile.load_view_tko"(%v, %i, %i) <{memory_ordering_semantics = 1 : i32, memory_scope = 1 : i32, operandSegmentSizes = array<i32: 1, 2, 0>}> : (!cuda_tile.partition_view<tile=(4), tensor_view<8xi8, strides=[1]>>, !cuda_tile.tile<i32>, !cuda_tile.tile<i32>) -> (!cuda_tile.tile<4xi8>, !cuda_tile.token)
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%v: !cuda_tile.partition_view<tile=(4), !cuda_tile.tensor_view<8xi8, strides=[1]>>, %i: !cuda_tile.tile<i32>) {
    // expected-error @below{{Invalid attribute `memory_ordering_semantics` in property conversion: 9 : i32}}
    %x, %t = "cuda_tile.load_view_tko"(%v, %i) <{memory_ordering_semantics = 9 : i32, operandSegmentSizes = array<i32: 1, 1, 0>}> : (!cuda_tile.partition_view<tile=(4), tensor_view<8xi8, strides=[1]>>, !cuda_tile.tile<i32>) -> (!cuda_tile.tile<4xi8>, !cuda_tile.token)
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%x: !cuda_tile.tile<4xi8>, %i: !cuda_tile.tile<i32>) {
    // expected-error @below{{'cuda_tile.store_view_tko' op operand #1 must be TileView instance, but got '!cuda_tile.tile<4xi8>'}}
    %t = store_view_tko weak %x, %x[%i] : tile<4xi8>, tile<4xi8>, tile<i32> -> token
  }
}

// -----

// Indices written without their types: cuda-tile's parser says so once the op is read,
// where the next token starts.
cuda_tile.module @m {
  testing$func @k(%view: !cuda_tile.partition_view<tile=(8), !cuda_tile.tensor_view<64xf32, strides=[1]>>, %c0: !cuda_tile.tile<i32>) {
    %x, %t = load_view_tko weak %view[%c0] : partition_view<tile=(8), tensor_view<64xf32, strides=[1]>> -> tile<8xf32>, token
    // expected-error @below{{custom op 'cuda_tile.load_view_tko' index types must be specified when indices are present}}
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%view: !cuda_tile.partition_view<tile=(8), !cuda_tile.tensor_view<64xf32, strides=[1]>>, %c0: !cuda_tile.tile<i32>, %v: !cuda_tile.tile<8xf32>) {
    %t = store_view_tko weak %v, %view[%c0] : tile<8xf32>, partition_view<tile=(8), tensor_view<64xf32, strides=[1]>> -> token
    // expected-error @below{{custom op 'cuda_tile.store_view_tko' index types must be specified when indices are present}}
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%view: !cuda_tile.partition_view<tile=(8), !cuda_tile.tensor_view<64xf32, strides=[1]>>, %c0: !cuda_tile.tile<i32>, %v: !cuda_tile.tile<8xf32>) {
    %t = atomic_red_view_tko relaxed device %view[%c0], addf, %v : tile<8xf32>, partition_view<tile=(8), tensor_view<64xf32, strides=[1]>> -> token
    // expected-error @below{{custom op 'cuda_tile.atomic_red_view_tko' index types must be specified when indices are present}}
  }
}

// -----

// More index types than indices (one type is for all of them).
cuda_tile.module @m {
  testing$func @k(%view: !cuda_tile.partition_view<tile=(8x8), !cuda_tile.tensor_view<64x64xf32, strides=[64,1]>>, %c0: !cuda_tile.tile<i32>) {
    // expected-error @below{{custom op 'cuda_tile.load_view_tko' expected 2 index types, got 3}}
    %x, %t = load_view_tko weak %view[%c0, %c0] : partition_view<tile=(8x8), tensor_view<64x64xf32, strides=[64,1]>>, tile<i32>, tile<i32>, tile<i32> -> tile<8x8xf32>, token
  }
}

// -----

// atomic_red_view_tko reads its keywords with a parser of its own: its own messages.
cuda_tile.module @m {
  testing$func @k(%view: !cuda_tile.partition_view<tile=(8), !cuda_tile.tensor_view<64xf32, strides=[1]>>, %c0: !cuda_tile.tile<i32>, %v: !cuda_tile.tile<8xf32>) {
    // expected-error @below{{custom op 'cuda_tile.atomic_red_view_tko' unknown atomic RMW mode: 'foo'; expected one of: and, or, xor, add, addf, max, min, umax, umin}}
    %t = atomic_red_view_tko relaxed device %view[%c0], foo, %v : tile<8xf32>, partition_view<tile=(8), tensor_view<64xf32, strides=[1]>>, tile<i32> -> token
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%view: !cuda_tile.partition_view<tile=(8), !cuda_tile.tensor_view<64xf32, strides=[1]>>, %c0: !cuda_tile.tile<i32>, %v: !cuda_tile.tile<8xf32>) {
    // expected-error @below{{custom op 'cuda_tile.atomic_red_view_tko' invalid memory_ordering_semantics: 'bogus'; expected one of: weak, relaxed, acquire, release, acq_rel}}
    %t = atomic_red_view_tko bogus device %view[%c0], addf, %v : tile<8xf32>, partition_view<tile=(8), tensor_view<64xf32, strides=[1]>>, tile<i32> -> token
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%view: !cuda_tile.partition_view<tile=(8), !cuda_tile.tensor_view<64xf32, strides=[1]>>, %c0: !cuda_tile.tile<i32>, %v: !cuda_tile.tile<8xf32>) {
    // expected-error @below{{custom op 'cuda_tile.atomic_red_view_tko' invalid memory_scope: 'planet'; expected one of: tl_blk, device, sys}}
    %t = atomic_red_view_tko relaxed planet %view[%c0], addf, %v : tile<8xf32>, partition_view<tile=(8), tensor_view<64xf32, strides=[1]>>, tile<i32> -> token
  }
}

// -----

// Its scope is optional to the parser, required by the op.
cuda_tile.module @m {
  testing$func @k(%view: !cuda_tile.partition_view<tile=(8), !cuda_tile.tensor_view<64xf32, strides=[1]>>, %c0: !cuda_tile.tile<i32>, %v: !cuda_tile.tile<8xf32>) {
    // expected-error @below{{'cuda_tile.atomic_red_view_tko' op requires attribute 'memory_scope'}}
    %t = atomic_red_view_tko relaxed %view[%c0], addf, %v : tile<8xf32>, partition_view<tile=(8), tensor_view<64xf32, strides=[1]>>, tile<i32> -> token
  }
}

// -----

// A comma after the view's type and no type: the type parser's error, then
// parseIndexTypes' own.
cuda_tile.module @m {
  testing$func @k(%view: !cuda_tile.partition_view<tile=(8), !cuda_tile.tensor_view<64xf32, strides=[1]>>, %c0: !cuda_tile.tile<i32>) {
    // expected-error @below{{custom op 'cuda_tile.load_view_tko' expected valid keyword}}
    // expected-error @below{{custom op 'cuda_tile.load_view_tko' expected index type after comma}}
    %x, %t = load_view_tko weak %view[%c0] : partition_view<tile=(8), tensor_view<64xf32, strides=[1]>>, -> tile<8xf32>, token
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%view: !cuda_tile.partition_view<tile=(8), !cuda_tile.tensor_view<64xf32, strides=[1]>>, %c0: !cuda_tile.tile<i32>, %v: !cuda_tile.tile<8xf32>) {
    // expected-error @below{{custom op 'cuda_tile.store_view_tko' expected valid keyword}}
    // expected-error @below{{custom op 'cuda_tile.store_view_tko' expected index type after comma}}
    %t = store_view_tko weak %v, %view[%c0] : tile<8xf32>, partition_view<tile=(8), tensor_view<64xf32, strides=[1]>>, -> token
  }
}
