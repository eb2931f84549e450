// Causal linear attention with the elu(x)+1 feature map.
// B=1, H=8, L=4096, D=64, f32.
func.func @linear_elu_causal(%query: tensor<1x8x4096x64xf32>, %key: tensor<1x8x4096x64xf32>, %value: tensor<1x8x4096x64xf32>) -> tensor<1x8x4096x64xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal}
      : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32> -> tensor<1x8x4096x64xf32>
  return %0 : tensor<1x8x4096x64xf32>
}
