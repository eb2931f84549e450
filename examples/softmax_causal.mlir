// Causal softmax attention.
// B=1, H=8, L=4096, D=64, f32.
func.func @softmax_causal(%query: tensor<1x8x4096x64xf32>, %key: tensor<1x8x4096x64xf32>, %value: tensor<1x8x4096x64xf32>) -> tensor<1x8x4096x64xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32> -> tensor<1x8x4096x64xf32>
  return %0 : tensor<1x8x4096x64xf32>
}
