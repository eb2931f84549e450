// A sliding window of 256 keys, sequence-parallel over any number of ranks:
// only the halo travels (the rows of a key/value block that the queries of
// the ranks it reaches see), so the bytes sent do not grow with L.
//   mpiexec.hydra -n 4 build/bin/attn-run examples/sharded/sliding_window.mlir \
//       --random-inputs --shape q=1x8x2000x64 --shape k=1x8x2000x64 \
//       --shape v=1x8x2000x64 --check --threads 1
shard.grid @ring(shape = ?)
func.func @sliding_window(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>,
                          %v: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x8x?x64xf32>
  %ks = shard.shard %k to %s : tensor<1x8x?x64xf32>
  %vs = shard.shard %v to %s : tensor<1x8x?x64xf32>
  %o = attn.attention %qs, %ks, %vs {normalizer = #attn.softmax,
                                     pattern = #attn.window<before = 256, after = 0>}
      : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>
        -> tensor<1x8x?x64xf32>
  %os = shard.shard %o to %s : tensor<1x8x?x64xf32>
  return %os : tensor<1x8x?x64xf32>
}
