// Pointwise (ReLU-family) attention against the scalar reference: all eight h, alpha in {0, 0.5, 1}, masks, GQA, qk-layernorm, gate, bias.
// DEFINE: %{tol} = --rtol 1e-3 --atol 1e-4 --max-rel-err 1e-5
// DEFINE: %{fn} =
// DEFINE: %{check} = attn-run %s --entry %{fn} --random-inputs --seed 7 --save-inputs %t/%{fn} --output %t/%{fn}.npy && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy %{tol}
// RUN: rm -rf %t && mkdir -p %t
// REDEFINE: %{fn} = relu
// RUN: %{check}
// REDEFINE: %{fn} = relu2
// RUN: %{check}
// REDEFINE: %{fn} = gelu
// RUN: %{check}
// REDEFINE: %{fn} = softplus
// RUN: %{check}
// REDEFINE: %{fn} = identity
// RUN: %{check}
// REDEFINE: %{fn} = relu6
// RUN: %{check}
// REDEFINE: %{fn} = sigmoid
// RUN: %{check}
// REDEFINE: %{fn} = gelu_tanh
// RUN: %{check}
// REDEFINE: %{fn} = alpha0_causal
// RUN: %{check}
// REDEFINE: %{fn} = alpha_half_window
// RUN: %{check}
// REDEFINE: %{fn} = global
// RUN: %{check}
// REDEFINE: %{fn} = norm_gate
// RUN: %{check}
// REDEFINE: %{fn} = bias_lq_lk
// RUN: %{check}

/// relu, alpha = 1, all keys
func.func @relu(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// relu2, alpha = 1, all keys
func.func @relu2(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu2>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// gelu, alpha = 1, all keys
/// gelu_tanh (GELU's tanh approximation), alpha = 0.5, all keys
func.func @gelu_tanh(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<gelu_tanh, alpha = 0.5>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

func.func @gelu(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<gelu>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// softplus, alpha = 1, all keys
func.func @softplus(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<softplus>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// identity, alpha = 1, all keys
func.func @identity(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<identity>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// relu6, alpha = 1, all keys
func.func @relu6(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu6>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// sigmoid, alpha = 1, all keys
func.func @sigmoid(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<sigmoid>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// alpha = 0 (no length scaling), causal
func.func @alpha0_causal(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu, alpha = 0.0>, pattern = #attn.causal}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// alpha = 0.5, sliding window
func.func @alpha_half_window(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<gelu, alpha = 0.5>, pattern = #attn.window<before = 6, after = 6>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// causal plus global tokens
func.func @global(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu2>, pattern = #attn.union<[#attn.causal, #attn.global<[0, 3]>]>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// qk-layernorm and gate
func.func @norm_gate(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>, %gate: tensor<2x4x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value gate(%gate : tensor<2x4x67x8xf32>) {normalizer = #attn.pointwise<sigmoid>, qk_norm_eps = 1.0e-5 : f32}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// bias broadcast over heads, Lq != Lk
func.func @bias_lq_lk(%query: tensor<2x4x29x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>, %bias: tensor<2x1x29x67xf32>) -> tensor<2x4x29x8xf32> {
  %0 = attn.attention %query, %key, %value bias(%bias : tensor<2x1x29x67xf32>) {normalizer = #attn.pointwise<softplus>, pattern = #attn.causal}
      : tensor<2x4x29x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x29x8xf32>
  return %0 : tensor<2x4x29x8xf32>
}
