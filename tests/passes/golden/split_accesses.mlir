// RUN: nanotile-passes %s -p split-accesses | filecheck %s
// split-accesses: a load only taken apart by extract becomes loads of the parts; a
// store of a cat becomes stores of its halves.

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
    // CHECK-NEXT: %[[OUT:.*]] = make_partition_view %b : partition_view<tile=(64x128)
    // CHECK: store_view_tko weak %[[P]], %[[OUT]][%{{.*}}, %j]
    // CHECK: store_view_tko weak %[[Q]], %[[OUT]][%{{.*}}, %j]
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
}
