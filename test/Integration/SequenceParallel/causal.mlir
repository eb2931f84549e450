// Causal softmax attention over a ring of any size, contiguous chunks of a
// sequence not divisible by the number of ranks (203 rows), MHA.
// RUN: %mpiexec -n 1 attn-run %s --random-inputs --shape q=1x2x203x16 --shape k=1x2x203x16 --shape v=1x2x203x16 --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=ONE
// RUN: %mpiexec -n 2 attn-run %s --random-inputs --shape q=1x2x203x16 --shape k=1x2x203x16 --shape v=1x2x203x16 --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=TWO
// RUN: %mpiexec -n 3 attn-run %s --random-inputs --shape q=1x2x203x16 --shape k=1x2x203x16 --shape v=1x2x203x16 --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=THREE
// RUN: %mpiexec -n 4 attn-run %s --random-inputs --shape q=1x2x203x16 --shape k=1x2x203x16 --shape v=1x2x203x16 --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=FOUR
// ONE: sequence-parallel: 1 rank(s), contiguous chunks
// ONE: check: ok on all 1 rank(s)
// ONE: result result0: 1x2x203x16xf32
// TWO: check: ok on all 2 rank(s)
// TWO: result result0: 1x2x102x16xf32
// THREE: check: ok on all 3 rank(s)
// THREE: result result0: 1x2x68x16xf32
// FOUR: check: ok on all 4 rank(s)
// FOUR: result result0: 1x2x51x16xf32
shard.grid @ring(shape = ?)
func.func @causal(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x16xf32>
  %ks = shard.shard %k to %s : tensor<1x2x?x16xf32>
  %vs = shard.shard %v to %s : tensor<1x2x?x16xf32>
  %o = attn.attention %qs, %ks, %vs {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  %os = shard.shard %o to %s : tensor<1x2x?x16xf32>
  return %os : tensor<1x2x?x16xf32>
}
