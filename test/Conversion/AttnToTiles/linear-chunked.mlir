// RUN: attn-opt %s --attn-linear-kernels="vector-width=8" --verify-diagnostics | FileCheck %s

/// The causal chunked form of elu+1 features becomes one kernel per (batch,
/// query head) that carries S (F x Dv) and z (F) through the chunks: phi of
/// the chunk's keys (and transposed) and queries, the triangle of
/// phi(Q_c) phi(K_c)^T masked on the lane indices (j <= i), its row sums in
/// the denominators, then (phi(Q_c) S + A V_c) / den and the state update.
/// The feature maps and the chunked op are gone.
// CHECK-LABEL: func @causal
// CHECK-NOT: attn.feature_map
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<1x2x100x8xf32>
// CHECK: scf.parallel (%[[B:.+]], %[[H:.+]]) = (%c0, %c0{{.*}}) to (%c1, %c2)
// CHECK:   %[[S:.+]] = memref.alloc() : memref<16x8xf32>
// CHECK:   %[[Z:.+]] = memref.alloc() : memref<16xf32>
// CHECK:   %[[PK:.+]] = memref.alloc() : memref<32x16xf32>
// CHECK:   %[[PKT:.+]] = memref.alloc() : memref<16x32xf32>
// CHECK:   %[[PQ:.+]] = memref.alloc() : memref<32x16xf32>
// CHECK:   %[[A:.+]] = memref.alloc() : memref<32x32xf32>
// CHECK:   %[[DEN:.+]] = memref.alloc() : memref<32xf32>
/// Four chunks of 32 (the last of 4 rows).
// CHECK:   scf.for %{{.+}} = %c0{{.*}} to %c4{{.*}} step %c1
// CHECK:     math.exp
// CHECK:     memref.store %{{.*}}, %[[PKT]]
// CHECK:     arith.cmpi ule
// CHECK:     vector.store %{{.*}}, %[[A]]
// CHECK:     vector.reduction <add>, %{{.*}} fastmath<reassoc>
// CHECK:     memref.store %{{.*}}, %[[DEN]]
// CHECK:     arith.divf
// CHECK:     vector.store %{{.*}}, %[[OUT]][%[[B]], %[[H]], %{{.*}}, %{{.*}}]
// CHECK:     vector.store %{{.*}}, %[[S]]
// CHECK:     vector.store %{{.*}}, %[[Z]]
// CHECK-NOT: attn.chunked_linear
// CHECK: return
func.func @causal(%q: tensor<1x2x100x16xf32>, %k: tensor<1x1x100x16xf32>, %v: tensor<1x1x100x8xf32>) -> tensor<1x2x100x8xf32> {
  %fq = attn.feature_map %q {kernel = #attn.kernel<elu_plus_one>} : tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
  %fk = attn.feature_map %k {kernel = #attn.kernel<elu_plus_one>} : tensor<1x1x100x16xf32> -> tensor<1x1x100x16xf32>
  // expected-remark @+1 {{attn-linear-kernels: causal chunked form in one kernel per query head, chunks of 32 carrying S and z, the triangle in register tiles}}
  %0 = attn.chunked_linear %fq, %fk, %v {causal, chunk_size = 32 : i64} : tensor<1x2x100x16xf32>, tensor<1x1x100x16xf32>, tensor<1x1x100x8xf32> -> tensor<1x2x100x8xf32>
  return %0 : tensor<1x2x100x8xf32>
}

/// Left to attn-lower-chunked-linear: segment ids; a chunk size that is not
/// a multiple of the vector width; different maps of Q and K.
// CHECK-LABEL: func @left
// CHECK-COUNT-3: attn.chunked_linear
func.func @left(%q: tensor<1x1x64x16xf32>, %ids: tensor<1x64xi32>) -> (tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>) {
  %fq = attn.feature_map %q {kernel = #attn.kernel<elu_plus_one>} : tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  %fr = attn.feature_map %q {kernel = #attn.kernel<relu>} : tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  %0 = attn.chunked_linear %fq, %fq, %q segments(%ids : tensor<1x64xi32>) {causal, chunk_size = 16 : i64} : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  %1 = attn.chunked_linear %fq, %fq, %q {causal, chunk_size = 12 : i64} : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  %2 = attn.chunked_linear %fq, %fr, %q {causal, chunk_size = 16 : i64} : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %0, %1, %2 : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>
}

/// The gradient's sums (convert-attn-grad-to-linalg's linear form): the
/// operands are the features (no feature map), and `unnormalized` keeps
/// the masked sums: no denominators, no division.
// CHECK-LABEL: func @unnormalized
// CHECK: scf.parallel
// CHECK-NOT: math.exp
// CHECK-NOT: arith.divf
// CHECK: vector.store %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<1x2x100x8xf32>
// CHECK-NOT: attn.chunked_linear
// CHECK: return
func.func @unnormalized(%x: tensor<1x2x100x16xf32>, %y: tensor<1x1x100x16xf32>, %w: tensor<1x1x100x8xf32>) -> tensor<1x2x100x8xf32> {
  // expected-remark @+1 {{attn-linear-kernels: causal chunked form in one kernel per query head, chunks of 32 carrying S and z, the triangle in register tiles, the operands as the features, no denominator}}
  %0 = attn.chunked_linear %x, %y, %w {causal, chunk_size = 32 : i64, unnormalized} : tensor<1x2x100x16xf32>, tensor<1x1x100x16xf32>, tensor<1x1x100x8xf32> -> tensor<1x2x100x8xf32>
  return %0 : tensor<1x2x100x8xf32>
}

/// `reverse`: the same kernel reading and writing logical row r at buffer
/// row L - 1 - r (no reversed copies).
// CHECK-LABEL: func @reverse
// CHECK-NOT: attn.chunked_linear
// CHECK: scf.parallel
// CHECK: arith.subi %c99, %{{.*}} : index
// CHECK-NOT: attn.chunked_linear
// CHECK: return
func.func @reverse(%fq: tensor<1x2x100x16xf32>, %fk: tensor<1x2x100x16xf32>,
                   %v: tensor<1x2x100x8xf32>) -> tensor<1x2x100x8xf32> {
  // expected-remark @+1 {{attn-linear-kernels: causal chunked form in one kernel per query head, chunks of 32 carrying S and z, the triangle in register tiles, the operands as the features, no denominator, reversed (rows read from the end)}}
  %0 = attn.chunked_linear %fq, %fk, %v {chunk_size = 32, causal, reverse, unnormalized}
      : tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x8xf32> -> tensor<1x2x100x8xf32>
  return %0 : tensor<1x2x100x8xf32>
}
