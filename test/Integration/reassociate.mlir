// The reassociated (linear) forms against the scalar reference's quadratic
// form, f32, normwise relative error <= 1e-4: elu+1, relu and FAVOR+ features,
// causal or not, grouped-query heads, segment masks, and chunk sizes that
// divide L = 100 or not (16, 24, 100, 7). The remark proves the linear form
// was used.
// DEFINE: %{fn} =
// DEFINE: %{chunk} =
// DEFINE: %{out} = %t/%{fn}-%{chunk}
// DEFINE: %{check} = attn-run %s --entry %{fn} --pipeline 'attn-lower-to-llvm-pipeline{reassociate=linear chunk-size=%{chunk}}' --remarks --random-inputs --seed 5 --save-inputs %{out} --output %{out}.npy 2> %{out}.log && FileCheck %s --check-prefix=LINEAR --input-file %{out}.log && attn-ref %s --entry %{fn} --inputs %{out} --compare %{out}.npy --rtol 1e-3 --atol 1e-4 --max-rel-err 1e-4
// LINEAR: remark: attn-reassociate: linear form
// RUN: rm -rf %t && mkdir -p %t
// REDEFINE: %{fn} = elu
// REDEFINE: %{chunk} = 0
// RUN: %{check}
// REDEFINE: %{fn} = elu_causal
// REDEFINE: %{chunk} = 16
// RUN: %{check}
// REDEFINE: %{fn} = elu_causal
// REDEFINE: %{chunk} = 24
// RUN: %{check}
// REDEFINE: %{fn} = elu_causal
// REDEFINE: %{chunk} = 100
// RUN: %{check}
// REDEFINE: %{fn} = elu_causal
// REDEFINE: %{chunk} = 7
// RUN: %{check}
// REDEFINE: %{fn} = relu
// REDEFINE: %{chunk} = 0
// RUN: %{check}
// REDEFINE: %{fn} = relu_causal
// REDEFINE: %{chunk} = 16
// RUN: %{check}
// REDEFINE: %{fn} = relu_causal
// REDEFINE: %{chunk} = 24
// RUN: %{check}
// REDEFINE: %{fn} = relu_causal
// REDEFINE: %{chunk} = 100
// RUN: %{check}
// REDEFINE: %{fn} = relu_causal
// REDEFINE: %{chunk} = 7
// RUN: %{check}
// REDEFINE: %{fn} = favor
// REDEFINE: %{chunk} = 0
// RUN: %{check}
// REDEFINE: %{fn} = favor_causal
// REDEFINE: %{chunk} = 16
// RUN: %{check}
// REDEFINE: %{fn} = favor_causal
// REDEFINE: %{chunk} = 24
// RUN: %{check}
// REDEFINE: %{fn} = favor_causal
// REDEFINE: %{chunk} = 100
// RUN: %{check}
// REDEFINE: %{fn} = favor_causal
// REDEFINE: %{chunk} = 7
// RUN: %{check}
// REDEFINE: %{fn} = segments_causal
// REDEFINE: %{chunk} = 16
// RUN: %{check}
// REDEFINE: %{fn} = segments_causal
// REDEFINE: %{chunk} = 24
// RUN: %{check}
// REDEFINE: %{fn} = segments_causal
// REDEFINE: %{chunk} = 100
// RUN: %{check}
// REDEFINE: %{fn} = segments_causal
// REDEFINE: %{chunk} = 7
// RUN: %{check}
// REDEFINE: %{fn} = segments
// REDEFINE: %{chunk} = 16
// RUN: %{check}
// REDEFINE: %{fn} = segments
// REDEFINE: %{chunk} = 24
// RUN: %{check}
// REDEFINE: %{fn} = segments
// REDEFINE: %{chunk} = 100
// RUN: %{check}
// REDEFINE: %{fn} = segments
// REDEFINE: %{chunk} = 7
// RUN: %{check}

/// Unsorted segment ids: the generated code detects them and takes the
/// quadratic fallback, still exact.
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/unsorted.npy --dtype '<i4' --shape 2,100 --cycle 3
// RUN: attn-run %s --entry segments_causal --input ids=%t/unsorted.npy --random-inputs --seed 6 --save-inputs %t/unsorted --output %t/unsorted-out.npy
// RUN: attn-ref %s --entry segments_causal --inputs %t/unsorted --compare %t/unsorted-out.npy --rtol 1e-3 --atol 1e-4 --max-rel-err 1e-4
// RUN: attn-run %s --entry segments --input ids=%t/unsorted.npy --random-inputs --seed 6 --save-inputs %t/unsorted2 --output %t/unsorted2-out.npy
// RUN: attn-ref %s --entry segments --inputs %t/unsorted2 --compare %t/unsorted2-out.npy --rtol 1e-3 --atol 1e-4 --max-rel-err 1e-4

