// RUN: nanotile-passes %s -p strip-mine | filecheck %s
// strip-mine runs a large loaded-computed-stored or reduced tile as a loop over strips of
// at most 2048 elements, cut along the outermost dimension that leaves strips that small
// and is not contiguous in memory (a reduce: the dimension it reduces). Stores that share
// a computation share its loop; a loop or a reduce along another dimension inside the
// computation runs on each strip.

cuda_tile.module @tests {
  // 128x128 (16384 elements): 8 strips of 16x128. Each access gets a view of 16x128
  // tiles and row index row * 8 + strip; the splat constant is made at the strip's shape.
  // CHECK-LABEL: @scaled_copy
  entry @scaled_copy(%src: tile<ptr<f32>>, %dst: tile<ptr<f32>>, %n: tile<i32>, %row: tile<i32>,
                     %col: tile<i32>) {
    // CHECK-DAG: %[[ZERO:.*]] = constant <i32: 0> : tile<i32>
    // CHECK-DAG: %[[ONE:.*]] = constant <i32: 1> : tile<i32>
    // CHECK-DAG: %[[COUNT:.*]] = constant <i32: 8> : tile<i32>
    // CHECK-DAG: %[[TWO:.*]] = constant <f32: 2.000000e+00> : tile<16x128xf32>
    // CHECK-DAG: %[[FIRST:.*]] = muli %row, %[[COUNT]]
    // CHECK-DAG: %[[IN:.*]] = make_partition_view %a : partition_view<tile=(16x128)
    // CHECK-DAG: %[[OUT:.*]] = make_partition_view %b : partition_view<tile=(16x128)
    // CHECK: for %strip in (%[[ZERO]] to %[[COUNT]], step %[[ONE]])
    // CHECK-NEXT: %[[R:.*]] = addi %[[FIRST]], %strip
    // CHECK-NEXT: %[[X:.*]], %{{.*}} = load_view_tko weak %[[IN]][%[[R]], %col] {{.*}} -> tile<16x128xf32>
    // CHECK-NEXT: %[[Y:.*]] = mulf %[[X]], %[[TWO]]
    // CHECK-NEXT: store_view_tko weak %[[Y]], %[[OUT]][%[[R]], %col]
    // CHECK-NEXT: }
    // CHECK-NEXT: return
    %a = make_tensor_view %src, shape = [%n, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %b = make_tensor_view %dst, shape = [%n, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %pa = make_partition_view %a : partition_view<tile=(128x128), tensor_view<?x?xf32, strides=[?,1]>>
    %pb = make_partition_view %b : partition_view<tile=(128x128), tensor_view<?x?xf32, strides=[?,1]>>
    %x, %t = load_view_tko weak %pa[%row, %col] : partition_view<tile=(128x128), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<128x128xf32>, token
    %two = constant <f32: 2.0> : tile<128x128xf32>
    %y = mulf %x, %two rounding<nearest_even> : tile<128x128xf32>
    %u = store_view_tko weak %y, %pb[%row, %col] : tile<128x128xf32>, partition_view<tile=(128x128), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
    return
  }

  // 4x4096: strips of the outermost dimension would hold 4096 elements, so the second is
  // cut: 8 strips of 4x512. A broadcast of a column (extent 1 along the cut dimension)
  // is made again at the strip's shape.
  // CHECK-LABEL: @wide_rows
  entry @wide_rows(%src: tile<ptr<i32>>, %n: tile<i32>, %i: tile<i32>) {
    // CHECK-DAG: %[[COUNT:.*]] = constant <i32: 8>
    // CHECK-DAG: muli %i, %[[COUNT]]
    // CHECK-DAG: %[[V:.*]] = broadcast %v : tile<4x1xi32> -> tile<4x512xi32>
    // CHECK: for
    // CHECK: load_view_tko weak %{{.*}}[%i, %{{.*}}] {{.*}} -> tile<4x512xi32>
    // CHECK-NEXT: addi %{{.*}}, %[[V]]
    %a = make_tensor_view %src, shape = [%n, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xi32, strides=[?,1]>
    %pa = make_partition_view %a : partition_view<tile=(4x4096), tensor_view<?x?xi32, strides=[?,1]>>
    %x, %t = load_view_tko weak %pa[%i, %i] : partition_view<tile=(4x4096), tensor_view<?x?xi32, strides=[?,1]>>, tile<i32> -> tile<4x4096xi32>, token
    %pc = make_partition_view %a : partition_view<tile=(4x1), tensor_view<?x?xi32, strides=[?,1]>>
    %v, %tv = load_view_tko weak %pc[%i, %n] : partition_view<tile=(4x1), tensor_view<?x?xi32, strides=[?,1]>>, tile<i32> -> tile<4x1xi32>, token
    %w = broadcast %v : tile<4x1xi32> -> tile<4x4096xi32>
    %y = addi %x, %w : tile<4x4096xi32>
    %u = store_view_tko weak %y, %pa[%i, %i] : tile<4x4096xi32>, partition_view<tile=(4x4096), tensor_view<?x?xi32, strides=[?,1]>>, tile<i32> -> token
    return
  }

  // A relaxed atomic reduction of a loaded 128x128 tile (each element's update is atomic
  // by itself, in no order with the others): the same loop, adding a strip at a time.
  // CHECK-LABEL: @atomic_and
  entry @atomic_and(%src: tile<ptr<i64>>, %dst: tile<ptr<i64>>, %n: tile<i32>, %i: tile<i32>) {
    // CHECK: for %strip
    // CHECK: %[[X:.*]], %{{.*}} = load_view_tko weak {{.*}} -> tile<16x128xi64>
    // CHECK-NEXT: atomic_red_view_tko relaxed device %{{.*}}[%{{.*}}, %i], and, %[[X]] : tile<16x128xi64>
    %a = make_tensor_view %src, shape = [%n, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xi64, strides=[?,1]>
    %b = make_tensor_view %dst, shape = [%n, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xi64, strides=[?,1]>
    %pa = make_partition_view %a : partition_view<tile=(128x128), tensor_view<?x?xi64, strides=[?,1]>>
    %pb = make_partition_view %b : partition_view<tile=(128x128), tensor_view<?x?xi64, strides=[?,1]>>
    %x, %t = load_view_tko weak %pa[%i, %i] : partition_view<tile=(128x128), tensor_view<?x?xi64, strides=[?,1]>>, tile<i32> -> tile<128x128xi64>, token
    %u = atomic_red_view_tko relaxed device %pb[%i, %i], and, %x : tile<128x128xi64>, partition_view<tile=(128x128), tensor_view<?x?xi64, strides=[?,1]>>, tile<i32> -> token
    return
  }

  // A reduce along the cut dimension: the loop combines each 16x128 strip into a
  // partial result (starting at the identity) with the reduce's body, element by
  // element; the reduce then reduces the partial result.
  // CHECK-LABEL: @column_max
  entry @column_max(%src: tile<ptr<f32>>, %dst: tile<ptr<f32>>, %n: tile<i32>, %i: tile<i32>) {
    // CHECK-DAG: %[[COUNT:.*]] = constant <i32: 32>
    // CHECK-DAG: %[[FIRST:.*]] = muli %i, %[[COUNT]]
    // CHECK-DAG: %[[IDENTITY:.*]] = constant <f32: 0xFF800000> : tile<16x128xf32>
    // CHECK: %[[PARTIAL:.*]] = for %strip in ({{.*}} to %[[COUNT]], {{.*}} iter_values(%partial = %[[IDENTITY]]) -> (tile<16x128xf32>)
    // CHECK-NEXT: %[[R:.*]] = addi %[[FIRST]], %strip
    // CHECK-NEXT: %[[X:.*]], %{{.*}} = load_view_tko weak %{{.*}}[%[[R]], %i] {{.*}} -> tile<16x128xf32>
    // CHECK-NEXT: %[[A:.*]] = absf %[[X]]
    // CHECK-NEXT: %[[M:.*]] = maxf %partial, %[[A]]
    // CHECK-NEXT: continue %[[M]]
    // CHECK: reduce %[[PARTIAL]] dim=0 {{.*}} : tile<16x128xf32> -> tile<128xf32>
    %a = make_tensor_view %src, shape = [%n, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %b = make_tensor_view %dst, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %pa = make_partition_view %a : partition_view<tile=(512x128), tensor_view<?x?xf32, strides=[?,1]>>
    %pb = make_partition_view %b : partition_view<tile=(128), tensor_view<?xf32, strides=[1]>>
    %x, %t = load_view_tko weak %pa[%i, %i] : partition_view<tile=(512x128), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<512x128xf32>, token
    %y = absf %x : tile<512x128xf32>
    %m = reduce %y dim=0 identities=[0xFF800000 : f32] : tile<512x128xf32> -> tile<128xf32>
    (%l: tile<f32>, %r: tile<f32>) {
      %z = maxf %l, %r : tile<f32>
      yield %z : tile<f32>
    }
    %u = store_view_tko weak %m, %pb[%i] : tile<128xf32>, partition_view<tile=(128), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
    return
  }

  // An argmax of a flattened 64x64 tile: the reshape cuts its operand into the same
  // elements (2 strips of 32x64 rows, 2048 elements each); the iota's strip is an iota
  // plus the strip's first index. Both partial results are carried. (The body picks the
  // first index of equal values, so the order of combining does not change the result.)
  // CHECK-LABEL: @argmax
  entry @argmax(%src: tile<ptr<f32>>, %dst: tile<ptr<i32>>, %n: tile<i32>, %i: tile<i32>) {
    // CHECK-DAG: %[[COUNT:.*]] = constant <i32: 2>
    // CHECK-DAG: %[[LENGTH:.*]] = constant <i32: 2048>
    // CHECK-DAG: make_partition_view %a : partition_view<tile=(32x64)
    // CHECK: %[[P:.*]]:2 = for %strip in ({{.*}} to %[[COUNT]], {{.*}} iter_values(%partial = %{{.*}}, %partial_0 = %{{.*}}) -> (tile<2048xf32>, tile<2048xi32>)
    // CHECK: load_view_tko {{.*}} -> tile<32x64xf32>
    // CHECK-NEXT: %[[FLAT:.*]] = reshape %{{.*}} : tile<32x64xf32> -> tile<2048xf32>
    // CHECK-NEXT: %[[START:.*]] = muli %strip, %[[LENGTH]]
    // CHECK-NEXT: %[[ROW:.*]] = reshape %[[START]] : tile<i32> -> tile<1xi32>
    // CHECK-NEXT: %[[STARTS:.*]] = broadcast %[[ROW]] : tile<1xi32> -> tile<2048xi32>
    // CHECK-NEXT: %[[IOTA:.*]] = iota : tile<2048xi32>
    // CHECK-NEXT: %[[INDEX:.*]] = addi %[[IOTA]], %[[STARTS]]
    // CHECK-NEXT: cmpf greater_than ordered %partial, %[[FLAT]]
    // CHECK-NEXT: cmpf equal ordered %partial, %[[FLAT]]
    // CHECK-NEXT: cmpi less_than %partial_0, %[[INDEX]]
    // CHECK-NEXT: andi
    // CHECK-NEXT: %[[MORE:.*]] = ori
    // CHECK-NEXT: select %[[MORE]], %partial, %[[FLAT]]
    // CHECK-NEXT: select %[[MORE]], %partial_0, %[[INDEX]]
    // CHECK: reduce %[[P]]#0, %[[P]]#1 dim=0 {{.*}} : tile<2048xf32>, tile<2048xi32> -> tile<f32>, tile<i32>
    %a = make_tensor_view %src, shape = [%n, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %b = make_tensor_view %dst, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xi32, strides=[1]>
    %pa = make_partition_view %a : partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[?,1]>>
    %pb = make_partition_view %b : partition_view<tile=(1), tensor_view<?xi32, strides=[1]>>
    %x, %t = load_view_tko weak %pa[%i, %i] : partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<64x64xf32>, token
    %flat = reshape %x : tile<64x64xf32> -> tile<4096xf32>
    %where = iota : tile<4096xi32>
    %m:2 = reduce %flat, %where dim=0 identities=[0xFF800000 : f32, 0 : i32] : tile<4096xf32>, tile<4096xi32> -> tile<f32>, tile<i32>
    (%lv: tile<f32>, %rv: tile<f32>, %li: tile<i32>, %ri: tile<i32>) {
      %greater = cmpf greater_than ordered %lv, %rv : tile<f32> -> tile<i1>
      %equal = cmpf equal ordered %lv, %rv : tile<f32> -> tile<i1>
      %before = cmpi less_than %li, %ri, signed : tile<i32> -> tile<i1>
      %tie = andi %equal, %before : tile<i1>
      %more = ori %greater, %tie : tile<i1>
      %v = select %more, %lv, %rv : tile<i1>, tile<f32>
      %w = select %more, %li, %ri : tile<i1>, tile<i32>
      yield %v, %w : tile<f32>, tile<i32>
    }
    %r = reshape %m#1 : tile<i32> -> tile<1xi32>
    %u = store_view_tko weak %r, %pb[%i] : tile<1xi32>, partition_view<tile=(1), tensor_view<?xi32, strides=[1]>>, tile<i32> -> token
    return
  }

  // layer_norm_bwd_dwdb's shape: a loop carries two 8x1024 sums of loaded tiles, whose
  // columns are then summed and stored, 1024 each. The loop, the reduces and both stores
  // are cut into 4 strips of 256 columns together: the strip loop runs the whole K loop
  // on 8x256 tiles, reduces them to 256 and stores those at column block 4 * j + strip.
  // CHECK-LABEL: @column_sums
  entry @column_sums(%src: tile<ptr<f32>>, %dst: tile<ptr<f32>>, %n: tile<i32>, %j: tile<i32>) {
    // CHECK: %[[FOUR:.*]] = constant <i32: 4>
    // CHECK: %[[FIRST:.*]] = muli %j, %[[FOUR]]
    // CHECK: %[[IN:.*]] = make_partition_view %a : partition_view<tile=(8x256)
    // CHECK: %[[OUT:.*]] = make_partition_view %b : partition_view<tile=(256)
    // CHECK: %[[NFIRST:.*]] = muli %n, %[[FOUR]]
    // CHECK: for %[[S:.*]] in ({{.*}} to %[[FOUR]], step
    // CHECK-NEXT: %[[COL:.*]] = addi %[[FIRST]], %[[S]]
    // CHECK-NEXT: %[[SUMS:.*]]:2 = for %k in {{.*}} -> (tile<8x256xf32>, tile<8x256xf32>)
    // CHECK-NEXT: load_view_tko weak %[[IN]][%k, %[[COL]]] {{.*}} -> tile<8x256xf32>, token
    // CHECK: continue
    // CHECK: reduce %[[SUMS]]#0 dim=0 {{.*}} : tile<8x256xf32> -> tile<256xf32>
    // CHECK: reduce %[[SUMS]]#1 dim=0 {{.*}} : tile<8x256xf32> -> tile<256xf32>
    // CHECK: store_view_tko weak %{{.*}}, %[[OUT]][%[[COL]]]
    // CHECK-NEXT: %[[COL2:.*]] = addi %[[NFIRST]], %[[S]]
    // CHECK-NEXT: store_view_tko weak %{{.*}}, %[[OUT]][%[[COL2]]]
    // CHECK-NOT: 1024
    // CHECK: return
    %a = make_tensor_view %src, shape = [%n, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %b = make_tensor_view %dst, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %pa = make_partition_view %a : partition_view<tile=(8x1024), tensor_view<?x?xf32, strides=[?,1]>>
    %pb = make_partition_view %b : partition_view<tile=(1024), tensor_view<?xf32, strides=[1]>>
    %zero = constant <f32: 0.0> : tile<8x1024xf32>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %c2 = constant <i32: 2> : tile<i32>
    %sums:2 = for %k in (%c0 to %c2, step %c1) : tile<i32> iter_values(%s = %zero, %q = %zero) -> (tile<8x1024xf32>, tile<8x1024xf32>) {
      %x, %t = load_view_tko weak %pa[%k, %j] : partition_view<tile=(8x1024), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<8x1024xf32>, token
      %s1 = addf %s, %x : tile<8x1024xf32>
      %x2 = mulf %x, %x : tile<8x1024xf32>
      %q1 = addf %q, %x2 : tile<8x1024xf32>
      continue %s1, %q1 : tile<8x1024xf32>, tile<8x1024xf32>
    }
    %sum = reduce %sums#0 dim=0 identities=[0.000000e+00 : f32] : tile<8x1024xf32> -> tile<1024xf32>
    (%l: tile<f32>, %r: tile<f32>) {
      %m = addf %l, %r : tile<f32>
      yield %m : tile<f32>
    }
    %squares = reduce %sums#1 dim=0 identities=[0.000000e+00 : f32] : tile<8x1024xf32> -> tile<1024xf32>
    (%l: tile<f32>, %r: tile<f32>) {
      %m = addf %l, %r : tile<f32>
      yield %m : tile<f32>
    }
    %u = store_view_tko weak %sum, %pb[%j] : tile<1024xf32>, partition_view<tile=(1024), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
    %v = store_view_tko weak %squares, %pb[%n] : tile<1024xf32>, partition_view<tile=(1024), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
    return
  }

  // Left as it is: the same loop with a store in its body, which the strips would run
  // once per strip.
  // CHECK-LABEL: @loop_that_stores
  entry @loop_that_stores(%src: tile<ptr<f32>>, %dst: tile<ptr<f32>>, %n: tile<i32>, %j: tile<i32>) {
    // CHECK-COUNT-1: for
    // CHECK-NOT: for
    // CHECK: return
    %a = make_tensor_view %src, shape = [%n, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %b = make_tensor_view %dst, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %pa = make_partition_view %a : partition_view<tile=(8x1024), tensor_view<?x?xf32, strides=[?,1]>>
    %pb = make_partition_view %b : partition_view<tile=(1024), tensor_view<?xf32, strides=[1]>>
    %p1 = make_partition_view %b : partition_view<tile=(1), tensor_view<?xf32, strides=[1]>>
    %zero = constant <f32: 0.0> : tile<8x1024xf32>
    %one = constant <f32: 1.0> : tile<1xf32>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %c2 = constant <i32: 2> : tile<i32>
    %sums = for %k in (%c0 to %c2, step %c1) : tile<i32> iter_values(%s = %zero) -> (tile<8x1024xf32>) {
      %x, %t = load_view_tko weak %pa[%k, %j] : partition_view<tile=(8x1024), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<8x1024xf32>, token
      %s1 = addf %s, %x : tile<8x1024xf32>
      %w = store_view_tko weak %one, %p1[%k] : tile<1xf32>, partition_view<tile=(1), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
      continue %s1 : tile<8x1024xf32>
    }
    %sum = reduce %sums dim=0 identities=[0.000000e+00 : f32] : tile<8x1024xf32> -> tile<1024xf32>
    (%l: tile<f32>, %r: tile<f32>) {
      %m = addf %l, %r : tile<f32>
      yield %m : tile<f32>
    }
    %u = store_view_tko weak %sum, %pb[%j] : tile<1024xf32>, partition_view<tile=(1024), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
    return
  }

  // Left as they are: a tile of 2048 elements (one strip), a loaded tile also used
  // whole (the reduce along the other dimension than the cut one), a store whose token
  // orders a later op, a relaxed load.
  // CHECK-LABEL: @unchanged
  entry @unchanged(%src: tile<ptr<f32>>, %n: tile<i32>, %i: tile<i32>) {
    // CHECK-NOT: for
    // CHECK: return
    %a = make_tensor_view %src, shape = [%n, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %small = make_partition_view %a : partition_view<tile=(16x128), tensor_view<?x?xf32, strides=[?,1]>>
    %x, %t0 = load_view_tko weak %small[%i, %i] : partition_view<tile=(16x128), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<16x128xf32>, token
    %t1 = store_view_tko weak %x, %small[%i, %i] : tile<16x128xf32>, partition_view<tile=(16x128), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
    %big = make_partition_view %a : partition_view<tile=(128x128), tensor_view<?x?xf32, strides=[?,1]>>
    %y, %t2 = load_view_tko weak %big[%i, %i] : partition_view<tile=(128x128), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<128x128xf32>, token
    %t3 = store_view_tko weak %y, %big[%i, %i] : tile<128x128xf32>, partition_view<tile=(128x128), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
    %s = reduce %y dim=1 identities=[0.000000e+00 : f32] : tile<128x128xf32> -> tile<128xf32>
    (%l: tile<f32>, %r: tile<f32>) {
      %m = maxf %l, %r : tile<f32>
      yield %m : tile<f32>
    }
    %z, %t4 = load_view_tko weak %big[%i, %n] : partition_view<tile=(128x128), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<128x128xf32>, token
    %t5 = store_view_tko weak %z, %big[%n, %i] : tile<128x128xf32>, partition_view<tile=(128x128), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
    %w, %t6 = load_view_tko weak %big[%n, %n] token = %t5 : partition_view<tile=(128x128), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<128x128xf32>, token
    %q, %t7 = load_view_tko relaxed device %big[%n, %n] : partition_view<tile=(128x128), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<128x128xf32>, token
    %t8 = store_view_tko weak %q, %big[%i, %n] : tile<128x128xf32>, partition_view<tile=(128x128), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
    return
  }
}
