// RUN: attn-opt %s --attn-flash --cse --split-input-file --verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --attn-flash="vector-width=8" --cse --split-input-file 2>/dev/null | FileCheck %s --check-prefix=AVX2

/// The target model comes from the options, never from the host: without
/// them the kernel is the one of the documented default target (AVX-512,
/// 16 lanes, 32 registers) on every machine, so these two outputs are the
/// same text whatever CPU runs the test.
// RUN: attn-opt %s --attn-flash --split-input-file 2>/dev/null > %t.default
// RUN: attn-opt %s --attn-flash="vector-width=16 vector-registers=32" --split-input-file 2>/dev/null > %t.explicit
// RUN: diff %t.default %t.explicit

/// Causal softmax, L = 80 (a ragged last tile), GQA (2 query heads on one
/// key/value head): the online softmax carries the running max m and sum l
/// of each of the 4 query vectors through the key blocks of the layout.
// CHECK-LABEL: func @causal
// CHECK-NOT: 80x80
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<1x2x80x8xf32>
// CHECK: scf.parallel (%[[B:.+]], %[[H:.+]], %[[T:.+]]) =
/// Zigzag tile order, the key/value head of the query head.
// CHECK:   arith.divui %[[T]], %c2 : index
// CHECK:   %[[KVHEAD:.+]] = arith.divui %[[H]], %c2 : index
// CHECK:   %[[QT:.+]] = memref.alloc() : memref<16x64xf32>
// CHECK:   %[[ST:.+]] = memref.alloc() : memref<64x64xf32>
// CHECK:   %[[OT:.+]] = memref.alloc() : memref<8x64xf32>
/// The query tile, with the scale 1/sqrt(16) folded in.
// CHECK:   arith.constant 2.500000e-01 : f32
/// Full blocks first (no mask): the block's scores and their maximum.
// CHECK:   scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK:     scf.for {{.*}} step %c4
// CHECK:       memref.load %{{.*}}[%[[B]], %[[KVHEAD]], %{{.*}}, %{{.*}}] : memref<1x1x80x16xf32>
// CHECK:       vector.fma
// CHECK-NOT:   arith.cmpi
// CHECK:       %[[GT:.+]] = arith.cmpf ogt, %[[SC:.+]], %[[MCUR:.+]] : vector<16xf32>
// CHECK:       arith.select %[[GT]], %[[SC]], %[[MCUR]] : vector<16xi1>, vector<16xf32>
// CHECK:       scf.yield
/// The online-softmax step: the new maximum, shifted by 0 while no key is
/// allowed (-inf), alpha = exp(m_old - shift).
// CHECK:     %[[M:.+]] = arith.maximumf %[[MOLD:.+]], %{{.*}}#0 : vector<16xf32>
// CHECK:     %[[NONE:.+]] = arith.cmpf oeq, %[[M]], %[[NEGINF:.+]] : vector<16xf32>
// CHECK:     %[[SHIFT:.+]] = arith.select %[[NONE]], %{{.*}}, %[[M]]
// CHECK:     %[[DIFF:.+]] = arith.subf %[[MOLD]], %[[SHIFT]] : vector<16xf32>
// CHECK:     %[[ALPHA:.+]] = math.exp %[[DIFF]] {attn.flush_below = -6.400000e+01 : f32} : vector<16xf32>
/// P = exp(S - shift), 0 for masked (-inf) scores (a NaN score is kept:
/// une), summed into l.
// CHECK:     scf.for
// CHECK:       %[[S:.+]] = vector.load %[[ST]]
// CHECK:       %[[KEPT:.+]] = arith.cmpf une, %[[S]], %[[NEGINF]]
// CHECK:       %[[E:.+]] = math.exp {{.*}} {attn.flush_below = -6.400000e+01 : f32}
// CHECK:       %[[P:.+]] = arith.select %[[KEPT]], %[[E]]
// CHECK:       vector.store %[[P]], %[[ST]]
/// l = l * alpha + sum(P); O^T = O^T * alpha + V^T P.
// CHECK:     arith.mulf %{{.*}}, %[[ALPHA]] : vector<16xf32>
// CHECK:     scf.for
// CHECK:       %[[O:.+]] = vector.load %[[OT]]
// CHECK:       arith.mulf %[[O]], %[[ALPHA]] : vector<16xf32>
/// Then the partial blocks: the same with the causal mask.
// CHECK:   scf.for
// CHECK:       arith.cmpi sle, %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK:       arith.select %{{.*}}, %{{.*}}, %[[NEGINF]] : vector<16xi1>, vector<16xf32>
/// The epilogue: rows past L dropped, O / l with 0 for rows that saw no key.
// CHECK:   scf.if
// CHECK:   %[[L:.+]] = memref.load %{{.*}}[%{{.*}}] : memref<64xf32>
// CHECK:   %[[POS:.+]] = arith.cmpf ogt, %[[L]], %{{.*}} : f32
// CHECK:   %[[INV:.+]] = arith.divf %{{.*}}, %[[L]] : f32
// CHECK:   arith.select %[[POS]], %[[INV]], %{{.*}} : f32
// CHECK:   memref.store %{{.*}}, %[[OUT]]
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
/// With AVX2's 8 lanes and 16 registers: 2 query vectors (16 rows) per tile.
// AVX2-LABEL: func @causal
// AVX2: memref.alloc() : memref<16x16xf32>
// AVX2: memref.alloc() : memref<128x16xf32>
// AVX2: vector<8xf32>
func.func @causal(%query: tensor<1x2x80x16xf32>, %key: tensor<1x1x80x16xf32>,
                  %value: tensor<1x1x80x8xf32>) -> tensor<1x2x80x8xf32> {
  // expected-remark @+1 {{attn-flash: tiles of 64 queries x 64 keys, 16 lanes; visiting 6 of 8 key blocks (2 full)}}
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x2x80x16xf32>, tensor<1x1x80x16xf32>, tensor<1x1x80x8xf32> -> tensor<1x2x80x8xf32>
  return %0 : tensor<1x2x80x8xf32>
}

