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
// REDEFINE: %{fn} = lowrank_odd
// RUN: %{check}
// REDEFINE: %{fn} = lowrank_bf16
// REDEFINE: %{tol} = --rtol 2e-2 --atol 2e-2
// RUN: %{check}
// The default pipeline projects the keys and values (tiled contractions) and
// runs the flash kernel over the projected rows.
// RUN: attn-run %s --entry lowrank_odd --random-inputs --remarks 2>&1 | FileCheck %s --check-prefix=REMARKS
// REMARKS: attn-project-lowrank: keys and values projected to 77 rows
// REMARKS: attn-flash: tiles of
// REMARKS: attn-vectorize-contractions: register tiles

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

/// Odd lengths: 300 keys projected to 77 rows, 77 queries.
func.func @lowrank_odd(%query: tensor<1x3x77x24xf32>, %key: tensor<1x3x300x24xf32>, %value: tensor<1x3x300x16xf32>, %e: tensor<77x300xf32>, %f: tensor<77x300xf32>) -> tensor<1x3x77x16xf32> {
  %0 = attn.lowrank_attention %query, %key, %value, %e, %f {scale = 0.05 : f32} : tensor<1x3x77x24xf32>, tensor<1x3x300x24xf32>, tensor<1x3x300x16xf32>, tensor<77x300xf32>, tensor<77x300xf32> -> tensor<1x3x77x16xf32>
  return %0 : tensor<1x3x77x16xf32>
}

/// bf16 operands (computed in f32, the result rounded to bf16).
func.func @lowrank_bf16(%query: tensor<1x2x77x16xbf16>, %key: tensor<1x2x77x16xbf16>, %value: tensor<1x2x77x16xbf16>, %e: tensor<20x77xbf16>, %f: tensor<20x77xbf16>) -> tensor<1x2x77x16xbf16> {
  %0 = attn.lowrank_attention %query, %key, %value, %e, %f {scale = 0.05 : f32} : tensor<1x2x77x16xbf16>, tensor<1x2x77x16xbf16>, tensor<1x2x77x16xbf16>, tensor<20x77xbf16>, tensor<20x77xbf16> -> tensor<1x2x77x16xbf16>
  return %0 : tensor<1x2x77x16xbf16>
}
