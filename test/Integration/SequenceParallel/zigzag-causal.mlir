// Causal attention in the zigzag order (rank r holds chunks r and 2P-1-r
// of 2P: equal causal work on every rank), multi-query (1 key/value head),
// 131 rows, 1 to 4 ranks.
// RUN: %mpiexec -n 1 attn-run %s --random-inputs --shape q=2x4x131x16 --shape k=2x1x131x16 --shape v=2x1x131x8 --check --threads 1 2>/dev/null | FileCheck %s
// RUN: %mpiexec -n 2 attn-run %s --random-inputs --shape q=2x4x131x16 --shape k=2x1x131x16 --shape v=2x1x131x8 --check --threads 1 2>/dev/null | FileCheck %s
// RUN: %mpiexec -n 3 attn-run %s --random-inputs --shape q=2x4x131x16 --shape k=2x1x131x16 --shape v=2x1x131x8 --check --threads 1 2>/dev/null | FileCheck %s
// RUN: %mpiexec -n 4 attn-run %s --random-inputs --shape q=2x4x131x16 --shape k=2x1x131x16 --shape v=2x1x131x8 --check --threads 1 2>/dev/null | FileCheck %s
// Its gradient (attn-run --grad: @f_grad through the forward ring, then the
// backward ring), every rank's dQ, dK and dV checked against the
// single-process gradient:
// RUN: %mpiexec -n 2 attn-run %s --grad --random-inputs --shape q=2x4x131x16 --shape k=2x1x131x16 --shape v=2x1x131x8 --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=GRAD
// RUN: %mpiexec -n 3 attn-run %s --grad --random-inputs --shape q=2x4x131x16 --shape k=2x1x131x16 --shape v=2x1x131x8 --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=GRAD
// GRAD: zigzag chunks
// GRAD: check result0: {{.*}} ok
// GRAD: check result1: {{.*}} ok
// GRAD: check result2: {{.*}} ok
// GRAD: check: ok on all {{[23]}} rank(s)
// CHECK: zigzag chunks
// CHECK: check: ok on all {{[1234]}} rank(s)
shard.grid @ring(shape = ?)
func.func @f(%q: tensor<2x4x?x16xf32>, %k: tensor<2x1x?x16xf32>, %v: tensor<2x1x?x8xf32>) -> tensor<2x4x?x8xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<2x4x?x16xf32>
  %ks = shard.shard %k to %s : tensor<2x1x?x16xf32>
  %vs = shard.shard %v to %s : tensor<2x1x?x8xf32>
  %o = attn.attention %qs, %ks, %vs {normalizer = #attn.softmax, pattern = #attn.causal, attn.sequence_order = "zigzag"}
      : tensor<2x4x?x16xf32>, tensor<2x1x?x16xf32>, tensor<2x1x?x8xf32> -> tensor<2x4x?x8xf32>
  %os = shard.shard %o to %s : tensor<2x4x?x8xf32>
  return %os : tensor<2x4x?x8xf32>
}
