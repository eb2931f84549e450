// f16 and bf16 inputs and results with f32 accumulation, against the scalar reference (which reads the same rounded inputs); the tolerance is the rounding of the result.
// DEFINE: %{tol} = --rtol 1e-2 --atol 1e-2
// DEFINE: %{fn} =
// DEFINE: %{check} = attn-run %s --entry %{fn} --random-inputs --seed 11 --save-inputs %t/%{fn} --output %t/%{fn}.npy && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy %{tol}
// RUN: rm -rf %t && mkdir -p %t
// REDEFINE: %{fn} = softmax_causal_f16
// RUN: %{check}
// REDEFINE: %{fn} = relu_f16
// RUN: %{check}
// REDEFINE: %{fn} = linear_f16
// RUN: %{check}
// REDEFINE: %{fn} = softmax_causal_bf16
// RUN: %{check}
// REDEFINE: %{fn} = relu_bf16
// RUN: %{check}
// REDEFINE: %{fn} = linear_bf16
// RUN: %{check}

/// Causal softmax on f16 inputs, f32 accumulation.
func.func @softmax_causal_f16(%query: tensor<2x4x45x16xf16>, %key: tensor<2x2x45x16xf16>, %value: tensor<2x2x45x16xf16>) -> tensor<2x4x45x16xf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<2x4x45x16xf16>, tensor<2x2x45x16xf16>, tensor<2x2x45x16xf16> -> tensor<2x4x45x16xf16>
  return %0 : tensor<2x4x45x16xf16>
}

/// ReLU attention on f16 inputs.
func.func @relu_f16(%query: tensor<2x4x45x16xf16>, %key: tensor<2x2x45x16xf16>, %value: tensor<2x2x45x16xf16>) -> tensor<2x4x45x16xf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.window<before = 8, after = 8>} : tensor<2x4x45x16xf16>, tensor<2x2x45x16xf16>, tensor<2x2x45x16xf16> -> tensor<2x4x45x16xf16>
  return %0 : tensor<2x4x45x16xf16>
}

/// Linear attention on f16 inputs.
func.func @linear_f16(%query: tensor<2x4x45x16xf16>, %key: tensor<2x2x45x16xf16>, %value: tensor<2x2x45x16xf16>) -> tensor<2x4x45x16xf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal} : tensor<2x4x45x16xf16>, tensor<2x2x45x16xf16>, tensor<2x2x45x16xf16> -> tensor<2x4x45x16xf16>
  return %0 : tensor<2x4x45x16xf16>
}

/// Causal softmax on bf16 inputs, f32 accumulation.
func.func @softmax_causal_bf16(%query: tensor<2x4x45x16xbf16>, %key: tensor<2x2x45x16xbf16>, %value: tensor<2x2x45x16xbf16>) -> tensor<2x4x45x16xbf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<2x4x45x16xbf16>, tensor<2x2x45x16xbf16>, tensor<2x2x45x16xbf16> -> tensor<2x4x45x16xbf16>
  return %0 : tensor<2x4x45x16xbf16>
}

/// ReLU attention on bf16 inputs.
func.func @relu_bf16(%query: tensor<2x4x45x16xbf16>, %key: tensor<2x2x45x16xbf16>, %value: tensor<2x2x45x16xbf16>) -> tensor<2x4x45x16xbf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.window<before = 8, after = 8>} : tensor<2x4x45x16xbf16>, tensor<2x2x45x16xbf16>, tensor<2x2x45x16xbf16> -> tensor<2x4x45x16xbf16>
  return %0 : tensor<2x4x45x16xbf16>
}

/// Linear attention on bf16 inputs.
func.func @linear_bf16(%query: tensor<2x4x45x16xbf16>, %key: tensor<2x2x45x16xbf16>, %value: tensor<2x2x45x16xbf16>) -> tensor<2x4x45x16xbf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal} : tensor<2x4x45x16xbf16>, tensor<2x2x45x16xbf16>, tensor<2x2x45x16xbf16> -> tensor<2x4x45x16xbf16>
  return %0 : tensor<2x4x45x16xbf16>
}
