// RUN: nanotile-passes %s -p loop-split | filecheck %s
// loop-split cuts a for loop where an if compares the induction variable with a value
// defined outside the loop: the first half runs one branch, the second the other.

cuda_tile.module @tests {
  // iv > x: else branch below the split point x + 1, then branch from there on.
  // CHECK-LABEL: @greater_than
  entry @greater_than(%p: tile<ptr<i32>>, %n: tile<i32>, %x: tile<i32>) {
    // CHECK: %[[ONE:[0-9]+]] = constant <i32: 1>
    // CHECK-NEXT: %[[SPLIT:.*]] = addi %x, %[[ONE]]
    // CHECK-NEXT: %[[END:.*]] = mini %[[SPLIT]], %n signed
    // CHECK-NEXT: %[[START:.*]] = maxi %[[SPLIT]], %c0 signed
    // CHECK-NEXT: %[[FIRST:.*]] = for %i in (%c0 to %[[END]], step %c1) {{.*}} iter_values(%acc = %c0)
    // CHECK-NEXT: %next = addi %acc, %i
    // CHECK-NEXT: continue %next
    // CHECK: %[[SECOND:.*]] = for %i in (%[[START]] to %n, step %c1) {{.*}} iter_values(%acc = %[[FIRST]])
    // CHECK-NEXT: %[[T:.*]] = muli %i, %c3
    // CHECK-NEXT: %next = addi %acc, %[[T]]
    // CHECK-NOT: if
    // CHECK: store_ptr_tko weak %p, %[[SECOND]]
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %c3 = constant <i32: 3> : tile<i32>
    %r = for %i in (%c0 to %n, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
      %big = cmpi greater_than %i, %x, signed : tile<i32> -> tile<i1>
      %v = if %big -> (tile<i32>) {
        %t = muli %i, %c3 : tile<i32>
        yield %t : tile<i32>
      } else {
        yield %i : tile<i32>
      }
      %next = addi %acc, %v : tile<i32>
      continue %next : tile<i32>
    }
    %t = store_ptr_tko weak %p, %r : tile<ptr<i32>>, tile<i32> -> token
    return
  }

  // A step other than 1: the split point is rounded up to lb + k * step.
  // CHECK-LABEL: @step_three
  entry @step_three(%p: tile<ptr<i32>>, %n: tile<i32>, %x: tile<i32>) {
    // CHECK: %[[D:.*]] = subi %x, %c0
    // CHECK-NEXT: %[[K:.*]] = divi %[[D]], %c3 signed rounding<positive_inf>
    // CHECK-NEXT: %[[KS:.*]] = muli %[[K]], %c3
    // CHECK-NEXT: %[[SPLIT:.*]] = addi %c0, %[[KS]]
    // CHECK-NEXT: %[[END:.*]] = mini %[[SPLIT]], %n signed
    // CHECK-NEXT: %[[START:.*]] = maxi %[[SPLIT]], %c0 signed
    // CHECK-NEXT: for %i in (%c0 to %[[END]], step %c3)
    // CHECK-NEXT: muli %i, %c3
    // CHECK: for %i in (%[[START]] to %n, step %c3)
    // CHECK-NEXT: addi %acc, %c3
    // CHECK-NOT: if
    %c0 = constant <i32: 0> : tile<i32>
    %c3 = constant <i32: 3> : tile<i32>
    %r = for %i in (%c0 to %n, step %c3) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
      %small = cmpi less_than %i, %x, signed : tile<i32> -> tile<i1>
      %v = if %small -> (tile<i32>) {
        %t = muli %i, %c3 : tile<i32>
        yield %t : tile<i32>
      } else {
        yield %c3 : tile<i32>
      }
      %next = addi %acc, %v : tile<i32>
      continue %next : tile<i32>
    }
    %t = store_ptr_tko weak %p, %r : tile<ptr<i32>>, tile<i32> -> token
    return
  }

  // Equality splits nothing, nor does a bound computed in the loop.
  // CHECK-LABEL: @unchanged
  entry @unchanged(%p: tile<ptr<i32>>, %n: tile<i32>, %x: tile<i32>) {
    // CHECK-COUNT-2: for
    // CHECK-NOT: for
    // CHECK-NOT: mini
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %r = for %i in (%c0 to %n, step %c1) : tile<i32> iter_values(%acc = %c0) -> (tile<i32>) {
      %same = cmpi equal %i, %x, signed : tile<i32> -> tile<i1>
      %v = if %same -> (tile<i32>) {
        yield %c1 : tile<i32>
      } else {
        yield %c0 : tile<i32>
      }
      %next = addi %acc, %v : tile<i32>
      continue %next : tile<i32>
    }
    %s = for %i in (%c0 to %n, step %c1) : tile<i32> iter_values(%acc = %r) -> (tile<i32>) {
      %twice = addi %acc, %acc : tile<i32>
      %below = cmpi less_than %i, %twice, signed : tile<i32> -> tile<i1>
      %v = if %below -> (tile<i32>) {
        yield %c1 : tile<i32>
      } else {
        yield %c0 : tile<i32>
      }
      %next = addi %acc, %v : tile<i32>
      continue %next : tile<i32>
    }
    %t = store_ptr_tko weak %p, %s : tile<ptr<i32>>, tile<i32> -> token
    return
  }
}
