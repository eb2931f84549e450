// What a sliding window sends: only the halo. Each rank hands MPI the last
// 16 rows of its keys and values (16 rows x 2 heads x 8 x 4 bytes x 2 =
// 2048 bytes) plus its part of the two size all-reduces (8 + 8 (P + 1)
// bytes), whatever the sequence length; the last rank sends no keys. Ring
// attention would send (P - 1) L / P rows of both. Checked at 3 ranks on
// 95 and 301 rows (chunks longer than the window).
// RUN: %mpiexec -n 3 attn-run %s --random-inputs --shape q=1x2x95x8 --shape k=1x2x95x8 --shape v=1x2x95x8 --check --bench 1 --threads 1 2>/dev/null | FileCheck %s
// RUN: %mpiexec -n 3 attn-run %s --random-inputs --shape q=1x2x301x8 --shape k=1x2x301x8 --shape v=1x2x301x8 --check --bench 1 --threads 1 2>/dev/null | FileCheck %s
// CHECK: check: ok on all 3 rank(s)
// CHECK: comm: bytes_per_call max_rank=2088 all_ranks=4216
// The gradient (--grad: @window_grad, the forward ring, then the backward
// ring) sends the same halo twice and returns its 16 rows of dK and dV to
// their owner: 3 x 2048 + 40 bytes from the middle rank, whatever L.
// RUN: %mpiexec -n 3 attn-run %s --grad --random-inputs --shape q=1x2x95x8 --shape k=1x2x95x8 --shape v=1x2x95x8 --check --bench 1 --threads 1 2>/dev/null | FileCheck %s --check-prefix=GRAD
// RUN: %mpiexec -n 3 attn-run %s --grad --random-inputs --shape q=1x2x301x8 --shape k=1x2x301x8 --shape v=1x2x301x8 --check --bench 1 --threads 1 2>/dev/null | FileCheck %s --check-prefix=GRAD
// GRAD: check: ok on all 3 rank(s)
// GRAD: comm: bytes_per_call max_rank=6184 all_ranks=12408
shard.grid @ring(shape = ?)
func.func @window(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x8xf32>
  %ks = shard.shard %k to %s : tensor<1x2x?x8xf32>
  %vs = shard.shard %v to %s : tensor<1x2x?x8xf32>
  %o = attn.attention %qs, %ks, %vs {normalizer = #attn.softmax, pattern = #attn.window<before = 16, after = 0>}
      : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  %os = shard.shard %o to %s : tensor<1x2x?x8xf32>
  return %os : tensor<1x2x?x8xf32>
}
