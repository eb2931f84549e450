// RUN: attn-opt %s --attn-decompose --split-input-file | FileCheck %s

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
