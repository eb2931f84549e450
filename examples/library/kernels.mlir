// The kernels of the library example: causal softmax attention and
// sliding-window attention, both with a dynamic batch and length
// (8 heads of dimension 64).

func.func @causal(%query: tensor<?x8x?x64xf32>, %key: tensor<?x8x?x64xf32>, %value: tensor<?x8x?x64xf32>) -> tensor<?x8x?x64xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32> -> tensor<?x8x?x64xf32>
  return %0 : tensor<?x8x?x64xf32>
}

func.func @sliding_window(%query: tensor<?x8x?x64xf32>, %key: tensor<?x8x?x64xf32>, %value: tensor<?x8x?x64xf32>) -> tensor<?x8x?x64xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 32, after = 0>}
      : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32> -> tensor<?x8x?x64xf32>
  return %0 : tensor<?x8x?x64xf32>
}
