// RUN: nanotile-passes %s -p split-accesses | filecheck %s
// split-accesses: a load only taken apart by extract becomes loads of the parts; a
// store of a cat becomes stores of its halves; a store of an insert, stores of the part
// and of the tile around it.

cuda_tile.module @tests {
  // extract_2d's shape: the two 64x128 halves of a loaded 128x128 tile, computed apart and
  // put together again by cat, then stored. Each half is loaded and stored by itself,
  // through views of 64x128 tiles, at row block 2 * i (+ 1).
  // CHECK-LABEL: @halves
  entry @halves(%src: tile<ptr<f32>>, %dst: tile<ptr<f32>>, %n: tile<i32>, %i: tile<i32>,
                %j: tile<i32>) {
    // CHECK: %[[TWO:.*]] = constant <i32: 2>
    // CHECK-NEXT: %[[TOP:.*]] = muli %i, %[[TWO]]
    // CHECK-NEXT: %[[IN:.*]] = make_partition_view %a : partition_view<tile=(64x128)
    // CHECK-NEXT: %[[X:.*]], %{{.*}} = load_view_tko weak %[[IN]][%[[TOP]], %j] {{.*}} -> tile<64x128xf32>, token
    // CHECK: %[[BOTTOM:.*]] = addi %{{.*}}, %c1
    // CHECK: %[[Y:.*]], %{{.*}} = load_view_tko weak %{{.*}}[%[[BOTTOM]], %j] {{.*}} -> tile<64x128xf32>, token
    // CHECK: %[[P:.*]] = addf %[[X]], %[[X]]
    // CHECK-NEXT: %[[Q:.*]] = negf %[[Y]]
    // CHECK: %[[OUT:.*]] = make_partition_view %b : partition_view<tile=(64x128)
    // CHECK-NEXT: store_view_tko weak %[[P]], %[[OUT]][%{{.*}}, %j]
    // CHECK: %[[OUT2:.*]] = make_partition_view %b : partition_view<tile=(64x128)
    // CHECK-NEXT: store_view_tko weak %[[Q]], %[[OUT2]][%{{.*}}, %j]
    // CHECK-NOT: extract
    // CHECK-NOT: cat
    // CHECK: return
    %a = make_tensor_view %src, shape = [%n, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %b = make_tensor_view %dst, shape = [%n, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %pa = make_partition_view %a : partition_view<tile=(128x128), tensor_view<?x?xf32, strides=[?,1]>>
    %pb = make_partition_view %b : partition_view<tile=(128x128), tensor_view<?x?xf32, strides=[?,1]>>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %x, %t = load_view_tko weak %pa[%i, %j] : partition_view<tile=(128x128), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<128x128xf32>, token
    %top = extract %x[%c0, %c0] : tile<128x128xf32> -> tile<64x128xf32>
    %bottom = extract %x[%c1, %c0] : tile<128x128xf32> -> tile<64x128xf32>
    %p = addf %top, %top : tile<64x128xf32>
    %q = negf %bottom : tile<64x128xf32>
    %y = cat %p, %q dim = 0 : tile<64x128xf32>, tile<64x128xf32> -> tile<128x128xf32>
    %u = store_view_tko weak %y, %pb[%i, %j] : tile<128x128xf32>, partition_view<tile=(128x128), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
    return
  }

  // A cat of cats along the columns: four stores of 8x4 parts, at column blocks
  // 4 * j, 4 * j + 1, 4 * j + 2, 4 * j + 3 (two levels of 2 * index + half).
  // CHECK-LABEL: @quarters
  entry @quarters(%dst: tile<ptr<i32>>, %n: tile<i32>, %j: tile<i32>) {
    // CHECK-COUNT-4: store_view_tko weak {{.*}} : tile<8x4xi32>, partition_view<tile=(8x4)
    // CHECK-NOT: store_view_tko
    // CHECK-NOT: cat
    %b = make_tensor_view %dst, shape = [%n, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xi32, strides=[?,1]>
    %pb = make_partition_view %b : partition_view<tile=(8x16), tensor_view<?x?xi32, strides=[?,1]>>
    %v0 = constant <i32: 0> : tile<8x4xi32>
    %v1 = constant <i32: 1> : tile<8x4xi32>
    %v2 = constant <i32: 2> : tile<8x4xi32>
    %v3 = constant <i32: 3> : tile<8x4xi32>
    %l = cat %v0, %v1 dim = 1 : tile<8x4xi32>, tile<8x4xi32> -> tile<8x8xi32>
    %r = cat %v2, %v3 dim = 1 : tile<8x4xi32>, tile<8x4xi32> -> tile<8x8xi32>
    %y = cat %l, %r dim = 1 : tile<8x8xi32>, tile<8x8xi32> -> tile<8x16xi32>
    %c0 = constant <i32: 0> : tile<i32>
    %u = store_view_tko weak %y, %pb[%c0, %j] : tile<8x16xi32>, partition_view<tile=(8x16), tensor_view<?x?xi32, strides=[?,1]>>, tile<i32> -> token
    return
  }

  // Left as they are: a loaded tile also used whole (the addf), a cat whose store's
  // token orders a later store.
  // CHECK-LABEL: @unchanged
  entry @unchanged(%src: tile<ptr<f32>>, %n: tile<i32>, %i: tile<i32>) {
    // CHECK-COUNT-2: extract
    // CHECK: cat
    // CHECK-COUNT-2: store_view_tko weak {{.*}} : tile<64x64xf32>, partition_view<tile=(64x64)
    %a = make_tensor_view %src, shape = [%n, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %pa = make_partition_view %a : partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[?,1]>>
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %x, %t = load_view_tko weak %pa[%i, %i] : partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<64x64xf32>, token
    %left = extract %x[%c0, %c0] : tile<64x64xf32> -> tile<64x32xf32>
    %right = extract %x[%c0, %c1] : tile<64x64xf32> -> tile<64x32xf32>
    %y = cat %right, %left dim = 1 : tile<64x32xf32>, tile<64x32xf32> -> tile<64x64xf32>
    %z = addf %x, %y : tile<64x64xf32>
    %u = store_view_tko weak %y, %pa[%c0, %c0] : tile<64x64xf32>, partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
    %w = store_view_tko weak %z, %pa[%i, %i] token = %u : tile<64x64xf32>, partition_view<tile=(64x64), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
    return
  }

  // A store of an insert: the inserted 4x8 part at block (2, 1) of a 16x16 tile, and the
  // tile around it in aligned pieces: rows 12-15 (4x16 block 3), rows 0-7 (8x16 block 0),
  // then within the part's rows, columns 0-7 (4x8 block (2, 0)). The load of the tile,
  // now only taken apart by extracts, becomes loads of the same pieces.
  // CHECK-LABEL: @around
  entry @around(%src: tile<ptr<f32>>, %dst: tile<ptr<f32>>, %n: tile<i32>, %i: tile<i32>,
                %j: tile<i32>) {
    // CHECK: %[[PART:.*]], %{{.*}} = load_view_tko weak {{.*}} -> tile<4x8xf32>, token
    // CHECK: %[[NEG:.*]] = negf %[[PART]]
    // CHECK: %[[ROWS:.*]], %{{.*}} = load_view_tko weak {{.*}} -> tile<4x16xf32>, token
    // CHECK: %[[FOUR:.*]] = constant <i32: 4>
    // CHECK-NEXT: %[[I4:.*]] = muli %i, %[[FOUR]]
    // CHECK-NEXT: %[[THREE:.*]] = constant <i32: 3>
    // CHECK-NEXT: %[[R:.*]] = addi %[[I4]], %[[THREE]]
    // CHECK-NEXT: %[[V:.*]] = make_partition_view %b : partition_view<tile=(4x16)
    // CHECK-NEXT: store_view_tko weak %[[ROWS]], %[[V]][%[[R]], %j]
    // CHECK: %[[TOP:.*]], %{{.*}} = load_view_tko weak {{.*}} -> tile<8x16xf32>, token
    // CHECK: %[[TWO:.*]] = constant <i32: 2>
    // CHECK-NEXT: %[[I2:.*]] = muli %i, %[[TWO]]
    // CHECK-NEXT: %[[W:.*]] = make_partition_view %b : partition_view<tile=(8x16)
    // CHECK-NEXT: store_view_tko weak %[[TOP]], %[[W]][%[[I2]], %j]
    // CHECK: %[[LEFT:.*]], %{{.*}} = load_view_tko weak {{.*}} -> tile<4x8xf32>, token
    // CHECK: %[[J2:.*]] = muli %j,
    // CHECK-NEXT: make_partition_view %b : partition_view<tile=(4x8)
    // CHECK-NEXT: store_view_tko weak %[[LEFT]], %{{.*}}[%{{.*}}, %[[J2]]]
    // CHECK: muli %j,
    // CHECK-NEXT: constant <i32: 1>
    // CHECK-NEXT: %[[J21:.*]] = addi
    // CHECK-NEXT: make_partition_view %b : partition_view<tile=(4x8)
    // CHECK-NEXT: store_view_tko weak %[[NEG]], %{{.*}}[%{{.*}}, %[[J21]]]
    // CHECK-NOT: store_view_tko
    // CHECK-NOT: insert
    // CHECK-NOT: extract
    // CHECK: return
    %a = make_tensor_view %src, shape = [%n, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %b = make_tensor_view %dst, shape = [%n, %n], strides = [%n, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
    %pa = make_partition_view %a : partition_view<tile=(16x16), tensor_view<?x?xf32, strides=[?,1]>>
    %pb = make_partition_view %b : partition_view<tile=(16x16), tensor_view<?x?xf32, strides=[?,1]>>
    %c1 = constant <i32: 1> : tile<i32>
    %c2 = constant <i32: 2> : tile<i32>
    %x, %t = load_view_tko weak %pa[%i, %j] : partition_view<tile=(16x16), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> tile<16x16xf32>, token
    %part = extract %x[%c2, %c1] : tile<16x16xf32> -> tile<4x8xf32>
    %neg = negf %part : tile<4x8xf32>
    %y = insert %neg, %x[%c2, %c1] : tile<4x8xf32>, tile<16x16xf32>
    %u = store_view_tko weak %y, %pb[%i, %j] : tile<16x16xf32>, partition_view<tile=(16x16), tensor_view<?x?xf32, strides=[?,1]>>, tile<i32> -> token
    return
  }

  // Left as it is: an insert at an index the pass cannot read (an argument).
  // CHECK-LABEL: @dynamic_insert
  entry @dynamic_insert(%dst: tile<ptr<f32>>, %n: tile<i32>, %k: tile<i32>) {
    // CHECK: insert
    // CHECK-COUNT-1: store_view_tko
    // CHECK-NOT: store_view_tko
    %b = make_tensor_view %dst, shape = [%n], strides = [1] : tile<i32> -> tensor_view<?xf32, strides=[1]>
    %pb = make_partition_view %b : partition_view<tile=(64), tensor_view<?xf32, strides=[1]>>
    %c0 = constant <i32: 0> : tile<i32>
    %whole = constant <f32: 1.0> : tile<64xf32>
    %part = constant <f32: 2.0> : tile<16xf32>
    %y = insert %part, %whole[%k] : tile<16xf32>, tile<64xf32>
    %u = store_view_tko weak %y, %pb[%c0] : tile<64xf32>, partition_view<tile=(64), tensor_view<?xf32, strides=[1]>>, tile<i32> -> token
    return
  }
}
