// Sparse Transformer "fixed" pattern (stride 128, 16 summary cells), causal.
// B=1, H=8, L=4096, D=64, f32.
func.func @sparse_fixed(%query: tensor<1x8x4096x64xf32>, %key: tensor<1x8x4096x64xf32>, %value: tensor<1x8x4096x64xf32>) -> tensor<1x8x4096x64xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax,
      pattern = #attn.intersect<[#attn.causal, #attn.fixed<stride = 128, c = 16>]>}
      : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32> -> tensor<1x8x4096x64xf32>
  return %0 : tensor<1x8x4096x64xf32>
}
