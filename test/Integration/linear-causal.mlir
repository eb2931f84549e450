// The fused causal chunked kernel of attn-linear-kernels (one kernel per
// query head carrying S and z through the chunks, the triangle of each chunk
// in register tiles) against the scalar reference's quadratic form: elu+1
// and relu, odd lengths (77, 300: a ragged last chunk; 20: one chunk shorter
// than the chunk size), grouped-query heads, Dv != D, a gate, the op's scale,
// bf16 inputs, FAVOR+ (seeded and from a projection operand), chunk sizes
// 16, 32 and the default, at 8 and 16 lanes. The remarks prove the fused
// kernel ran.
// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{fn} =
// DEFINE: %{opts} = vector-width=8 reassociate=linear
// DEFINE: %{tol} = --rtol 1e-4 --atol 1e-5
// DEFINE: %{check} = attn-run %s --entry %{fn} --pipeline="attn-lower-to-llvm-pipeline{%{opts}}" --remarks --random-inputs --seed 9 --save-inputs %t/%{fn} --output %t/%{fn}.npy 2> %t/%{fn}.log > /dev/null && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy %{tol} && FileCheck %s --check-prefix=FUSED < %t/%{fn}.log
// FUSED: remark: attn-linear-kernels: causal chunked form in one kernel per query head
// REDEFINE: %{fn} = elu_gqa
// RUN: %{check}
// REDEFINE: %{fn} = relu_scaled_gate
// RUN: %{check}
// REDEFINE: %{fn} = short
// RUN: %{check}
// REDEFINE: %{opts} = vector-width=8 reassociate=linear chunk-size=16
// REDEFINE: %{fn} = elu_gqa
// RUN: %{check}
// REDEFINE: %{opts} = vector-width=16 reassociate=linear
// REDEFINE: %{fn} = short
// RUN: %{check}
// REDEFINE: %{fn} = favor
// RUN: %{check}
// REDEFINE: %{opts} = vector-width=16 reassociate=linear chunk-size=32
// REDEFINE: %{fn} = relu_scaled_gate
// RUN: %{check}
// REDEFINE: %{opts} = vector-width=8 reassociate=linear
// RUN: %{check}
// REDEFINE: %{fn} = favor_projection
// RUN: %{check}
// REDEFINE: %{tol} = --rtol 1e-2 --atol 1e-2
// REDEFINE: %{fn} = elu_bf16
// RUN: %{check}

func.func @elu_gqa(%query: tensor<2x4x300x32xf32>, %key: tensor<2x2x300x32xf32>, %value: tensor<2x2x300x24xf32>) -> tensor<2x4x300x24xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal} : tensor<2x4x300x32xf32>, tensor<2x2x300x32xf32>, tensor<2x2x300x24xf32> -> tensor<2x4x300x24xf32>
  return %0 : tensor<2x4x300x24xf32>
}

func.func @relu_scaled_gate(%query: tensor<1x3x77x16xf32>, %key: tensor<1x3x77x16xf32>, %value: tensor<1x3x77x32xf32>, %gate: tensor<1x3x77x32xf32>) -> tensor<1x3x77x32xf32> {
  %0 = attn.attention %query, %key, %value gate(%gate : tensor<1x3x77x32xf32>) {normalizer = #attn.kernel<relu>, pattern = #attn.causal, scale = 0.3 : f32} : tensor<1x3x77x16xf32>, tensor<1x3x77x16xf32>, tensor<1x3x77x32xf32> -> tensor<1x3x77x32xf32>
  return %0 : tensor<1x3x77x32xf32>
}

// Shorter than one chunk.
func.func @short(%query: tensor<1x2x20x16xf32>, %key: tensor<1x2x20x16xf32>, %value: tensor<1x2x20x16xf32>) -> tensor<1x2x20x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal} : tensor<1x2x20x16xf32>, tensor<1x2x20x16xf32>, tensor<1x2x20x16xf32> -> tensor<1x2x20x16xf32>
  return %0 : tensor<1x2x20x16xf32>
}

func.func @favor(%query: tensor<1x2x300x16xf32>, %key: tensor<1x2x300x16xf32>, %value: tensor<1x2x300x16xf32>) -> tensor<1x2x300x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<favor, features = 32, seed = 3>, pattern = #attn.causal} : tensor<1x2x300x16xf32>, tensor<1x2x300x16xf32>, tensor<1x2x300x16xf32> -> tensor<1x2x300x16xf32>
  return %0 : tensor<1x2x300x16xf32>
}

func.func @favor_projection(%query: tensor<2x4x77x16xf32>, %key: tensor<2x2x77x16xf32>, %value: tensor<2x2x77x32xf32>, %w: tensor<48x16xf32>) -> tensor<2x4x77x32xf32> {
  %0 = attn.attention %query, %key, %value projection(%w : tensor<48x16xf32>) {normalizer = #attn.kernel<favor, features = 48>, pattern = #attn.causal, scale = 0.25 : f32} : tensor<2x4x77x16xf32>, tensor<2x2x77x16xf32>, tensor<2x2x77x32xf32> -> tensor<2x4x77x32xf32>
  return %0 : tensor<2x4x77x32xf32>
}

func.func @elu_bf16(%query: tensor<1x2x77x32xbf16>, %key: tensor<1x2x77x32xbf16>, %value: tensor<1x2x77x32xbf16>) -> tensor<1x2x77x32xbf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal} : tensor<1x2x77x32xbf16>, tensor<1x2x77x32xbf16>, tensor<1x2x77x32xbf16> -> tensor<1x2x77x32xbf16>
  return %0 : tensor<1x2x77x32xbf16>
}
