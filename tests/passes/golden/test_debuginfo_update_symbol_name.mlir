// RUN: nanotile-passes %s -p 'test-debuginfo-update-symbol-name{symbol-to-rename=tests::table new-name=lookup_table update-uses=true},test-debuginfo-update-symbol-name{symbol-to-rename=tests::helper new-name=_Z6helperv}' --debuginfo | filecheck %s
// test-debuginfo-update-symbol-name (cuda-tile-opt's test pass) renames a symbol: a global
// and its get_global uses (update-uses=true); a function, whose subprogram takes the new
// linkage name everywhere it appears, in the lexical block nested in it too.

#file = #cuda_tile.di_file<"k.py" in "/src/">
#unit = #cuda_tile.di_compile_unit<file = #file>
#sp = #cuda_tile.di_subprogram<file = #file, line = 3, name = "helper", linkageName = "helper", compileUnit = #unit, scopeLine = 3>
#block = #cuda_tile.di_lexical_block<scope = #sp, file = #file, line = 4, column = 1>
#at = loc("/src/k.py":3:1)
#inner = loc("/src/k.py":4:5)

// CHECK: global {{.*}}@lookup_table
// CHECK: get_global @lookup_table
// CHECK: testing$func @_Z6helperv()
// CHECK-NOT: linkageName = "helper"
// CHECK: di_subprogram<{{.*}}name = "helper", linkageName = "_Z6helperv"
// CHECK-NOT: linkageName = "helper"
cuda_tile.module @tests {
  global @table alignment = 4 <i32: [1, 2, 3, 4]> : tile<4xi32>
  entry @reads(%p: tile<ptr<i32>>) {
    %g = get_global @table : tile<ptr<i32>>
    %v, %t = load_ptr_tko weak %g : tile<ptr<i32>> -> tile<i32>, token
    %s = store_ptr_tko weak %p, %v : tile<ptr<i32>>, tile<i32> -> token
    return
  }
  testing$func @helper() -> tile<i32> {
    %c = constant <i32: 1> : tile<i32> loc(#cuda_tile.di_loc<#inner in #block>)
    return %c : tile<i32>
  } loc(#cuda_tile.di_loc<#at in #sp>)
}
