// Causal linear attention (elu+1 features), sequence-parallel over any
// number of ranks (docs/SequenceParallel.md): no keys travel; each rank
// reduces its key/value state phi(K)^T [V, 1] with the others (an
// exclusive prefix over the ranks before it) and adds it to its local
// chunked prefix form.
//   mpiexec.hydra -n 4 build/bin/attn-run examples/sharded/linear_causal.mlir \
//       --random-inputs --shape q=1x8x1000x64 --shape k=1x8x1000x64 \
//       --shape v=1x8x1000x64 --check --threads 1
shard.grid @ring(shape = ?)
func.func @linear_causal(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>,
                         %v: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x8x?x64xf32>
  %ks = shard.shard %k to %s : tensor<1x8x?x64xf32>
  %vs = shard.shard %v to %s : tensor<1x8x?x64xf32>
  %o = attn.attention %qs, %ks, %vs {normalizer = #attn.kernel<elu_plus_one>,
                                     pattern = #attn.causal}
      : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>
        -> tensor<1x8x?x64xf32>
  %os = shard.shard %o to %s : tensor<1x8x?x64xf32>
  return %os : tensor<1x8x?x64xf32>
}
