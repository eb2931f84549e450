// Reformer LSH attention: shared query/key, 2 hash rounds, 64 buckets,
// chunks of 64. B=1, H=8, L=4096, D=64, f32.
func.func @lsh(%qk: tensor<1x8x4096x64xf32>, %value: tensor<1x8x4096x64xf32>) -> tensor<1x8x4096x64xf32> {
  %0 = attn.lsh_attention %qk, %value {num_hashes = 2, num_buckets = 64, chunk_size = 64, seed = 1}
      : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32> -> tensor<1x8x4096x64xf32>
  return %0 : tensor<1x8x4096x64xf32>
}
