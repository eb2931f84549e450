// attn-decompose, then the reference lowering, computes exactly what the
// op computes (bit for bit: --check with zero tolerance), and matches the
// scalar reference.
// DEFINE: %{fn} =
// DEFINE: %{check} = attn-run %s --entry %{fn} --pipeline 'attn-decompose,attn-lower-to-llvm-pipeline{reference=1}' --check --rtol 0 --atol 0 --random-inputs --seed 9 --save-inputs %t/%{fn} --output %t/%{fn}.npy | FileCheck %s && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy --max-rel-err 1e-5
// CHECK: check result0: max_abs_err=0.000e+00 {{.*}} ok
// RUN: rm -rf %t && mkdir -p %t
// REDEFINE: %{fn} = softmax_everything
// RUN: %{check}
// REDEFINE: %{fn} = pointwise
// RUN: %{check}
// REDEFINE: %{fn} = favor
// RUN: %{check}

/// qk-layernorm, bias, gate, segments and a causal mask, GQA.
func.func @softmax_everything(%query: tensor<2x4x37x16xf32>, %key: tensor<2x2x37x16xf32>, %value: tensor<2x2x37x8xf32>,
                              %bias: tensor<2x1x37x37xf32>, %gate: tensor<2x4x37x8xf32>, %ids: tensor<2x37xi64>) -> tensor<2x4x37x8xf32> {
  %0 = attn.attention %query, %key, %value bias(%bias : tensor<2x1x37x37xf32>) gate(%gate : tensor<2x4x37x8xf32>)
      segments(%ids : tensor<2x37xi64>)
      {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>, qk_norm_eps = 1.0e-5 : f32}
      : tensor<2x4x37x16xf32>, tensor<2x2x37x16xf32>, tensor<2x2x37x8xf32> -> tensor<2x4x37x8xf32>
  return %0 : tensor<2x4x37x8xf32>
}

/// Pointwise with a window.
func.func @pointwise(%query: tensor<1x2x50x16xf32>, %key: tensor<1x2x50x16xf32>, %value: tensor<1x2x50x16xf32>) -> tensor<1x2x50x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<gelu, alpha = 0.5>, pattern = #attn.window<before = 5, after = 5>}
      : tensor<1x2x50x16xf32>, tensor<1x2x50x16xf32>, tensor<1x2x50x16xf32> -> tensor<1x2x50x16xf32>
  return %0 : tensor<1x2x50x16xf32>
}

/// FAVOR+ (quadratic form, the decomposition keeps it).
func.func @favor(%query: tensor<1x2x50x16xf32>, %key: tensor<1x2x50x16xf32>, %value: tensor<1x2x50x16xf32>) -> tensor<1x2x50x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<favor, features = 24, seed = 1>, scale = 0.25 : f32}
      : tensor<1x2x50x16xf32>, tensor<1x2x50x16xf32>, tensor<1x2x50x16xf32> -> tensor<1x2x50x16xf32>
  return %0 : tensor<1x2x50x16xf32>
}
