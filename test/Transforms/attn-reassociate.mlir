// RUN: attn-opt %s --attn-reassociate --split-input-file --verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --attn-reassociate="mode=quadratic" --split-input-file | FileCheck %s --check-prefix=QUAD
// RUN: attn-opt %s --attn-reassociate="chunk-size=24" --split-input-file | FileCheck %s --check-prefix=CHUNK

/// Non-causal linear attention with GQA: one D x Dv state and key sum per
/// (batch, kv head), read by the query heads of each group; no Lq x Lk
/// tensor is left.
// CHECK-LABEL: func @elu_gqa
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<2x8x1024x64xf32>, %[[K:[^:]+]]: tensor<2x2x1024x64xf32>, %[[V:[^:]+]]: tensor<2x2x1024x32xf32>)
// CHECK: %[[FQ:.+]] = attn.feature_map %[[Q]] {kernel = #attn.kernel<elu_plus_one>}
// CHECK: %[[FK:.+]] = attn.feature_map %[[K]] {kernel = #attn.kernel<elu_plus_one>}
// CHECK: %[[STATE:.+]], %[[SUM:.+]] = attn.kv_state %[[FK]], %[[V]] : tensor<2x2x1024x64xf32>, tensor<2x2x1024x32xf32> -> tensor<2x2x64x32xf32>, tensor<2x2x64xf32>
// CHECK: %[[O:.+]] = attn.state_apply %[[FQ]], %[[STATE]], %[[SUM]] : tensor<2x8x1024x64xf32>, tensor<2x2x64x32xf32>, tensor<2x2x64xf32> -> tensor<2x8x1024x32xf32>
// CHECK-NOT: x1024x1024x
// CHECK: return %[[O]]
// QUAD-LABEL: func @elu_gqa
// QUAD: attn.attention
func.func @elu_gqa(%q: tensor<2x8x1024x64xf32>, %k: tensor<2x2x1024x64xf32>,
                   %v: tensor<2x2x1024x32xf32>) -> tensor<2x8x1024x32xf32> {
  // expected-remark @+1 {{attn-reassociate: linear form (phi(Q) (phi(K)^T V), cheaper): quadratic 3.22e+09 flop}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>}
      : tensor<2x8x1024x64xf32>, tensor<2x2x1024x64xf32>, tensor<2x2x1024x32xf32> -> tensor<2x8x1024x32xf32>
  return %0 : tensor<2x8x1024x32xf32>
}

// -----

/// Causal: the chunked prefix form, chunk 64 from the cost model
/// (sqrt(64 * 64)), or the forced size.
// CHECK-LABEL: func @relu_causal
// CHECK: %[[FQ:.+]] = attn.feature_map
// CHECK: %[[FK:.+]] = attn.feature_map
// CHECK: attn.chunked_linear %[[FQ]], %[[FK]], %{{.*}} {causal, chunk_size = 64 : i64}
// CHECK-NOT: attn.scores
// CHUNK-LABEL: func @relu_causal
// CHUNK: attn.chunked_linear {{.*}} {causal, chunk_size = 24 : i64
func.func @relu_causal(%q: tensor<1x4x512x64xf32>) -> tensor<1x4x512x64xf32> {
  // expected-remark @+1 {{attn-reassociate: linear form (chunked prefix form, chunk 64, cheaper)}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<relu>, pattern = #attn.causal}
      : tensor<1x4x512x64xf32>, tensor<1x4x512x64xf32>, tensor<1x4x512x64xf32> -> tensor<1x4x512x64xf32>
  return %0 : tensor<1x4x512x64xf32>
}

// -----

/// The decomposed form written by hand fires too; the score scale is folded
/// into eps (P = s / (sum s + eps / scale)), and the dead quadratic steps go.
// CHECK-LABEL: func @hand_decomposed
// CHECK-SAME: (%[[FQ:[^:]+]]: tensor<1x2x256x16xf32>, %[[FK:[^:]+]]: tensor<1x2x256x16xf32>, %[[V:[^:]+]]: tensor<1x2x256x16xf32>, %[[IDS:[^:]+]]: tensor<1x256xi32>)
// CHECK-NEXT: %[[O:.+]] = attn.chunked_linear %[[FQ]], %[[FK]], %[[V]] segments(%[[IDS]] : tensor<1x256xi32>) {causal, chunk_size = 16 : i64, eps = 2.000000e-03 : f32}
// CHECK-NEXT: return %[[O]]
func.func @hand_decomposed(%fq: tensor<1x2x256x16xf32>, %fk: tensor<1x2x256x16xf32>,
                           %v: tensor<1x2x256x16xf32>, %ids: tensor<1x256xi32>) -> tensor<1x2x256x16xf32> {
  %s = attn.scores %fq, %fk {scale = 0.5 : f32} : tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32> -> tensor<1x2x256x256xf32>
  %p = attn.normalize %s segments(%ids : tensor<1x256xi32>)
      {normalizer = #attn.kernel<relu, eps = 1.0e-3>, pattern = #attn.intersect<[#attn.causal, #attn.segments]>}
      : tensor<1x2x256x256xf32> -> tensor<1x2x256x256xf32>
  // expected-remark @+1 {{attn-reassociate: linear form (chunked prefix form, chunk 16, cheaper)}}
  %o = attn.apply %p, %v : tensor<1x2x256x256xf32>, tensor<1x2x256x16xf32> -> tensor<1x2x256x16xf32>
  return %o : tensor<1x2x256x16xf32>
}

// -----

/// What stays quadratic, and why.
// CHECK-LABEL: func @left_alone
// CHECK-COUNT-4: attn.attention
// CHECK: attn.apply
func.func @left_alone(%q: tensor<1x2x256x16xf32>, %b: tensor<1x1x256x256xf32>,
                      %q2: tensor<1x2x128x16xf32>, %q3: tensor<1x2x16x16xf32>) {
  // expected-remark @+1 {{attn-reassociate: kept the quadratic form: its pattern #attn.window<before = 16, after = 16> is not causal or segments, so the weights do not factor through a prefix state}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<relu>, pattern = #attn.window<before = 16, after = 16>}
      : tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32> -> tensor<1x2x256x16xf32>
  // expected-remark @+1 {{attn-reassociate: kept the quadratic form: the chunked prefix form needs as many queries as keys}}
  %1 = attn.attention %q2, %q, %q {normalizer = #attn.kernel<relu>, pattern = #attn.causal}
      : tensor<1x2x128x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32> -> tensor<1x2x128x16xf32>
  // expected-remark @+1 {{attn-reassociate: kept the quadratic form (cheaper): quadratic}}
  %2 = attn.attention %q3, %q3, %q3 {normalizer = #attn.kernel<favor, features = 512>}
      : tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x2x16x16xf32> -> tensor<1x2x16x16xf32>
  /// Softmax is not kernel attention: no remark, nothing to do.
  %3 = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32> -> tensor<1x2x256x16xf32>
  %s = attn.scores %q, %q bias(%b : tensor<1x1x256x256xf32>) : tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32> -> tensor<1x2x256x256xf32>
  %p = attn.normalize %s {normalizer = #attn.kernel<relu>} : tensor<1x2x256x256xf32> -> tensor<1x2x256x256xf32>
  // expected-remark @+1 {{attn-reassociate: kept the quadratic form: it has a bias}}
  %o = attn.apply %p, %q : tensor<1x2x256x256xf32>, tensor<1x2x256x16xf32> -> tensor<1x2x256x16xf32>
  return
}
