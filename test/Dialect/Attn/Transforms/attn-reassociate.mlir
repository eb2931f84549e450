// RUN: attn-opt %s --attn-reassociate --split-input-file --verify-diagnostics | FileCheck %s
// RUN: attn-opt %s --attn-reassociate="mode=quadratic" --split-input-file 2>/dev/null | FileCheck %s --check-prefix=QUAD
// RUN: attn-opt %s --attn-reassociate="chunk-size=24" --split-input-file 2>/dev/null | FileCheck %s --check-prefix=CHUNK
// RUN: attn-opt %s --attn-reassociate="mode=linear" --split-input-file 2>/dev/null | FileCheck %s --check-prefix=LINEAR

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
  // expected-remark @+1 {{attn-reassociate: kept the quadratic form: pattern #attn.window has no linear form here}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<relu>, pattern = #attn.window<before = 16, after = 16>}
      : tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32> -> tensor<1x2x256x16xf32>
  // expected-remark @+1 {{attn-reassociate: kept the quadratic form: pattern #attn.causal with Lq != Lk has no linear form here}}
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
  // expected-remark @+1 {{attn-reassociate: kept the quadratic form: operand 'bias' has no linear form here}}
  %o = attn.apply %p, %q : tensor<1x2x256x256xf32>, tensor<1x2x256x16xf32> -> tensor<1x2x256x16xf32>
  return
}

// -----

/// Dynamic lengths: the choice moves to run time. The cost model becomes
/// `A Lq Lk` (quadratic) against `Bq Lq + Bk Lk` (linear) in f64, and the
/// chunked form also needs Lq == Lk; when either fails, the else branch
/// keeps the op (quadratic, lowered as usual). The linear branch keeps the
/// op's run-time size checks.
// CHECK-LABEL: func @dynamic_causal
// CHECK: %[[LQ:.+]] = tensor.dim %arg0, %c2
// CHECK: %[[LK:.+]] = tensor.dim %arg1, %c2
// CHECK: %[[EQ:.+]] = arith.cmpi eq, %[[LQ]], %[[LK]] : index
// CHECK: %[[CHEAPER:.+]] = arith.cmpf olt, %{{.+}}, %{{.+}} : f64
// CHECK: %[[COND:.+]] = arith.andi %[[EQ]], %[[CHEAPER]] : i1
// CHECK: %[[R:.+]] = scf.if %[[COND]] -> (tensor<?x4x?x8xf32>) {
// CHECK:   func.call @attn_opt_runtime_error
// CHECK:   scf.if %{{.+}} -> (tensor<?x4x?x8xf32>) {
// CHECK:     attn.feature_map %arg0
// CHECK:     attn.feature_map %arg1
// CHECK:     attn.chunked_linear %{{.+}}, %{{.+}}, %arg2 {causal, chunk_size = 16 : i64} : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
// CHECK: } else {
// CHECK:   %[[Q:.+]] = attn.attention %arg0, %arg1, %arg2 {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal}
// CHECK:   scf.yield %[[Q]]
// CHECK: return %[[R]]
/// Forced: no cost model, only the chunked form's condition.
// LINEAR-LABEL: func @dynamic_causal
// LINEAR: %[[EQ:.+]] = arith.cmpi eq
// LINEAR-NOT: arith.cmpf
// LINEAR: scf.if %[[EQ]]
// LINEAR: attn.chunked_linear
// CHUNK-LABEL: func @dynamic_causal
// CHUNK: attn.chunked_linear {{.*}}chunk_size = 24
// QUAD-LABEL: func @dynamic_causal
// QUAD-NOT: scf.if
// QUAD: attn.attention
func.func @dynamic_causal(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  // expected-remark @+1 {{attn-reassociate: lengths are dynamic: the linear form (chunked prefix form, chunk 16) when Lq == Lk and the cost model prefers it (with Lq = Lk: from 17 on), else the quadratic form, chosen at run time}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}

// -----

/// The decomposed form with dynamic lengths: the chain moves into the else
/// branch (its quadratic work is done only there).
// CHECK-LABEL: func @dynamic_chain
// CHECK-NOT: attn.scores
// CHECK: scf.if %{{.+}} -> (tensor<1x2x?x16xf32>) {
// CHECK:   attn.kv_state
// CHECK:   attn.state_apply
// CHECK: } else {
// CHECK:   attn.scores
// CHECK:   attn.normalize
// CHECK:   attn.apply
func.func @dynamic_chain(%q: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %s = attn.scores %q, %q : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x?xf32>
  %p = attn.normalize %s {normalizer = #attn.kernel<relu>} : tensor<1x2x?x?xf32> -> tensor<1x2x?x?xf32>
  // expected-remark @+1 {{attn-reassociate: lengths are dynamic: the linear form (phi(Q) (phi(K)^T V)) when the cost model prefers it}}
  %o = attn.apply %p, %q : tensor<1x2x?x?xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  return %o : tensor<1x2x?x16xf32>
}

// -----

/// A varlen batch stays quadratic (its lowering bounds each sequence).
// CHECK-LABEL: func @varlen
// CHECK-NOT: attn.chunked_linear
// CHECK: attn.attention
func.func @varlen(%q: tensor<2x4x64x16xf32>, %lk: tensor<2xi32>) -> tensor<2x4x64x16xf32> {
  // expected-remark @+1 {{attn-reassociate: kept the quadratic form: operand 'key_lengths' has no linear form here}}
  %0 = attn.attention %q, %q, %q key_lengths(%lk : tensor<2xi32>) {normalizer = #attn.kernel<relu>, pattern = #attn.causal}
    : tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32> -> tensor<2x4x64x16xf32>
  return %0 : tensor<2x4x64x16xf32>
}

// -----

/// A mask region stays quadratic, even when the linear form is asked for
/// (the linear form cannot restrict keys to what a region allows).
// CHECK-LABEL: func @mask_region
// CHECK-NOT: attn.kv_state
// CHECK-NOT: attn.chunked_linear
// CHECK: attn.attention
// LINEAR-LABEL: func @mask_region
// LINEAR-NOT: attn.chunked_linear
// LINEAR-NOT: attn.kv_state
// LINEAR: attn.attention
func.func @mask_region(%q: tensor<1x4x256x16xf32>) -> tensor<1x4x256x16xf32> {
  // expected-remark @+1 {{attn-reassociate: kept the quadratic form: region 'mask_mod' has no linear form here}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<relu>}
    : tensor<1x4x256x16xf32>, tensor<1x4x256x16xf32>, tensor<1x4x256x16xf32> -> tensor<1x4x256x16xf32>
    mask_mod {
    ^bb0(%b: index, %h: index, %i: index, %j: index):
      %c = arith.cmpi ule, %j, %i : index
      attn.yield %c : i1
    }
  return %0 : tensor<1x4x256x16xf32>
}
