// RUN: attn-opt %s --attn-decompose --split-input-file --verify-diagnostics | FileCheck %s

/// Softmax attention with qk-layernorm, bias, gate and segments: every
/// attribute and operand lands on the step that uses it; the default scale
/// 1/sqrt(16) becomes explicit on attn.scores.
// CHECK-LABEL: func @softmax
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x4x32x16xf32>, %[[K:[^:]+]]: tensor<1x2x32x16xf32>, %[[BIAS:[^:]+]]: tensor<1x1x32x32xf32>, %[[GATE:[^:]+]]: tensor<1x4x32x16xf32>, %[[IDS:[^:]+]]: tensor<1x32xi32>)
// CHECK: %[[QN:.+]] = attn.layer_norm %[[Q]] {epsilon = 9.99999974E-6 : f32}
// CHECK: %[[KN:.+]] = attn.layer_norm %[[K]] {epsilon = 9.99999974E-6 : f32}
// CHECK: %[[S:.+]] = attn.scores %[[QN]], %[[KN]] bias(%[[BIAS]] : tensor<1x1x32x32xf32>) {scale = 2.500000e-01 : f32} : tensor<1x4x32x16xf32>, tensor<1x2x32x16xf32> -> tensor<1x4x32x32xf32>
// CHECK: %[[P:.+]] = attn.normalize %[[S]] segments(%[[IDS]] : tensor<1x32xi32>) {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>}
// CHECK: %[[O:.+]] = attn.apply %[[P]], %[[K]] gate(%[[GATE]] : tensor<1x4x32x16xf32>)
// CHECK: return %[[O]]
func.func @softmax(%q: tensor<1x4x32x16xf32>, %k: tensor<1x2x32x16xf32>, %bias: tensor<1x1x32x32xf32>,
                   %gate: tensor<1x4x32x16xf32>, %ids: tensor<1x32xi32>) -> tensor<1x4x32x16xf32> {
  %0 = attn.attention %q, %k, %k bias(%bias : tensor<1x1x32x32xf32>) gate(%gate : tensor<1x4x32x16xf32>)
      segments(%ids : tensor<1x32xi32>)
      {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>, qk_norm_eps = 1.0e-5 : f32}
      : tensor<1x4x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32> -> tensor<1x4x32x16xf32>
  return %0 : tensor<1x4x32x16xf32>
}

// -----

/// Kernel attention: feature maps (with sqrt(scale) on their inputs), scores
/// without scale, kernel normalization.
// CHECK-LABEL: func @favor
// CHECK: %[[FQ:.+]] = attn.feature_map %{{.*}} {input_scale = 5.000000e-01 : f32, kernel = #attn.kernel<favor, features = 8, seed = 2>} : tensor<1x2x32x16xf32> -> tensor<1x2x32x8xf32>
// CHECK: %[[FK:.+]] = attn.feature_map %{{.*}} {input_scale = 5.000000e-01 : f32, kernel = #attn.kernel<favor, features = 8, seed = 2>}
// CHECK: %[[S:.+]] = attn.scores %[[FQ]], %[[FK]] : tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x2x32x32xf32>
// CHECK: attn.normalize %[[S]] {normalizer = #attn.kernel<favor, features = 8, seed = 2>}
func.func @favor(%q: tensor<1x2x32x16xf32>) -> tensor<1x2x32x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<favor, features = 8, seed = 2>, scale = 0.25 : f32}
      : tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32>, tensor<1x2x32x16xf32> -> tensor<1x2x32x16xf32>
  return %0 : tensor<1x2x32x16xf32>
}

// -----

/// Other ops are left alone.
// CHECK-LABEL: func @lowrank
// CHECK: attn.lowrank_attention
func.func @lowrank(%q: tensor<1x2x16x8xf32>, %e: tensor<4x16xf32>) -> tensor<1x2x16x8xf32> {
  %0 = attn.lowrank_attention %q, %q, %q, %e, %e
      : tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<4x16xf32>, tensor<4x16xf32> -> tensor<1x2x16x8xf32>
  return %0 : tensor<1x2x16x8xf32>
}

// -----

/// Dynamic sizes: the steps assume the sizes agree, so they run under the
/// op's run-time checks (the hook reports a mismatch).
// CHECK-LABEL: func @dynamic
// CHECK: func.call @attn_opt_runtime_error
// CHECK: %[[R:.+]] = scf.if %{{.+}} -> (tensor<?x4x?x8xf32>) {
// CHECK:   %[[S:.+]] = attn.scores %arg0, %arg1 {scale = 2.500000e-01 : f32} : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x?xf32>
// CHECK:   %[[P:.+]] = attn.normalize %[[S]] {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<?x4x?x?xf32> -> tensor<?x4x?x?xf32>
// CHECK:   attn.apply %[[P]], %arg2
// CHECK: } else {
// CHECK:   tensor.empty
// CHECK: return %[[R]]
func.func @dynamic(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}

// -----

/// A varlen batch has no decomposed form: kept, with a remark.
// CHECK-LABEL: func @varlen
// CHECK: attn.attention {{.*}}key_lengths
// CHECK-NOT: attn.scores
func.func @varlen(%q: tensor<2x4x64x16xf32>, %lk: tensor<2xi32>) -> tensor<2x4x64x16xf32> {
  // expected-remark @+1 {{attn-decompose: kept attn.attention: its varlen operands (lengths or offsets) have no decomposed form}}
  %0 = attn.attention %q, %q, %q key_lengths(%lk : tensor<2xi32>) {normalizer = #attn.softmax}
    : tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32>, tensor<2x4x64x16xf32> -> tensor<2x4x64x16xf32>
  return %0 : tensor<2x4x64x16xf32>
}

// -----

/// Score modifiers have no decomposed form either.
// CHECK-LABEL: func @score_modifiers
// CHECK: attn.attention
func.func @score_modifiers(%q: tensor<1x4x64x16xf32>, %t: tensor<4xf32>) -> tensor<1x4x64x16xf32> {
  // expected-remark @+1 {{attn-decompose: kept attn.attention: its score modifiers (softcap, ALiBi, sinks, score or mask regions) have no decomposed form}}
  %0 = attn.attention %q, %q, %q sinks(%t : tensor<4xf32>) {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return %0 : tensor<1x4x64x16xf32>
}

// -----

/// Nor has a log-sum-exp result.
// CHECK-LABEL: func @lse
// CHECK: attn.attention
func.func @lse(%q: tensor<1x4x64x16xf32>) -> tensor<1x4x64xf32> {
  // expected-remark @+1 {{attn-decompose: kept attn.attention: its log-sum-exp result has no decomposed form}}
  %0, %1 = attn.attention %q, %q, %q {normalizer = #attn.softmax} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>, tensor<1x4x64xf32>
  return %1 : tensor<1x4x64xf32>
}
