// assume's predicate as cuda-tile's parseAssumePredicate reads it: an attribute first
// (one that is not a predicate is refused), else a keyword naming the predicate.

cuda_tile.module @m {
  testing$func @k(%x: !cuda_tile.tile<4xi32>) {
    // expected-error @below{{custom op 'cuda_tile.assume' unknown assume predicate attribute: foo (expected 'div_by', 'same_elements', or 'bounded')}}
    %0 = assume foo<4>, %x : tile<4xi32>
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%x: !cuda_tile.tile<4xi32>) {
    // expected-error @below{{custom op 'cuda_tile.assume' expected assume predicate attribute}}
    %0 = assume 42, %x : tile<4xi32>
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%x: !cuda_tile.tile<4xi32>) {
    // expected-error @below{{custom op 'cuda_tile.assume' expected assume predicate attribute}}
    %0 = assume "div_by", %x : tile<4xi32>
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%x: !cuda_tile.tile<4xi32>) {
    // expected-error @below{{custom op 'cuda_tile.assume' expected assume predicate attribute}}
    %0 = assume true, %x : tile<4xi32>
  }
}

// -----

// Neither an attribute nor a keyword: both of parseAssumePredicate's errors.
cuda_tile.module @m {
  testing$func @k(%x: !cuda_tile.tile<4xi32>) {
    // expected-error @below{{custom op 'cuda_tile.assume' expected valid keyword}}
    // expected-error @below{{custom op 'cuda_tile.assume' expected attribute name}}
    %0 = assume %x, %x : tile<4xi32>
  }
}

// -----

// DivByAttr::parse: the integer parser's error, then the parameter's.
cuda_tile.module @m {
  testing$func @k(%x: !cuda_tile.tile<4xi32>) {
    // expected-error @below{{expected integer value}}
    // expected-error @below{{failed to parse parameter 'divisor' which is expected to be an integer}}
    %0 = assume div_by<x>, %x : tile<4xi32>
  }
}

// -----

cuda_tile.module @m {
  testing$func @k(%x: !cuda_tile.tile<4xi32>) {
    // expected-error @below{{expected integer value}}
    // expected-error @below{{failed to parse parameter 'divisor' which is expected to be an integer}}
    %0 = assume #cuda_tile.div_by<x>, %x : tile<4xi32>
  }
}
