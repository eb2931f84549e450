// RUN: attn-opt %s --attn-lower-pointwise="vector-width=16" --split-input-file --verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --attn-lower-pointwise="vector-width=8 query-tile=16 key-block=32" --split-input-file | FileCheck %s --check-prefix=TILES

/// Causal ReLU attention, L = 100 (ragged tiles), GQA: a parallel loop over
/// (batch, head, query tile); per tile the full key blocks (no mask), then
/// the partial ones (the mask), register-blocked QK^T and PV with FMAs on
/// vectors of queries; no L x L buffer anywhere.
// CHECK-LABEL: func @relu_causal
// CHECK-NOT: 100x100
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<1x4x100x8xf32>
// CHECK: scf.parallel (%[[B:.+]], %[[H:.+]], %[[T:.+]]) = (%c0{{.*}}, %c0{{.*}}, %c0{{.*}}) to (%c1{{.*}}, %c4{{.*}}, %c2{{.*}})
// CHECK:   %[[QT:.+]] = memref.alloc() : memref<16x64xf32>
// CHECK:   %[[ST:.+]] = memref.alloc() : memref<64x64xf32>
// CHECK:   %[[OT:.+]] = memref.alloc() : memref<8x64xf32>
/// Full blocks: scores, h, the 1/L factor, no mask.
// CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1
// CHECK:     scf.for %{{.*}} = %c0{{.*}} to %c64{{.*}} step %c4
// CHECK:       scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>
// CHECK:         vector.load %[[QT]]
// CHECK:         vector.broadcast
// CHECK:         vector.fma
// CHECK:       arith.maximumf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK:       arith.mulf %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK:       vector.store %{{.*}}, %[[ST]]
// CHECK:     scf.for
// CHECK:       scf.for {{.*}} -> (vector<16xf32>
// CHECK:         vector.fma
// CHECK:       vector.store %{{.*}}, %[[OT]]
/// Partial blocks: the same, with the causal mask per element.
// CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1
// CHECK:       arith.cmpi sle, %{{.*}}, %{{.*}} : vector<16xi32>
// CHECK:       arith.select %{{.*}}, %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xf32>
/// The output tile, rows past L dropped.
// CHECK:   memref.store %{{.*}}, %[[OUT]]
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// TILES-LABEL: func @relu_causal
// TILES: memref.alloc() : memref<16x16xf32>
// TILES: memref.alloc() : memref<32x16xf32>
func.func @relu_causal(%q: tensor<1x4x100x16xf32>, %k: tensor<1x2x100x16xf32>,
                       %v: tensor<1x2x100x8xf32>) -> tensor<1x4x100x8xf32> {
  // expected-remark @+1 {{attn-lower-pointwise: tiles of 64 queries x 64 keys, 16 lanes; visiting 12 of 16 key blocks (4 full)}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.pointwise<relu>, pattern = #attn.causal}
      : tensor<1x4x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x8xf32> -> tensor<1x4x100x8xf32>
  return %0 : tensor<1x4x100x8xf32>
}

// -----

/// A window leaves key blocks empty: they are not in the layout, so never
/// visited.
// CHECK-LABEL: func @relu2_window
// CHECK: arith.maximumf
// CHECK: arith.mulf %[[R:.+]], %[[R]] : vector<16xf32>
func.func @relu2_window(%q: tensor<1x1x512x16xf32>) -> tensor<1x1x512x16xf32> {
  // expected-remark @+1 {{visiting 22 of 64 key blocks (0 full)}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.pointwise<relu2>, pattern = #attn.window<before = 8, after = 8>}
      : tensor<1x1x512x16xf32>, tensor<1x1x512x16xf32>, tensor<1x1x512x16xf32> -> tensor<1x1x512x16xf32>
  return %0 : tensor<1x1x512x16xf32>
}

// -----

