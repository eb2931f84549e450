// Linformer: keys and values projected along the sequence to 256 rows.
// B=1, H=8, L=4096, D=64, f32.
func.func @lowrank(%query: tensor<1x8x4096x64xf32>, %key: tensor<1x8x4096x64xf32>, %value: tensor<1x8x4096x64xf32>,
                   %key_proj: tensor<256x4096xf32>, %value_proj: tensor<256x4096xf32>) -> tensor<1x8x4096x64xf32> {
  %0 = attn.lowrank_attention %query, %key, %value, %key_proj, %value_proj
      : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<256x4096xf32>, tensor<256x4096xf32> -> tensor<1x8x4096x64xf32>
  return %0 : tensor<1x8x4096x64xf32>
}
