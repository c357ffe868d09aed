// RUN: not nanotile-passes %s -p check-target-support{gpu=sm_90} 2>&1 | filecheck %s
// check-target-support refuses an element type (or op) the target GPU does not have, as
// tileiras does: sm_90 has no f4E2M1FN (FP4; sm_100 has), so this kernel is refused for
// sm_90 at the first op that uses the type (file:line:col, the source line and a caret),
// and the command fails. For sm_100 it passes unchanged (tests/passes/test_target_support.py).

// CHECK: check_target_support.mlir:14:10: error: 'ftof': element type 'f4E2M1FN' is not supported on sm_90 (only sm_100 has it)
// CHECK-NEXT: %v = ftof %x
// CHECK-NOT: Traceback
cuda_tile.module @tests {
  entry @to_fp4_and_back() {
    %t = make_token : token
    %x = constant <f32: 1.500000e+00> : tile<2xf32>
    %v = ftof %x : tile<2xf32> -> tile<2xf4E2M1FN>
    %y = ftof %v : tile<2xf4E2M1FN> -> tile<2xf32>
    %p = print_tko "%f\n", %y token=%t : tile<2xf32> -> token
    return
  }
}
