// RUN: attn-opt %s --attn-block-sparse --attn-flash --attn-lower-pointwise --split-input-file --verify-diagnostics | FileCheck %s

/// A boolean mask tensor in the flash kernel: read as the bytes it is
/// stored in (its buffer reinterpreted as i8 through the memref descriptor,
/// no widened copy; vectors of i1 would be bit-packed). The mask has no
/// batch or head dims, so its blocks are classified once per call, in
/// parallel, before the tiles (one vector per query row along the keys,
/// OR / AND reduced, into a table of kinds: bit 0 some key allowed, bit 1
/// every key); each tile reads its blocks' kinds from the table, and masked
/// blocks read the mask along the queries.
// CHECK-LABEL: func.func @bool_mask
// CHECK-NOT: arith.extui
// CHECK: %[[BITS:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<64x64xi1> to memref<64x64xi1>
// CHECK: %[[RAW:.*]] = builtin.unrealized_conversion_cast %[[BITS]] : memref<64x64xi1> to !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
// CHECK: builtin.unrealized_conversion_cast %[[RAW]] : !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)> to memref<64x64xi8>
// CHECK: %[[KINDS:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?xi8>
// CHECK: scf.parallel (%[[QB:.*]], %[[KB:.*]]) =
// CHECK: vector.load %{{.*}} : memref<64x64xi8>, vector<64xi8>
// CHECK: vector.reduction <or>
// CHECK: vector.reduction <and>
// CHECK: memref.store %{{.*}}, %[[KINDS]][%[[QB]], %[[KB]]] : memref<?x?xi8>
// CHECK: scf.parallel
// CHECK-NOT: vector.reduction <or>
// CHECK: memref.load %[[KINDS]][%{{.*}}, %{{.*}}] : memref<?x?xi8>
// CHECK: vector.transfer_read %{{.*}} : memref<64x64xi8>, vector<16xi8>
// CHECK-NOT: attn.attention
func.func @bool_mask(%q: tensor<1x2x64x16xf32>, %m: tensor<64x64xi1>) -> tensor<1x2x64x16xf32> {
  // expected-remark @+1 {{attn-flash: tiles of 64 queries x 64 keys, 16 lanes; visiting 2 of 2 key blocks (2 full); the blocks of the mask tensor classified at run time (empty: skipped, wholly allowed: unmasked)}}
  %0 = attn.attention %q, %q, %q mask(%m : tensor<64x64xi1>) {normalizer = #attn.softmax}
      : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return %0 : tensor<1x2x64x16xf32>
}

// -----

/// An additive mask under a window: attn-block-sparse gives the kernel the
/// pattern's layout but leaves no layout on an op (it would not describe
/// the mask); the scores add the mask's entries (f32). A mask per head:
/// each tile classifies its blocks as it visits them (no table).
// CHECK-LABEL: func.func @additive_window
// CHECK-NOT: memref<?x?xi8>
// CHECK: scf.parallel
// CHECK: vector.reduction <or>
// CHECK: vector.transfer_read %{{.*}} : memref<1x2x256x256xf32>, vector<16xf32>
// CHECK: arith.cmpf ogt
// CHECK-NOT: attn.attention
func.func @additive_window(%q: tensor<1x2x256x16xf32>, %m: tensor<1x2x256x256xf32>) -> tensor<1x2x256x16xf32> {
  // expected-remark @+1 {{attn-block-sparse: tiles of 64 queries x 64 keys, 16 lanes; visiting 20 of 32 key blocks (0 full); the blocks of the mask tensor classified at run time}}
  %0 = attn.attention %q, %q, %q mask(%m : tensor<1x2x256x256xf32>) {normalizer = #attn.softmax, pattern = #attn.window<before = 10, after = 10>}
      : tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32> -> tensor<1x2x256x16xf32>
  return %0 : tensor<1x2x256x16xf32>
}

// -----

/// Pointwise attention with a dynamic mask: blocks classified at run time
/// from the lengths and from the mask.
// CHECK-LABEL: func.func @pointwise_dynamic
// CHECK: vector.reduction <or>
// CHECK-NOT: attn.attention
func.func @pointwise_dynamic(%q: tensor<1x2x?x16xf32>, %m: tensor<?x?xi1>) -> tensor<1x2x?x16xf32> {
  // expected-remark @+1 {{attn-lower-pointwise: tiles of 64 queries x 64 keys, 16 lanes; key blocks classified at run time (lengths known at run time); the blocks of the mask tensor classified at run time}}
  %0 = attn.attention %q, %q, %q mask(%m : tensor<?x?xi1>) {normalizer = #attn.pointwise<relu>}
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  return %0 : tensor<1x2x?x16xf32>
}
