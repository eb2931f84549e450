// Kernels of c-abi.test: causal GQA softmax sequence-parallel over the
// caller's communicator (contiguous chunks of any sizes), and the same
// attention on one process (the check's reference).
shard.grid @ranks(shape = ?)
func.func @sharded(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %s = shard.sharding @ranks split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x4x?x16xf32>
  %ks = shard.shard %k to %s : tensor<1x2x?x16xf32>
  %vs = shard.shard %v to %s : tensor<1x2x?x16xf32>
  %o = attn.attention %qs, %ks, %vs {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x4x?x16xf32>
  %os = shard.shard %o to %s : tensor<1x4x?x16xf32>
  return %os : tensor<1x4x?x16xf32>
}

func.func @whole(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>) -> tensor<1x4x?x16xf32> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x4x?x16xf32>
  return %o : tensor<1x4x?x16xf32>
}
