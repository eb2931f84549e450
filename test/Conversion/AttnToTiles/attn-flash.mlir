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
// CHECK:       arith.maximumf %{{.*}} : vector<16xf32>
// CHECK:       scf.yield
/// The online-softmax step: the new maximum, shifted by 0 while no key is
/// allowed (-inf), alpha = exp(m_old - shift).
// CHECK:     %[[M:.+]] = arith.maximumf %[[MOLD:.+]], %{{.*}}#0 : vector<16xf32>
// CHECK:     %[[NONE:.+]] = arith.cmpf oeq, %[[M]], %[[NEGINF:.+]] : vector<16xf32>
// CHECK:     %[[SHIFT:.+]] = arith.select %[[NONE]], %{{.*}}, %[[M]]
// CHECK:     %[[DIFF:.+]] = arith.subf %[[MOLD]], %[[SHIFT]] : vector<16xf32>
// CHECK:     %[[ALPHA:.+]] = math.exp %[[DIFF]] : vector<16xf32>
/// P = exp(S - shift), 0 for masked (-inf) scores, summed into l.
// CHECK:     scf.for
// CHECK:       %[[S:.+]] = vector.load %[[ST]]
// CHECK:       %[[KEPT:.+]] = arith.cmpf one, %[[S]], %[[NEGINF]]
// CHECK:       %[[E:.+]] = math.exp
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
