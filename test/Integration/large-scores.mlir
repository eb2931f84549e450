// Scores up to about |1e4| (inputs scaled by 60 give scores with a standard
// deviation near 1e4 after the 1/4 scale): the online softmax subtracts the
// running maximum, so nothing overflows; the result has no inf or NaN and
// matches the scalar reference. Softmax is nearly one-hot here, so score
// rounding (1e-7 relative, ~1e-3 absolute) moves the weights by ~1e-3.
// DEFINE: %{fn} =
// DEFINE: %{check} = attn-run %s --entry %{fn} --random-inputs --seed 21 --input-scale 60 --save-inputs %t/%{fn} --output %t/%{fn}.npy | FileCheck %s && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy --rtol 1e-2 --atol 1e-1 --max-rel-err 1e-2
// CHECK: result result0: 2x4x77x16xf32 mean={{.*}} max_abs={{[0-9.e+]+$}}
// CHECK-NOT: non_finite
// RUN: rm -rf %t && mkdir -p %t
// REDEFINE: %{fn} = dense
// RUN: %{check}
// REDEFINE: %{fn} = causal
// RUN: %{check}
// REDEFINE: %{fn} = window_gqa
// RUN: %{check}

func.func @dense(%query: tensor<2x4x77x16xf32>, %key: tensor<2x4x77x16xf32>, %value: tensor<2x4x77x16xf32>) -> tensor<2x4x77x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax}
      : tensor<2x4x77x16xf32>, tensor<2x4x77x16xf32>, tensor<2x4x77x16xf32> -> tensor<2x4x77x16xf32>
  return %0 : tensor<2x4x77x16xf32>
}

func.func @causal(%query: tensor<2x4x77x16xf32>, %key: tensor<2x4x77x16xf32>, %value: tensor<2x4x77x16xf32>) -> tensor<2x4x77x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<2x4x77x16xf32>, tensor<2x4x77x16xf32>, tensor<2x4x77x16xf32> -> tensor<2x4x77x16xf32>
  return %0 : tensor<2x4x77x16xf32>
}

func.func @window_gqa(%query: tensor<2x4x77x16xf32>, %key: tensor<2x1x77x16xf32>, %value: tensor<2x1x77x16xf32>) -> tensor<2x4x77x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 10, after = 3>}
      : tensor<2x4x77x16xf32>, tensor<2x1x77x16xf32>, tensor<2x1x77x16xf32> -> tensor<2x4x77x16xf32>
  return %0 : tensor<2x4x77x16xf32>
}
