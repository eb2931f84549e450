// ReLU attention (Wortsman et al. 2023): L^-1 relu(QK^T / sqrt(D)) V.
// B=1, H=8, L=4096, D=64, f32.
func.func @relu(%query: tensor<1x8x4096x64xf32>, %key: tensor<1x8x4096x64xf32>, %value: tensor<1x8x4096x64xf32>) -> tensor<1x8x4096x64xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>}
      : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32> -> tensor<1x8x4096x64xf32>
  return %0 : tensor<1x8x4096x64xf32>
}
