// RUN: attn-opt %s --attn-approximate-softmax="features=128 seed=5" --verify-diagnostics | FileCheck %s

/// Softmax becomes FAVOR+ with the same (here default, 1/sqrt(64)) scale;
/// masks, gates and heads are kept.
// CHECK-LABEL: func @approximate
// CHECK: attn.attention {{.*}} {normalizer = #attn.kernel<favor, features = 128, orthogonal = true, seed = 5>, pattern = #attn.causal, scale = 1.250000e-01 : f32}
/// A bias does not apply to kernel attention: left exact.
// CHECK: {normalizer = #attn.softmax}
/// Other normalizers are left alone.
// CHECK: {normalizer = #attn.pointwise<relu>}
func.func @approximate(%q: tensor<1x2x128x64xf32>, %b: tensor<1x1x128x128xf32>) {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32> -> tensor<1x2x128x64xf32>
  // expected-remark @+1 {{attn-approximate-softmax: left exact: a bias does not apply to kernel attention}}
  %1 = attn.attention %q, %q, %q bias(%b : tensor<1x1x128x128xf32>) {normalizer = #attn.softmax}
      : tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32> -> tensor<1x2x128x64xf32>
  %2 = attn.attention %q, %q, %q {normalizer = #attn.pointwise<relu>}
      : tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32> -> tensor<1x2x128x64xf32>
  return
}

/// Soft-capping, ALiBi and sinks have no kernel form: left exact.
// CHECK-LABEL: func @score_modifiers
// CHECK: {normalizer = #attn.softmax, softcap = 3.000000e+01 : f32}
func.func @score_modifiers(%q: tensor<1x2x128x64xf32>) {
  // expected-remark @+1 {{attn-approximate-softmax: left exact: softcap, ALiBi, sinks and score or mask regions do not apply to its kernel attention}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, softcap = 30.0 : f32}
      : tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32>, tensor<1x2x128x64xf32> -> tensor<1x2x128x64xf32>
  return
}
