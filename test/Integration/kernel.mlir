// Kernelized attention against the scalar reference: elu+1, relu and FAVOR+ feature maps (seeded, orthogonal, or from an operand), causal, eps, fully masked rows.
// DEFINE: %{tol} = --rtol 1e-4 --atol 1e-5 --max-rel-err 1e-5
// DEFINE: %{fn} =
// DEFINE: %{check} = attn-run %s --entry %{fn} --random-inputs --seed 7 --save-inputs %t/%{fn} --output %t/%{fn}.npy && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy %{tol}
// RUN: rm -rf %t && mkdir -p %t
// REDEFINE: %{fn} = elu_plus_one
// RUN: %{check}
// REDEFINE: %{fn} = elu_plus_one_causal
// RUN: %{check}
// REDEFINE: %{fn} = relu
// RUN: %{check}
// REDEFINE: %{fn} = relu_causal
// RUN: %{check}
// REDEFINE: %{fn} = favor
// RUN: %{check}
// REDEFINE: %{fn} = favor_orthogonal_causal
// RUN: %{check}
// REDEFINE: %{fn} = favor_projection
// RUN: %{check}
// REDEFINE: %{fn} = eps_window
// RUN: %{check}
// REDEFINE: %{fn} = relu_masked_rows
// RUN: %{check}

/// elu_plus_one feature map
func.func @elu_plus_one(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// elu_plus_one, causal
func.func @elu_plus_one_causal(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// relu feature map
func.func @relu(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<relu>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// relu, causal
func.func @relu_causal(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<relu>, pattern = #attn.causal}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// FAVOR+ with 32 seeded Gaussian features
func.func @favor(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<favor, features = 32, seed = 5>, scale = 0.25 : f32}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// FAVOR+ with 40 orthogonal features (3 blocks, the last truncated), causal
func.func @favor_orthogonal_causal(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<favor, features = 40, orthogonal = true, seed = 6>, pattern = #attn.causal, scale = 0.25 : f32}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// FAVOR+ with the projection as an operand
func.func @favor_projection(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>, %w: tensor<24x16xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value projection(%w : tensor<24x16xf32>) {normalizer = #attn.kernel<favor, features = 24>, scale = 0.25 : f32}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// eps in the denominator, a pattern that forces the quadratic form
func.func @eps_window(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one, eps = 0.5>, pattern = #attn.window<before = 7, after = 2>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// relu features, 50 queries over 30 keys: masked rows are zeros (0/0 = 0)
func.func @relu_masked_rows(%query: tensor<2x4x50x16xf32>, %key: tensor<2x2x30x16xf32>, %value: tensor<2x2x30x8xf32>) -> tensor<2x4x50x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<relu>, pattern = #attn.causal}
      : tensor<2x4x50x16xf32>, tensor<2x2x30x16xf32>, tensor<2x2x30x8xf32> -> tensor<2x4x50x8xf32>
  return %0 : tensor<2x4x50x8xf32>
}