/// elu+1, grouped-query heads: kv_state / state_apply
func.func @elu(%query: tensor<2x4x100x16xf32>, %key: tensor<2x2x100x16xf32>, %value: tensor<2x2x100x8xf32>) -> tensor<2x4x100x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>}
      : tensor<2x4x100x16xf32>, tensor<2x2x100x16xf32>, tensor<2x2x100x8xf32> -> tensor<2x4x100x8xf32>
  return %0 : tensor<2x4x100x8xf32>
}

/// elu+1, causal: chunked prefix form
func.func @elu_causal(%query: tensor<2x4x100x16xf32>, %key: tensor<2x2x100x16xf32>, %value: tensor<2x2x100x8xf32>) -> tensor<2x4x100x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal}
      : tensor<2x4x100x16xf32>, tensor<2x2x100x16xf32>, tensor<2x2x100x8xf32> -> tensor<2x4x100x8xf32>
  return %0 : tensor<2x4x100x8xf32>
}

/// relu features with eps
func.func @relu(%query: tensor<2x4x100x16xf32>, %key: tensor<2x2x100x16xf32>, %value: tensor<2x2x100x8xf32>) -> tensor<2x4x100x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<relu, eps = 1.0e-3>}
      : tensor<2x4x100x16xf32>, tensor<2x2x100x16xf32>, tensor<2x2x100x8xf32> -> tensor<2x4x100x8xf32>
  return %0 : tensor<2x4x100x8xf32>
}

/// relu features, causal
func.func @relu_causal(%query: tensor<2x4x100x16xf32>, %key: tensor<2x2x100x16xf32>, %value: tensor<2x2x100x8xf32>) -> tensor<2x4x100x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<relu>, pattern = #attn.causal}
      : tensor<2x4x100x16xf32>, tensor<2x2x100x16xf32>, tensor<2x2x100x8xf32> -> tensor<2x4x100x8xf32>
  return %0 : tensor<2x4x100x8xf32>
}

/// FAVOR+, 48 Gaussian features
func.func @favor(%query: tensor<2x4x100x16xf32>, %key: tensor<2x2x100x16xf32>, %value: tensor<2x2x100x8xf32>) -> tensor<2x4x100x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<favor, features = 48, seed = 2>, scale = 0.25 : f32}
      : tensor<2x4x100x16xf32>, tensor<2x2x100x16xf32>, tensor<2x2x100x8xf32> -> tensor<2x4x100x8xf32>
  return %0 : tensor<2x4x100x8xf32>
}

/// FAVOR+, 40 orthogonal features, causal
func.func @favor_causal(%query: tensor<2x4x100x16xf32>, %key: tensor<2x2x100x16xf32>, %value: tensor<2x2x100x8xf32>) -> tensor<2x4x100x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<favor, features = 40, orthogonal = true, seed = 3>, pattern = #attn.causal, scale = 0.25 : f32}
      : tensor<2x4x100x16xf32>, tensor<2x2x100x16xf32>, tensor<2x2x100x8xf32> -> tensor<2x4x100x8xf32>
  return %0 : tensor<2x4x100x8xf32>
}

/// packed documents, causal (random ids are sorted per row)
func.func @segments_causal(%query: tensor<2x4x100x16xf32>, %key: tensor<2x2x100x16xf32>, %value: tensor<2x2x100x8xf32>, %ids: tensor<2x100xi32>) -> tensor<2x4x100x8xf32> {
  %0 = attn.attention %query, %key, %value segments(%ids : tensor<2x100xi32>) {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.intersect<[#attn.causal, #attn.segments]>}
      : tensor<2x4x100x16xf32>, tensor<2x2x100x16xf32>, tensor<2x2x100x8xf32> -> tensor<2x4x100x8xf32>
  return %0 : tensor<2x4x100x8xf32>
}

/// packed documents, not causal: forward and backward sweeps
func.func @segments(%query: tensor<2x4x100x16xf32>, %key: tensor<2x2x100x16xf32>, %value: tensor<2x2x100x8xf32>, %ids: tensor<2x100xi32>) -> tensor<2x4x100x8xf32> {
  %0 = attn.attention %query, %key, %value segments(%ids : tensor<2x100xi32>) {normalizer = #attn.kernel<relu>, pattern = #attn.segments}
      : tensor<2x4x100x16xf32>, tensor<2x2x100x16xf32>, tensor<2x2x100x8xf32> -> tensor<2x4x100x8xf32>
  return %0 : tensor<2x4x100x8xf32>
}
