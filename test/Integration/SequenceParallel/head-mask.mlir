// A mask region that depends on the head (head 0 causal, head 1 sees
// every key): the schedule cannot judge a block by one head, so it keeps
// every block; the kernels mask per head. (Judged by head 0 alone, the
// blocks after a rank's own would be skipped: head 1 would be wrong.)
// RUN: %mpiexec -n 2 attn-run %s --random-inputs --shape q=1x2x97x16 --check --threads 1 2>/dev/null | FileCheck %s
// RUN: %mpiexec -n 3 attn-run %s --random-inputs --shape q=1x2x97x16 --check --threads 1 2>/dev/null | FileCheck %s
// CHECK: check: ok on all {{[23]}} rank(s)
shard.grid @ring(shape = ?)
func.func @f(%q: tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32> {
  %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x16xf32>
  %o = attn.attention %qs, %qs, %qs {normalizer = #attn.softmax}
      : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c0 = arith.constant 0 : index
        %causal = arith.cmpi ule, %j, %i : index
        %notHead0 = arith.cmpi ne, %h, %c0 : index
        %ok = arith.ori %causal, %notHead0 : i1
        attn.yield %ok : i1
      }
  %os = shard.shard %o to %s : tensor<1x2x?x16xf32>
  return %os : tensor<1x2x?x16xf32>
}
