// Kernelized (linear) attention over a sharded sequence: no keys travel,
// the key/value state phi(K)^T [V, 1] is reduced across the ranks (all of
// them unmasked; the ranks before each, causal). Causal elu+1 with GQA,
// unmasked relu with a scale and eps, causal FAVOR+; 157 rows (not
// divisible by 2, 3 or 4).
// RUN: %mpiexec -n 1 attn-run %s --entry causal --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=C1
// RUN: %mpiexec -n 2 attn-run %s --entry causal --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=C2
// RUN: %mpiexec -n 3 attn-run %s --entry causal --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=C3
// RUN: %mpiexec -n 4 attn-run %s --entry causal --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=C4
// RUN: %mpiexec -n 3 attn-run %s --entry full --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=F3
// RUN: %mpiexec -n 2 attn-run %s --entry favor --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=V2
// Their gradients (--grad): the key/value state reduced as in the forward,
// the query state phi(Q)^T du the other way (the ranks after each, causal;
// every other rank, unmasked):
// RUN: %mpiexec -n 2 attn-run %s --grad --entry causal --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=C2
// RUN: %mpiexec -n 3 attn-run %s --grad --entry causal --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=C3
// RUN: %mpiexec -n 3 attn-run %s --grad --entry full --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=F3
// RUN: %mpiexec -n 2 attn-run %s --grad --entry favor --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=V2
// C1: check: ok on all 1 rank(s)
// C2: check: ok on all 2 rank(s)
// C3: check: ok on all 3 rank(s)
// C4: check: ok on all 4 rank(s)
// F3: check: ok on all 3 rank(s)
// V2: check: ok on all 2 rank(s)
shard.grid @ring(shape = ?)

func.func @causal(%q: tensor<2x4x157x16xf32>, %k: tensor<2x2x157x16xf32>, %v: tensor<2x2x157x8xf32>) -> tensor<2x4x157x8xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<2x4x157x16xf32>
  %ks = shard.shard %k to %s : tensor<2x2x157x16xf32>
  %vs = shard.shard %v to %s : tensor<2x2x157x8xf32>
  %o = attn.attention %qs, %ks, %vs {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal}
      : tensor<2x4x157x16xf32>, tensor<2x2x157x16xf32>, tensor<2x2x157x8xf32> -> tensor<2x4x157x8xf32>
  %os = shard.shard %o to %s : tensor<2x4x157x8xf32>
  return %os : tensor<2x4x157x8xf32>
}

func.func @full(%q: tensor<1x2x157x16xf32>, %k: tensor<1x2x157x16xf32>, %v: tensor<1x2x157x16xf32>) -> tensor<1x2x157x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x157x16xf32>
  %ks = shard.shard %k to %s : tensor<1x2x157x16xf32>
  %vs = shard.shard %v to %s : tensor<1x2x157x16xf32>
  %o = attn.attention %qs, %ks, %vs {normalizer = #attn.kernel<relu, eps = 1.0e-03>, scale = 0.25 : f32}
      : tensor<1x2x157x16xf32>, tensor<1x2x157x16xf32>, tensor<1x2x157x16xf32> -> tensor<1x2x157x16xf32>
  %os = shard.shard %o to %s : tensor<1x2x157x16xf32>
  return %os : tensor<1x2x157x16xf32>
}

func.func @favor(%q: tensor<1x2x157x16xf32>, %k: tensor<1x2x157x16xf32>, %v: tensor<1x2x157x16xf32>) -> tensor<1x2x157x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x157x16xf32>
  %ks = shard.shard %k to %s : tensor<1x2x157x16xf32>
  %vs = shard.shard %v to %s : tensor<1x2x157x16xf32>
  %o = attn.attention %qs, %ks, %vs {normalizer = #attn.kernel<favor, features = 32, seed = 3>, pattern = #attn.causal, scale = 0.25 : f32}
      : tensor<1x2x157x16xf32>, tensor<1x2x157x16xf32>, tensor<1x2x157x16xf32> -> tensor<1x2x157x16xf32>
  %os = shard.shard %o to %s : tensor<1x2x157x16xf32>
  return %os : tensor<1x2x157x16xf32>
}
