// Causal softmax attention, sequence-parallel in the zigzag order over any
// number of ranks (docs/SequenceParallel.md):
//   mpiexec.hydra -n 2 build/bin/attn-run examples/sharded/softmax_causal.mlir \
//       --random-inputs --shape q=1x8x1000x64 --shape k=1x8x1000x64 \
//       --shape v=1x8x1000x64 --check --threads 1
shard.grid @ring(shape = ?)
func.func @softmax_causal(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>,
                          %v: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x8x?x64xf32>
  %ks = shard.shard %k to %s : tensor<1x8x?x64xf32>
  %vs = shard.shard %v to %s : tensor<1x8x?x64xf32>
  %o = attn.attention %qs, %ks, %vs {normalizer = #attn.softmax,
                                     pattern = #attn.causal,
                                     attn.sequence_order = "zigzag"}
      : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>
        -> tensor<1x8x?x64xf32>
  %os = shard.shard %o to %s : tensor<1x8x?x64xf32>
  return %os : tensor<1x8x?x64xf32>
}
