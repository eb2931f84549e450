// Linformer low-rank attention against the scalar reference. The projected
// keys are large (sums of 75 products), so scores are peaked and the
// elementwise tolerance is looser; the normwise error stays below 1e-5.
// DEFINE: %{tol} = --rtol 1e-3 --atol 1e-4 --max-rel-err 1e-5
// DEFINE: %{fn} =
// DEFINE: %{check} = attn-run %s --entry %{fn} --random-inputs --seed 11 --save-inputs %t/%{fn} --output %t/%{fn}.npy && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy %{tol}
// RUN: rm -rf %t && mkdir -p %t
// REDEFINE: %{fn} = lowrank
// RUN: %{check}
// REDEFINE: %{fn} = lowrank_lq_lk
// RUN: %{check}

/// Linformer with 12 projected rows, grouped-query heads.
func.func @lowrank(%query: tensor<2x4x75x16xf32>, %key: tensor<2x2x75x16xf32>, %value: tensor<2x2x75x8xf32>, %e: tensor<12x75xf32>, %f: tensor<12x75xf32>) -> tensor<2x4x75x8xf32> {
  %0 = attn.lowrank_attention %query, %key, %value, %e, %f : tensor<2x4x75x16xf32>, tensor<2x2x75x16xf32>, tensor<2x2x75x8xf32>, tensor<12x75xf32>, tensor<12x75xf32> -> tensor<2x4x75x8xf32>
  return %0 : tensor<2x4x75x8xf32>
}

/// Linformer with Lq != Lk and an explicit scale.
func.func @lowrank_lq_lk(%query: tensor<1x2x40x8xf32>, %key: tensor<1x2x64x8xf32>, %value: tensor<1x2x64x8xf32>, %e: tensor<16x64xf32>, %f: tensor<16x64xf32>) -> tensor<1x2x40x8xf32> {
  %0 = attn.lowrank_attention %query, %key, %value, %e, %f {scale = 0.5 : f32} : tensor<1x2x40x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<16x64xf32>, tensor<16x64xf32> -> tensor<1x2x40x8xf32>
  return %0 : tensor<1x2x40x8xf32>
}
