// Performer FAVOR+ with 256 orthogonal random features, estimating softmax(QK^T/8).
// B=1, H=8, L=4096, D=64, f32.
func.func @favor(%query: tensor<1x8x4096x64xf32>, %key: tensor<1x8x4096x64xf32>, %value: tensor<1x8x4096x64xf32>) -> tensor<1x8x4096x64xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<favor, features = 256, orthogonal = true, seed = 1>, scale = 0.125 : f32}
      : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32> -> tensor<1x8x4096x64xf32>
  return %0 : tensor<1x8x4096x64xf32>
}
