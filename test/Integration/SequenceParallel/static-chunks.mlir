// A grid of 3 ranks with uneven static chunks (sharded_dims_offsets: 10,
// 50 and 40 of 100 rows), causal. On another number of ranks every rank
// reports the mismatch and the job ends (MPI_Abort), never a hang.
// RUN: %mpiexec -n 3 attn-run %s --random-inputs --check --threads 1 2>/dev/null | FileCheck %s
// RUN: not %mpiexec -n 2 attn-run %s --random-inputs --threads 1 2>&1 | FileCheck %s --check-prefix=RANKS
// RUN: not %mpiexec -n 4 attn-run %s --random-inputs --threads 1 2>&1 | FileCheck %s --check-prefix=RANKS4
// RUN: attn-run %s --random-inputs --reference 2>/dev/null | FileCheck %s --check-prefix=REF
// RUN: not attn-run %s --random-inputs --target gpu-emulator 2>&1 | FileCheck %s --check-prefix=GPU
// CHECK: check: ok on all 3 rank(s)
// CHECK: result result0: 1x2x10x16xf32
// REF: result result0: 1x2x100x16xf32
// GPU: error: a module sharded along the sequence (shard.grid) runs on --target cpu only for now
// RANKS: error: rank {{[01]}}: the generated code reported a run-time error: sequence-parallel attention runs on 2 ranks, its shard.grid has 3
// RANKS4: error: rank {{[0-3]}}: the generated code reported a run-time error: sequence-parallel attention runs on 4 ranks, its shard.grid has 3
shard.grid @ring(shape = 3)
func.func @f(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x100x16xf32>, %v: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] sharded_dims_offsets = [0, 10, 60, 100] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x100x16xf32>
  %ks = shard.shard %k to %s : tensor<1x2x100x16xf32>
  %vs = shard.shard %v to %s : tensor<1x2x100x16xf32>
  %o = attn.attention %qs, %ks, %vs {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
  %os = shard.shard %o to %s : tensor<1x2x100x16xf32>
  return %os : tensor<1x2x100x16xf32>
}
