// Packed documents (segment ids, replicated on every rank) over a sharded
// sequence: causal within each document, contiguous and zigzag chunks, and
// a plain document mask with GQA. The ids are sorted (attn-run's random
// segment ids), so a rank pair without a shared document runs no kernel and
// sends nothing (the mask's interval analysis reads the ids' range).
// RUN: %mpiexec -n 1 attn-run %s --entry causal --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=C1
// RUN: %mpiexec -n 2 attn-run %s --entry causal --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=C2
// RUN: %mpiexec -n 3 attn-run %s --entry causal --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=C3
// RUN: %mpiexec -n 4 attn-run %s --entry zigzag --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=Z4
// RUN: %mpiexec -n 3 attn-run %s --entry gqa --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=G3
// RUN: %mpiexec -n 3 attn-run %s --grad --entry gqa --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=G3
// RUN: %mpiexec -n 2 attn-run %s --grad --entry zigzag --random-inputs --check --threads 1 2>/dev/null | FileCheck %s --check-prefix=Z2
// Z2: check: ok on all 2 rank(s)
// C1: check: ok on all 1 rank(s)
// C2: check: ok on all 2 rank(s)
// C3: check: ok on all 3 rank(s)
// Z4: check: ok on all 4 rank(s)
// G3: check: ok on all 3 rank(s)
shard.grid @ring(shape = ?)

func.func @causal(%q: tensor<2x2x157x16xf32>, %k: tensor<2x2x157x16xf32>, %v: tensor<2x2x157x16xf32>, %ids: tensor<2x157xi32>) -> tensor<2x2x157x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<2x2x157x16xf32>
  %ks = shard.shard %k to %s : tensor<2x2x157x16xf32>
  %vs = shard.shard %v to %s : tensor<2x2x157x16xf32>
  %o = attn.attention %qs, %ks, %vs segments(%ids : tensor<2x157xi32>) {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>}
      : tensor<2x2x157x16xf32>, tensor<2x2x157x16xf32>, tensor<2x2x157x16xf32> -> tensor<2x2x157x16xf32>
  %os = shard.shard %o to %s : tensor<2x2x157x16xf32>
  return %os : tensor<2x2x157x16xf32>
}

func.func @zigzag(%q: tensor<1x2x157x16xf32>, %k: tensor<1x2x157x16xf32>, %v: tensor<1x2x157x16xf32>, %ids: tensor<1x157xi32>) -> tensor<1x2x157x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x157x16xf32>
  %ks = shard.shard %k to %s : tensor<1x2x157x16xf32>
  %vs = shard.shard %v to %s : tensor<1x2x157x16xf32>
  %o = attn.attention %qs, %ks, %vs segments(%ids : tensor<1x157xi32>) {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>, attn.sequence_order = "zigzag"}
      : tensor<1x2x157x16xf32>, tensor<1x2x157x16xf32>, tensor<1x2x157x16xf32> -> tensor<1x2x157x16xf32>
  %os = shard.shard %o to %s : tensor<1x2x157x16xf32>
  return %os : tensor<1x2x157x16xf32>
}

func.func @gqa(%q: tensor<1x4x131x16xf32>, %k: tensor<1x2x131x16xf32>, %v: tensor<1x2x131x16xf32>, %ids: tensor<1x131xi32>) -> tensor<1x4x131x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x4x131x16xf32>
  %ks = shard.shard %k to %s : tensor<1x2x131x16xf32>
  %vs = shard.shard %v to %s : tensor<1x2x131x16xf32>
  %o = attn.attention %qs, %ks, %vs segments(%ids : tensor<1x131xi32>) {normalizer = #attn.softmax, pattern = #attn.segments}
      : tensor<1x4x131x16xf32>, tensor<1x2x131x16xf32>, tensor<1x2x131x16xf32> -> tensor<1x4x131x16xf32>
  %os = shard.shard %o to %s : tensor<1x4x131x16xf32>
  return %os : tensor<1x4x131x16xf32>
}
