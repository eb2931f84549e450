// RUN: attn-opt %s --attn-lower-chunked-linear --canonicalize --split-input-file | FileCheck %s

/// Causal, L = 100 in chunks of 32: an scf.forall over (batch, kv head)
/// holding an scf.for over the 3 full chunks that carries the 16 x 8 state
/// and the 16-wide key sum, then the ragged chunk of 4; nothing of size
/// L x L.
// CHECK-LABEL: func @causal
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]]) in (2, 2) shared_outs(%[[NUM:.+]] = %{{.*}}, %[[DEN:.+]] = %{{.*}}) -> (tensor<2x2x2x100x8xf32>, tensor<2x2x2x100xf32>)
// CHECK:   %[[LOOP:.+]]:4 = scf.for %{{.*}} = %c0 to %c3 step %c1 iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[S:.+]] = %{{.*}}, %[[Z:.+]] = %{{.*}}) -> (tensor<2x100x8xf32>, tensor<2x100xf32>, tensor<16x8xf32>, tensor<16xf32>)
/// The small quadratic form of a chunk, with the causal mask inside it.
// CHECK:     linalg.generic {{.*}} outs(%{{.*}} : tensor<2x32x32xf32>)
// CHECK:       arith.cmpi ule
/// The inter-chunk term q S.
// CHECK:     linalg.generic {{.*}} ins(%{{.*}}, %[[S]] : tensor<2x32x16xf32>, tensor<16x8xf32>)
/// The state update Kc^T Vc, in place.
// CHECK:     linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "parallel"]{{.*}} outs(%{{.*}} : tensor<16x8xf32>)
// CHECK:     scf.yield
/// The ragged last chunk (100 = 3 * 32 + 4).
// CHECK:   linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4x4xf32>)
// CHECK:   scf.forall.in_parallel
// CHECK-NOT: x100x100x
/// O = num / (den + eps).
// CHECK: arith.divf
func.func @causal(%fq: tensor<2x4x100x16xf32>, %fk: tensor<2x2x100x16xf32>,
                  %v: tensor<2x2x100x8xf32>) -> tensor<2x4x100x8xf32> {
  %0 = attn.chunked_linear %fq, %fk, %v {chunk_size = 32, causal}
      : tensor<2x4x100x16xf32>, tensor<2x2x100x16xf32>, tensor<2x2x100x8xf32> -> tensor<2x4x100x8xf32>
  return %0 : tensor<2x4x100x8xf32>
}

// -----

/// Segments without causal: a check that the ids are non-decreasing picks
/// the chunked form (forward and backward sweeps) or, else, the quadratic
/// form, kept as a marked attn.chunked_linear for the reference lowering.
// CHECK-LABEL: func @segments
// CHECK: %[[SORTED:.+]] = tensor.extract %{{[^[]*}}[] : tensor<i1>
// CHECK: scf.if %[[SORTED]]
// CHECK:   scf.forall
// CHECK:     scf.for
// CHECK:     scf.for
// CHECK: } else {
// CHECK:   attn.chunked_linear {{.*}} {attn.quadratic_fallback, chunk_size = 16 : i64}
func.func @segments(%fq: tensor<2x1x64x8xf32>, %v: tensor<2x1x64x8xf32>,
                    %ids: tensor<2x64xi64>) -> tensor<2x1x64x8xf32> {
  %0 = attn.chunked_linear %fq, %fq, %v segments(%ids : tensor<2x64xi64>) {chunk_size = 16}
      : tensor<2x1x64x8xf32>, tensor<2x1x64x8xf32>, tensor<2x1x64x8xf32> -> tensor<2x1x64x8xf32>
  return %0 : tensor<2x1x64x8xf32>
}

// -----

/// `reverse` (the gradient's suffix sums): the operands' sequences reversed
/// (segment ids also negated: sorted again), the forward chunked form, its
/// result reversed back.
// CHECK-LABEL: func @reverse_segments
// CHECK: %[[IDS:.+]] = linalg.generic
// CHECK:   tensor.extract %arg3
// CHECK:   arith.subi %c0_i32
// CHECK: scf.forall
// CHECK: linalg.generic
// CHECK:   tensor.extract
// CHECK: return
func.func @reverse_segments(%fq: tensor<1x2x50x16xf32>, %fk: tensor<1x2x50x16xf32>,
                            %v: tensor<1x2x50x16xf32>, %ids: tensor<1x50xi32>) -> tensor<1x2x50x16xf32> {
  %0 = attn.chunked_linear %fq, %fk, %v segments(%ids : tensor<1x50xi32>) {chunk_size = 16, causal, reverse, unnormalized}
      : tensor<1x2x50x16xf32>, tensor<1x2x50x16xf32>, tensor<1x2x50x16xf32> -> tensor<1x2x50x16xf32>
  return %0 : tensor<1x2x50x16xf32>
}