// -----

/// An op with a layout (from attn-block-sparse) is lowered with its
/// layout's blocks, whatever the options say.
// CHECK-LABEL: func @with_layout
// CHECK: memref.alloc() : memref<16x16xf32>
// CHECK: memref.alloc() : memref<16x16xf32>
func.func @with_layout(%query: tensor<1x1x32x16xf32>) -> tensor<1x1x32x16xf32> {
  // expected-remark @+1 {{attn-flash: tiles of 16 queries x 16 keys, 16 lanes; visiting 3 of 4 key blocks (1 full)}}
  %0 = attn.attention %query, %query, %query {normalizer = #attn.softmax, pattern = #attn.causal,
      layout = #attn.block_layout<block_q = 16, block_k = 16, query_blocks = 2, key_blocks = 2,
               full_offsets = [0, 0, 1], full_blocks = [0], partial_offsets = [0, 1, 2], partial_blocks = [0, 1], heads = [0]>}
      : tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32> -> tensor<1x1x32x16xf32>
  return %0 : tensor<1x1x32x16xf32>
}

// -----

/// Other normalizers are left to their own passes.
// CHECK-LABEL: func @not_softmax
// CHECK-COUNT-2: attn.attention
func.func @not_softmax(%query: tensor<1x1x32x16xf32>) -> (tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>) {
  %0 = attn.attention %query, %query, %query {normalizer = #attn.pointwise<relu>}
      : tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32> -> tensor<1x1x32x16xf32>
  %1 = attn.attention %query, %query, %query {normalizer = #attn.kernel<elu_plus_one>}
      : tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32> -> tensor<1x1x32x16xf32>
  return %0, %1 : tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>
}

// -----

/// Dynamic batch and lengths: no compile-time layout. The sizes are checked
/// first (the hook is called on a mismatch) and the kernel runs under
/// scf.if only when they agree: a parallel loop over (batch, head,
/// ceil(Lq / 64) tiles), each tile visiting the key blocks its causal range
/// allows, computed at run time from the tile's last query and the shift
/// Lk - Lq; a block is taken without the mask when all its keys are allowed
/// and inside the keys.
// CHECK-LABEL: func @dynamic_causal
// CHECK: func.call @attn_opt_runtime_error
// CHECK: %[[Q:.+]] = bufferization.to_buffer %arg0 read_only
// CHECK: %[[K:.+]] = bufferization.to_buffer %arg1 read_only
// CHECK: %[[B:.+]] = memref.dim %[[Q]], %c0
// CHECK: %[[LQ:.+]] = memref.dim %[[Q]], %c2
// CHECK: %[[LK:.+]] = memref.dim %[[K]], %c2
// CHECK: %[[OUT:.+]] = memref.alloc(%[[B]], %[[LQ]]) : memref<?x4x?x8xf32>
// CHECK: %[[TILES:.+]] = arith.ceildivui %[[LQ]], %c64
// CHECK: scf.if %{{.+}} {
// CHECK:   scf.parallel (%{{.+}}, %{{.+}}, %{{.+}}) = (%c0, %c0, %c0) to (%[[B]], %c4, %[[TILES]])
// CHECK:     %[[SHIFT:.+]] = arith.subi %[[LK]], %[[LQ]] : index
// CHECK:     %[[KBLOCKS:.+]] = arith.ceildivui %[[LK]], %c64
// CHECK:     %[[LAST:.+]] = arith.addi %{{.+}}, %[[SHIFT]] : index
// CHECK:     %[[HI:.+]] = arith.minsi %[[KBLOCKS]], %{{.+}} : index
// CHECK:     scf.for %{{.+}} = %{{.+}} to %[[HI]] step %c1 iter_args
// CHECK:       %[[INSIDE:.+]] = arith.cmpi slt, %{{.+}}, %[[LK]] : index
// CHECK:       %[[FULL:.+]] = arith.andi %{{.+}}, %[[INSIDE]] : i1
// CHECK:       scf.if %[[FULL]] -> (vector<16xf32>
// CHECK-NOT:     arith.cmpi {{.*}} : vector<16xi32>
// CHECK:       } else {
// CHECK:         arith.cmpi sle, %{{.+}}, %{{.+}} : vector<16xi32>
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
func.func @dynamic_causal(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  // expected-remark @+1 {{attn-flash: tiles of 64 queries x 64 keys, 16 lanes; key blocks classified at run time (lengths known at run time)}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}

// -----

/// A packed batch: rows outside every sequence are zeros (the output is
/// filled first); once the offsets are checked, the tiles of each sequence
/// are counted into a prefix sum (tile starts), and each flat tile finds its
/// sequence by bisection and reads its query and key rows from the
/// sequence's offsets.
// CHECK-LABEL: func @packed_causal
// CHECK: %[[OUT:.+]] = memref.alloc(%{{.+}}) : memref<1x4x?x8xf32>
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%[[OUT]] : memref<1x4x?x8xf32>)
// CHECK: %[[STARTS:.+]] = memref.alloc(%{{.+}}) : memref<?xindex>
// CHECK: %[[TILES:.+]] = scf.if %[[OK:.+]] -> (index) {
// CHECK:   scf.for
// CHECK:     arith.ceildivui %{{.+}}, %c64
// CHECK:     memref.store %{{.+}}, %[[STARTS]]
// CHECK: } else {
// CHECK:   scf.yield %c0 : index
// CHECK: scf.if %[[OK]] {
// CHECK:   scf.parallel (%{{.+}}, %{{.+}}, %{{.+}}) = (%c0, %c0, %c0) to (%c1, %c4, %[[TILES]])
// CHECK:     scf.for %{{.+}} = %c0 to %c32 step %c1 iter_args
// CHECK:       memref.load %[[STARTS]]
// CHECK:       arith.cmpi ule
func.func @packed_causal(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x8xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x4x?x8xf32> {
  // expected-remark @+1 {{attn-flash: tiles of 64 queries x 64 keys, 16 lanes; key blocks classified at run time (lengths known at run time)}}
  %0 = attn.attention %q, %k, %v query_offsets(%cq : tensor<?xi32>) key_offsets(%ck : tensor<?xi32>) {normalizer = #attn.softmax, pattern = #attn.causal}
    : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32> -> tensor<1x4x?x8xf32>
  return %0 : tensor<1x4x?x8xf32>
}

// -----

/// Decode: one query per sequence, 4 query heads per key/value head. The 4
/// heads' rows share one tile (one query vector of 16 lanes instead of 64
/// rows of one head's single query), launched per batch row and key/value
/// head, so each K and V element is read once for the 4 heads; the next key
/// block's K and V rows are prefetched (one per cache line: 16 floats),
/// each step of the score loop (4 keys) prefetching its own keys' rows in
/// the next block, so that the misses spread over the block.
// CHECK-LABEL: func @decode
// CHECK: scf.parallel (%{{.*}}, %{{.*}}, %{{.*}}) = (%c0, %c0, %c0) to (%c2, %c2, %c1)
// CHECK: scf.for %{{.*}} = %c0 to %c64{{.*}} step %c4
// CHECK-COUNT-4: memref.prefetch %[[K:.*]][%{{.*}}, %{{.*}}, %[[ROW:.*]], %c{{0|16|32|48}}], read, locality<2>, data : memref<2x2x300x64xf32>
// CHECK-COUNT-4: memref.prefetch %[[V:.*]][%{{.*}}, %{{.*}}, %[[ROW]], %c{{0|16|32|48}}], read, locality<2>, data : memref<2x2x300x64xf32>
// CHECK-NOT: memref.prefetch %[[K]][%{{.*}}, %{{.*}}, %[[ROW]]
// CHECK: vector.fma
/// The dot products' lanes summed as a tree (reassociated), not in order.
// CHECK: vector.reduction <add>, %{{.*}} fastmath<reassoc> : vector<16xf32> into f32
func.func @decode(%q: tensor<2x8x1x64xf32>, %k: tensor<2x2x300x64xf32>, %v: tensor<2x2x300x64xf32>) -> tensor<2x8x1x64xf32> {
  // expected-remark @+1 {{attn-flash: decode: the 4 query heads x 1 queries of each key/value head in 1 tile(s), each key/value element read once for them; tiles of 16 queries x 64 keys, 16 lanes; visiting 40 of 40 key blocks (40 full)}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<2x8x1x64xf32>, tensor<2x2x300x64xf32>, tensor<2x2x300x64xf32> -> tensor<2x8x1x64xf32>
  return %0 : tensor<2x8x1x64xf32>
}

// -----

/// A bf16 cache: K and V read in bf16 (extended as loaded), so a cache
/// line holds 32 elements: two prefetches per row of 64.
// CHECK-LABEL: func @decode_bf16
// CHECK: scf.for %{{.*}} = %c0 to %c64{{.*}} step %c4
// CHECK-COUNT-2: memref.prefetch %[[K:.*]][%{{.*}}, %{{.*}}, %[[ROW:.*]], %c{{0|32}}], read, locality<2>, data : memref<2x2x300x64xbf16>
// CHECK-COUNT-2: memref.prefetch %[[V:.*]][%{{.*}}, %{{.*}}, %[[ROW]], %c{{0|32}}], read, locality<2>, data : memref<2x2x300x64xbf16>
// CHECK-NOT: memref.prefetch %[[K]][%{{.*}}, %{{.*}}, %[[ROW]]
// CHECK: arith.extf
func.func @decode_bf16(%q: tensor<2x8x1x64xbf16>, %k: tensor<2x2x300x64xbf16>, %v: tensor<2x2x300x64xbf16>) -> tensor<2x8x1x64xbf16> {
  // expected-remark @+1 {{attn-flash: decode: the 4 query heads x 1 queries of each key/value head in 1 tile(s)}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<2x8x1x64xbf16>, tensor<2x2x300x64xbf16>, tensor<2x2x300x64xbf16> -> tensor<2x8x1x64xbf16>
  return %0 : tensor<2x8x1x64xbf16>
}

// -----

/// 40 queries per head fill most of a 64-row tile: the prefill kernel
/// (tiles of one head's queries, per query head).
// CHECK-LABEL: func @prefill
// CHECK-NOT: memref.prefetch
// CHECK: return
func.func @prefill(%q: tensor<2x8x40x64xf32>, %k: tensor<2x2x300x64xf32>, %v: tensor<2x2x300x64xf32>) -> tensor<2x8x40x64xf32> {
  // expected-remark @+1 {{attn-flash: tiles of 64 queries x 64 keys, 16 lanes; visiting 40 of 40 key blocks (32 full)}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<2x8x40x64xf32>, tensor<2x2x300x64xf32>, tensor<2x2x300x64xf32> -> tensor<2x8x40x64xf32>
  return %0 : tensor<2x8x40x64xf32>
}

