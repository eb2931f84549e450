// Pointwise attention (gelu, alpha = 0.5, causal; relu, alpha = 1,
// unmasked): the blocks' outputs add up across the ring, scaled once by
// Lk^-alpha of the whole sequence; 131 rows on 1 to 4 ranks.
// RUN: %mpiexec -n 1 attn-run %s --entry gelu_causal --random-inputs --shape q=2x2x131x16 --check --threads 1 2>/dev/null | FileCheck %s
// RUN: %mpiexec -n 3 attn-run %s --entry gelu_causal --random-inputs --shape q=2x2x131x16 --check --threads 1 2>/dev/null | FileCheck %s
// RUN: %mpiexec -n 4 attn-run %s --entry relu_full --random-inputs --shape q=2x2x131x16 --check --threads 1 2>/dev/null | FileCheck %s
// RUN: %mpiexec -n 2 attn-run %s --entry relu_full --random-inputs --shape q=2x2x131x16 --check --threads 1 2>/dev/null | FileCheck %s
// Their gradients (dO scaled by Lk^-alpha of the whole sequence):
// RUN: %mpiexec -n 3 attn-run %s --grad --entry gelu_causal --random-inputs --shape q=2x2x131x16 --check --threads 1 2>/dev/null | FileCheck %s
// RUN: %mpiexec -n 2 attn-run %s --grad --entry relu_full --random-inputs --shape q=2x2x131x16 --check --threads 1 2>/dev/null | FileCheck %s
// CHECK: check: ok on all {{[1234]}} rank(s)
shard.grid @ring(shape = ?)
func.func @gelu_causal(%q: tensor<2x2x?x16xf32>) -> tensor<2x2x?x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<2x2x?x16xf32>
  %o = attn.attention %qs, %qs, %qs {normalizer = #attn.pointwise<gelu, alpha = 0.5>, pattern = #attn.causal}
      : tensor<2x2x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x16xf32> -> tensor<2x2x?x16xf32>
  %os = shard.shard %o to %s : tensor<2x2x?x16xf32>
  return %os : tensor<2x2x?x16xf32>
}
func.func @relu_full(%q: tensor<2x2x?x16xf32>) -> tensor<2x2x?x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<2x2x?x16xf32>
  %o = attn.attention %qs, %qs, %qs {normalizer = #attn.pointwise<relu>}
      : tensor<2x2x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x16xf32> -> tensor<2x2x?x16xf32>
  %os = shard.shard %o to %s : tensor<2x2x?x16xf32>
  return %os : tensor<2x2x?x16xf32>
}
