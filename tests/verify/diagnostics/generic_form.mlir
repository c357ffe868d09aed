// MLIR's generic op form: what its parser checks.

// expected-error @below{{expected 0 operand types but had 1}}
%0 = "test.use"() : (i32) -> i32

// -----

%0 = "test.def"() : () -> i32
// expected-error @below{{expected 2 operand types but had 1}}
"test.use"(%0, %0) : (i32) -> ()
