// A sliding window (17 keys before, 5 after) over 131 rows: a block goes
// only to the ranks whose queries it reaches.
// RUN: %mpiexec -n 2 attn-run %s --random-inputs --shape q=2x2x131x16 --shape k=2x2x131x16 --shape v=2x2x131x16 --check --threads 1 2>/dev/null | FileCheck %s
// RUN: %mpiexec -n 3 attn-run %s --random-inputs --shape q=2x2x131x16 --shape k=2x2x131x16 --shape v=2x2x131x16 --check --threads 1 2>/dev/null | FileCheck %s
// RUN: %mpiexec -n 4 attn-run %s --random-inputs --shape q=2x2x131x16 --shape k=2x2x131x16 --shape v=2x2x131x16 --check --threads 1 2>/dev/null | FileCheck %s
// RUN: %mpiexec -n 3 attn-run %s --grad --random-inputs --shape q=2x2x131x16 --shape k=2x2x131x16 --shape v=2x2x131x16 --check --threads 1 2>/dev/null | FileCheck %s
// RUN: %mpiexec -n 4 attn-run %s --grad --random-inputs --shape q=2x2x131x16 --shape k=2x2x131x16 --shape v=2x2x131x16 --check --threads 1 2>/dev/null | FileCheck %s
// CHECK: check: ok on all {{[234]}} rank(s)
shard.grid @ring(shape = ?)
func.func @f(%q: tensor<2x2x?x16xf32>, %k: tensor<2x2x?x16xf32>, %v: tensor<2x2x?x16xf32>) -> tensor<2x2x?x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<2x2x?x16xf32>
  %ks = shard.shard %k to %s : tensor<2x2x?x16xf32>
  %vs = shard.shard %v to %s : tensor<2x2x?x16xf32>
  %o = attn.attention %qs, %ks, %vs {normalizer = #attn.softmax, pattern = #attn.window<before = 17, after = 5>}
      : tensor<2x2x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x16xf32> -> tensor<2x2x?x16xf32>
  %os = shard.shard %o to %s : tensor<2x2x?x16xf32>
  return %os : tensor<2x2x?x16xf32>
}
