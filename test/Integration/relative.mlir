// Transformer-XL relative attention against the scalar reference.
// DEFINE: %{tol} = --rtol 1e-4 --atol 1e-5 --max-rel-err 1e-5
// DEFINE: %{fn} =
// DEFINE: %{check} = attn-run %s --entry %{fn} --random-inputs --seed 11 --save-inputs %t/%{fn} --output %t/%{fn}.npy && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy %{tol}
// RUN: rm -rf %t && mkdir -p %t
// REDEFINE: %{fn} = memory
// RUN: %{check}
// REDEFINE: %{fn} = no_memory
// RUN: %{check}

/// Transformer-XL with 20 memory positions.
func.func @memory(%query: tensor<2x3x33x16xf32>, %key: tensor<2x3x33x16xf32>, %value: tensor<2x3x33x16xf32>, %pos: tensor<3x53x16xf32>, %u: tensor<3x16xf32>, %v: tensor<3x16xf32>, %mk: tensor<2x3x20x16xf32>, %mv: tensor<2x3x20x16xf32>) -> tensor<2x3x33x16xf32> {
  %0 = attn.relative_attention %query, %key, %value, %pos, %u, %v memory(%mk, %mv : tensor<2x3x20x16xf32>, tensor<2x3x20x16xf32>)
      : tensor<2x3x33x16xf32>, tensor<2x3x33x16xf32>, tensor<2x3x33x16xf32>, tensor<3x53x16xf32>, tensor<3x16xf32>, tensor<3x16xf32> -> tensor<2x3x33x16xf32>
  return %0 : tensor<2x3x33x16xf32>
}

/// Transformer-XL without memory, explicit scale.
func.func @no_memory(%query: tensor<2x3x33x16xf32>, %key: tensor<2x3x33x16xf32>, %value: tensor<2x3x33x16xf32>, %pos: tensor<3x33x16xf32>, %u: tensor<3x16xf32>, %v: tensor<3x16xf32>) -> tensor<2x3x33x16xf32> {
  %0 = attn.relative_attention %query, %key, %value, %pos, %u, %v {scale = 0.2 : f32}
      : tensor<2x3x33x16xf32>, tensor<2x3x33x16xf32>, tensor<2x3x33x16xf32>, tensor<3x33x16xf32>, tensor<3x16xf32>, tensor<3x16xf32> -> tensor<2x3x33x16xf32>
  return %0 : tensor<2x3x33x16xf32>
}
