// Unmasked softmax attention with GQA (4 query heads, 2 key/value heads,
// value dim 8) and its log-sum-exp result, 131 rows: every block travels
// the whole ring; both results are the merged ones.
// RUN: %mpiexec -n 1 attn-run %s --random-inputs --shape q=2x4x131x16 --shape k=2x2x131x16 --shape v=2x2x131x8 --check --threads 1 2>/dev/null | FileCheck %s
// RUN: %mpiexec -n 3 attn-run %s --random-inputs --shape q=2x4x131x16 --shape k=2x2x131x16 --shape v=2x2x131x8 --check --threads 1 2>/dev/null | FileCheck %s
// RUN: %mpiexec -n 4 attn-run %s --random-inputs --shape q=2x4x131x16 --shape k=2x2x131x16 --shape v=2x2x131x8 --check --threads 1 2>/dev/null | FileCheck %s
// The gradient with both cotangents (d_output, d_lse):
// RUN: %mpiexec -n 3 attn-run %s --grad --random-inputs --shape q=2x4x131x16 --shape k=2x2x131x16 --shape v=2x2x131x8 --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=GRAD
// GRAD: check result2: {{.*}} ok
// GRAD: check: ok on all 3 rank(s)
// CHECK: check result0: {{.*}} ok
// CHECK: check result1: {{.*}} ok
// CHECK: check: ok on all {{[134]}} rank(s)
shard.grid @ring(shape = ?)
func.func @f(%q: tensor<2x4x?x16xf32>, %k: tensor<2x2x?x16xf32>, %v: tensor<2x2x?x8xf32>) -> (tensor<2x4x?x8xf32>, tensor<2x4x?xf32>) {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<2x4x?x16xf32>
  %ks = shard.shard %k to %s : tensor<2x2x?x16xf32>
  %vs = shard.shard %v to %s : tensor<2x2x?x8xf32>
  %o, %l = attn.attention %qs, %ks, %vs {normalizer = #attn.softmax}
      : tensor<2x4x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x8xf32> -> tensor<2x4x?x8xf32>, tensor<2x4x?xf32>
  %os = shard.shard %o to %s : tensor<2x4x?x8xf32>
  %ls = shard.shard %l to %s : tensor<2x4x?xf32>
  return %os, %ls : tensor<2x4x?x8xf32>, tensor<2x4x?xf32>
}
