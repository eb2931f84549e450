// Longformer: a sliding window of 128 keys before and 128 after each query,
// plus global tokens 0 and 1.
// B=1, H=8, L=4096, D=64, f32.
func.func @sliding_window(%query: tensor<1x8x4096x64xf32>, %key: tensor<1x8x4096x64xf32>, %value: tensor<1x8x4096x64xf32>) -> tensor<1x8x4096x64xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax,
      pattern = #attn.union<[#attn.window<before = 128, after = 128>, #attn.global<[0, 1]>]>}
      : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32> -> tensor<1x8x4096x64xf32>
  return %0 : tensor<1x8x4096x64xf32>
}