// CHECK-LABEL: func @gelu
// CHECK: math.erf %{{.*}} : vector<16xf32>
func.func @gelu(%q: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  // expected-remark @+1 {{visiting 1 of 1 key blocks (1 full)}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.pointwise<gelu>}
      : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %0 : tensor<1x1x64x16xf32>
}

// -----

// CHECK-LABEL: func @softplus
// CHECK: math.log1p %{{.*}} : vector<16xf32>
func.func @softplus(%q: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  // expected-remark @+1 {{attn-lower-pointwise}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.pointwise<softplus>}
      : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %0 : tensor<1x1x64x16xf32>
}

// -----

/// identity: the scores times 1/L, nothing else.
// CHECK-LABEL: func @identity
// CHECK: vector.fma
// CHECK-NOT: arith.maximumf
// CHECK: %[[S:.+]] = arith.mulf %{{.*}}, %cst{{.*}} : vector<16xf32>
// CHECK: vector.store %[[S]]
func.func @identity(%q: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  // expected-remark @+1 {{attn-lower-pointwise}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.pointwise<identity, alpha = 0.5>}
      : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %0 : tensor<1x1x64x16xf32>
}

// -----

// CHECK-LABEL: func @relu6
// CHECK: arith.maximumf
// CHECK: arith.minimumf
func.func @relu6(%q: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  // expected-remark @+1 {{attn-lower-pointwise}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.pointwise<relu6>}
      : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %0 : tensor<1x1x64x16xf32>
}

// -----

// CHECK-LABEL: func @sigmoid
// CHECK: math.exp %{{.*}} : vector<16xf32>
// CHECK: arith.divf
func.func @sigmoid(%q: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  // expected-remark @+1 {{attn-lower-pointwise}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.pointwise<sigmoid>}
      : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %0 : tensor<1x1x64x16xf32>
}

// -----

/// Softmax is not pointwise: left for attn-flash.
// CHECK-LABEL: func @softmax
// CHECK: attn.attention
func.func @softmax(%q: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %0 : tensor<1x1x64x16xf32>
}

// -----

/// A padded batch with dynamic lengths: each (batch, head, tile) reads its
/// sequence's key length, computes L^-alpha from it once per tile (not per
/// score), and skips tiles past the query length (here the buffer's).
// CHECK-LABEL: func @padded_keys
// CHECK: func.call @attn_opt_runtime_error
// CHECK: %[[LENS:.+]] = bufferization.to_buffer %arg3 read_only
// CHECK: scf.parallel (%[[B:.+]], %{{.+}}, %{{.+}}) =
// CHECK:   %[[N:.+]] = memref.load %[[LENS]][%[[B]]] : memref<2xi32>
// CHECK:   %[[NI:.+]] = arith.index_cast %[[N]] : i32 to index
// CHECK:   %[[NI64:.+]] = arith.index_cast %[[NI]] : index to i64
// CHECK:   %[[NF:.+]] = arith.sitofp %[[NI64]] : i64 to f32
// CHECK:   %[[FACTOR:.+]] = math.powf %[[NF]], %{{.+}} : f32
// CHECK:   scf.if
// CHECK-NOT: math.powf
// CHECK:     scf.for
// CHECK:       vector.broadcast %[[FACTOR]]
func.func @padded_keys(%q: tensor<2x4x?x16xf32>, %k: tensor<2x2x?x16xf32>, %v: tensor<2x2x?x8xf32>, %lk: tensor<2xi32>) -> tensor<2x4x?x8xf32> {
  // expected-remark @+1 {{attn-lower-pointwise: tiles of 64 queries x 64 keys, 16 lanes; key blocks classified at run time (lengths known at run time)}}
  %0 = attn.attention %q, %k, %v key_lengths(%lk : tensor<2xi32>) {normalizer = #attn.pointwise<relu, alpha = 0.5>, pattern = #attn.window<before = 8, after = 8>}
    : tensor<2x4x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x8xf32> -> tensor<2x4x?x8xf32>
  return %0 : tensor<2x4x?x8xf32>
}
