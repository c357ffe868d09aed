// reduce and scan: what their parser and the ODS constraints say before their verifier.

// `() {}`: no block arguments, no op: a region without a block.
cuda_tile.module @m {
  testing$func @k(%x: !cuda_tile.tile<4xi32>) {
    // expected-error @below{{'cuda_tile.scan' op region #0 ('body') failed to verify constraint: region with 1 blocks}}
    %0 = scan %x dim=0 reverse=false identities=[0 : i32] : tile<4xi32> -> tile<4xi32>
    () {}
  }
}

// -----

// Operands and their types are matched once the op is read.
cuda_tile.module @m {
  testing$func @k(%x: !cuda_tile.tile<4xi32>) {
    // expected-error @below{{custom op 'cuda_tile.scan' number of operands and types do not match: got 0 operands and 1 types}}
    %0 = scan dim=0 reverse=false identities=[0 : i32] : tile<4xi32> -> tile<4xi32>
    (%a: tile<i32>, %b: tile<i32>) {
      yield %a : tile<i32>
    }
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%x: !cuda_tile.tile<4xi32>) {
    // expected-error @below{{custom op 'cuda_tile.reduce' number of operands and types do not match: got 2 operands and 1 types}}
    %0 = reduce %x, %x dim=0 identities=[0 : i32] : tile<4xi32> -> tile<i32>
    (%a: tile<i32>, %b: tile<i32>) {
      yield %a : tile<i32>
    }
  }
}

// -----

// `dim` is confined to non-negative values: an attribute constraint, checked before the
// verifier compares it with the rank.
cuda_tile.module @m {
  testing$func @k(%x: !cuda_tile.tile<4xi32>) {
    // expected-error @below{{'cuda_tile.reduce' op attribute 'dim' failed to satisfy constraint: 32-bit signless integer attribute whose value is non-negative}}
    %0 = reduce %x dim=-1 identities=[0 : i32] : tile<4xi32> -> tile<i32>
    (%a: tile<i32>, %b: tile<i32>) {
      yield %a : tile<i32>
    }
  }
}

// -----

// The result types inferred from the operands: MLIR says so in two errors.
cuda_tile.module @m {
  testing$func @k(%x: !cuda_tile.tile<4x8xi32>) {
    // expected-error @below{{'cuda_tile.reduce' op inferred type(s) '!cuda_tile.tile<8xi32>' are incompatible with return type(s) of operation '!cuda_tile.tile<4xi32>'}}
    // expected-error @below{{'cuda_tile.reduce' op failed to infer returned types}}
    %0 = reduce %x dim=0 identities=[0 : i32] : tile<4x8xi32> -> tile<4xi32>
    (%a: tile<i32>, %b: tile<i32>) {
      yield %a : tile<i32>
    }
  }
}

// -----

// yield takes any type: a token yielded for a tile operand.
cuda_tile.module @m {
  testing$func @k(%x: !cuda_tile.tile<4xi32>) {
    // expected-error @below{{'cuda_tile.reduce' op expected TileType for operand and terminator types but got: '!cuda_tile.tile<4xi32>' and '!cuda_tile.token'}}
    %0 = reduce %x dim=0 identities=[0 : i32] : tile<4xi32> -> tile<i32>
    (%a: tile<i32>, %b: tile<i32>) {
      %t = make_token : token
      yield %t : token
    }
  }
}
