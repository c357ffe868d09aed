// RUN: nanotile-passes %s -p synthesize-debug-info-scopes --debuginfo | filecheck %s
// synthesize-debug-info-scopes puts each function in a di_subprogram of a compile unit
// for the module's file; every op gets a di_loc in it, at its own file position (a call
// site's caller, a fused location's first) or, for an op without one, at the function's.
// A function already in a scope keeps its locations.

// CHECK-LABEL: entry @scale
// CHECK: %[[X:.*]] = mulf %{{.*}} loc(#[[LOC_MUL:loc[0-9]*]])
// CHECK: store_ptr_tko {{.*}} loc(#[[LOC_FN:loc[0-9]*]])
// CHECK: return loc(#[[LOC_RET:loc[0-9]*]])
// CHECK: } loc(#[[LOC_FN]])
// CHECK-LABEL: entry @scoped
// CHECK: return loc(#[[LOC_UNKNOWN:loc[0-9]*]])
// CHECK: } loc(#[[LOC_OLD:loc[0-9]*]])
// CHECK-DAG: #[[KERNELS:di_file[0-9]*]] = #cuda_tile.di_file<"kernels.py" in "/src/app">
// CHECK-DAG: #[[UNIT_FILE:di_file[0-9]*]] = #cuda_tile.di_file<"unit.py" in "/src">
// CHECK-DAG: #[[UNIT:di_compile_unit[0-9]*]] = #cuda_tile.di_compile_unit<file = #[[UNIT_FILE]]>
// CHECK-DAG: #[[SCALE:di_subprogram[0-9]*]] = #cuda_tile.di_subprogram<file = #[[KERNELS]], line = 20, name = "scale", linkageName = "scale", compileUnit = #[[UNIT]], scopeLine = 20>
// CHECK-DAG: #[[MUL_FILE:loc[0-9]*]] = loc("/src/app/kernels.py":21:3)
// CHECK-DAG: #[[RET_FILE:loc[0-9]*]] = loc("/src/app/kernels.py":23:3)
// CHECK-DAG: #[[FN_FILE:loc[0-9]*]] = loc("/src/app/kernels.py":20:1)
// CHECK-DAG: #[[LOC_MUL]] = #cuda_tile.di_loc<#[[MUL_FILE]] in #[[SCALE]]>
// CHECK-DAG: #[[LOC_FN]] = #cuda_tile.di_loc<#[[FN_FILE]] in #[[SCALE]]>
// CHECK-DAG: #[[LOC_RET]] = #cuda_tile.di_loc<#[[RET_FILE]] in #[[SCALE]]>
// CHECK-DAG: #[[LOC_UNKNOWN]] = loc(unknown)
// CHECK-DAG: #[[LOC_OLD]] = #cuda_tile.di_loc<{{.*}} in #{{di_subprogram[0-9]*}}>

#old_file = #cuda_tile.di_file<"old.py" in "">
#old_unit = #cuda_tile.di_compile_unit<file = #old_file>
#old = #cuda_tile.di_subprogram<file = #old_file, line = 3, name = "scoped", linkageName = "scoped", compileUnit = #old_unit>

cuda_tile.module @tests {
  entry @scale(%p: tile<ptr<f32>>, %x: tile<f32>) {
    %y = mulf %x, %x rounding<nearest_even> : tile<f32> loc(callsite("mul"("/src/app/kernels.py":22:7) at "/src/app/kernels.py":21:3))
    %t = store_ptr_tko weak %p, %y : tile<ptr<f32>>, tile<f32> -> token
    return loc(fused[unknown, "/src/app/kernels.py":23:3])
  } loc("scale"("/src/app/kernels.py":20:1))

  entry @scoped() {
    return loc(unknown)
  } loc(#cuda_tile.di_loc<loc("old.py":3:1) in #old>)
} loc("/src/unit.py":1:1)
