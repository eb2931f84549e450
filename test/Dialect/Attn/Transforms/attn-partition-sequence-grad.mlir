// RUN: attn-opt %s --attn-partition-sequence --split-input-file --verify-diagnostics | FileCheck %s

// The backward entry a training framework calls (attn_opt's @backward):
// the output and log-sum-exp the forward saved, sharded like the operands,
// so no forward ring runs. The ring of key/value blocks runs again (tags 1
// and 2); under it, per pair of runs that may meet, the block's attention
// and its attn.attention_grad normalized by the saved statistics (the
// whole sequence's, so each block gets its share); then each rank's share
// of the block's dK and dV goes back to the block's owner (tags 3 and 4).
// The results are the rank's rows of dQ, dK and dV.
// CHECK-LABEL: func.func @backward(
// CHECK-SAME: -> (tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32>)
// CHECK-COUNT-1: attn.allreduce %{{.*}} : tensor<?xi64>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32>, tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32>)
// CHECK: attn.exchange {{.*}} tag %c1_i32
// CHECK: attn.exchange {{.*}} tag %c2_i32
// CHECK: %[[R:.*]], %{{.*}} = attn.attention {{.*}} captures(%{{.*}} : tensor<2xi64>) {normalizer = #attn.softmax}
// CHECK: attn.attention_grad %[[R]], %{{.*}} saved_output(%{{.*}} : tensor<1x4x?x8xf32>) saved_lse(%{{.*}} : tensor<1x4x?xf32>)
// CHECK: attn.exchange {{.*}} tag %c3_i32
// CHECK: attn.exchange {{.*}} tag %c4_i32
// CHECK-NOT: attn.attention_grad
// CHECK: return
shard.grid @ranks(shape = ?)
func.func @backward(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x8xf32>, %o: tensor<1x4x?x8xf32>, %lse: tensor<1x4x?xf32>, %do: tensor<1x4x?x8xf32>) -> (tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32>) {
  %s = shard.sharding @ranks split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x4x?x16xf32>
  %ks = shard.shard %k to %s : tensor<1x2x?x16xf32>
  %vs = shard.shard %v to %s : tensor<1x2x?x8xf32>
  %os = shard.shard %o to %s : tensor<1x4x?x8xf32>
  %ls = shard.shard %lse to %s : tensor<1x4x?xf32>
  %ds = shard.shard %do to %s : tensor<1x4x?x8xf32>
  // expected-remark @+1 {{zigzag chunks over any number of ranks of @ranks; key/value blocks passed around the ring only to the ranks whose queries the mask lets see them (interval analysis of the mask at run time), partial results merged by log-sum-exp; the gradient: the ring again, each rank's share of a block's dK and dV sent back to the block's owner}}
  %0 = attn.attention %qs, %ks, %vs {normalizer = #attn.softmax, pattern = #attn.causal, attn.sequence_order = "zigzag"}
      : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32> -> tensor<1x4x?x8xf32>
  %1:3 = attn.attention_grad %0, %ds saved_output(%os : tensor<1x4x?x8xf32>) saved_lse(%ls : tensor<1x4x?xf32>)
      : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32>
  %g0 = shard.shard %1#0 to %s : tensor<1x4x?x16xf32>
  %g1 = shard.shard %1#1 to %s : tensor<1x2x?x16xf32>
  %g2 = shard.shard %1#2 to %s : tensor<1x2x?x8xf32>
  return %g0, %g1, %g2 : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32>
}

// -----

// attn-differentiate's @F_grad of a sharded pointwise @F: no saved
// statistics (pointwise attention needs none): the ring's blocks are
// unscaled, dO carries Lk^-alpha of the whole sequence.
// CHECK-LABEL: func.func @f_grad(
// CHECK: math.powf
// CHECK: scf.for
// CHECK: attn.attention_grad %{{.*}}, %{{.*}} : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>
shard.grid @ranks(shape = ?)
func.func @f_grad(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>, %do: tensor<1x2x?x8xf32>) -> (tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>) {
  %s = shard.sharding @ranks split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x8xf32>
  %ks = shard.shard %k to %s : tensor<1x2x?x8xf32>
  %vs = shard.shard %v to %s : tensor<1x2x?x8xf32>
  %ds = shard.shard %do to %s : tensor<1x2x?x8xf32>
  // expected-remark @+1 {{partial results summed; the gradient: the ring again}}
  %0 = attn.attention %qs, %ks, %vs {normalizer = #attn.pointwise<relu, alpha = 1.0>, pattern = #attn.causal}
      : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  %1:3 = attn.attention_grad %0, %ds
      : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>
  %g0 = shard.shard %1#0 to %s : tensor<1x2x?x8xf32>
  %g1 = shard.shard %1#1 to %s : tensor<1x2x?x8xf32>
  %g2 = shard.shard %1#2 to %s : tensor<1x2x?x8xf32>
  return %g0, %g1, %g2 : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>
}

// -----

// Kernelized attention's gradient over a sharded sequence: no ring. The
// key/value state phi(K)^T [V, 1] of the ranks before each (one slot per
// rank, all-reduced), the rows' cotangents du from the whole sequence's
// numerators, the query state phi(Q)^T du of the ranks after each (all-
// reduced the same way), and the rank's attention_grad with both.
// CHECK-LABEL: func.func @linear_grad(
// CHECK: attn.kv_state
// CHECK: attn.allreduce {{.*}} : tensor<?x1x2x8x16xf32>
// CHECK: attn.chunked_linear {{.*}} {causal
// CHECK: attn.allreduce {{.*}} : tensor<?x1x2x8x9xf32>
// CHECK: %[[R:.*]] = attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal}
// CHECK: attn.attention_grad %[[R]], %{{.*}} key_state(%{{.*}} : tensor<1x2x8x9xf32>) query_state(%{{.*}} : tensor<1x2x8x9xf32>)
shard.grid @ranks(shape = ?)
func.func @linear_grad(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>, %do: tensor<1x2x?x8xf32>) -> (tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>) {
  %s = shard.sharding @ranks split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x8xf32>
  %ks = shard.shard %k to %s : tensor<1x2x?x8xf32>
  %vs = shard.shard %v to %s : tensor<1x2x?x8xf32>
  %ds = shard.shard %do to %s : tensor<1x2x?x8xf32>
  // expected-remark @+1 {{the gradient: the query state phi(Q)^T du reduced over the ranks after each, both states the outside of each rank's linear-time gradient}}
  %0 = attn.attention %qs, %ks, %vs {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal}
      : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  %1:3 = attn.attention_grad %0, %ds
      : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>
  %g0 = shard.shard %1#0 to %s : tensor<1x2x?x8xf32>
  %g1 = shard.shard %1#1 to %s : tensor<1x2x?x8xf32>
  %g2 = shard.shard %1#2 to %s : tensor<1x2x?x8xf32>
  return %g0, %g1, %g2 : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>
}

// -----

// The cotangent must be sharded like the operands (each rank's rows).
shard.grid @ranks(shape = ?)
func.func @whole_cotangent(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>, %do: tensor<1x2x?x8xf32>) -> (tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>) {
  %s = shard.sharding @ranks split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x8xf32>
  %ks = shard.shard %k to %s : tensor<1x2x?x8xf32>
  %vs = shard.shard %v to %s : tensor<1x2x?x8xf32>
  %0 = attn.attention %qs, %ks, %vs {normalizer = #attn.softmax}
      : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  // expected-error @+1 {{attn-partition-sequence: the output's cotangent must be a function argument sharded like the forward's operands (shard.shard)}}
  %1:3 = attn.attention_grad %0, %do
      : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>
  %g0 = shard.shard %1#0 to %s : tensor<1x2x?x8xf32>
  %g1 = shard.shard %1#1 to %s : tensor<1x2x?x8xf32>
  %g2 = shard.shard %1#2 to %s : tensor<1x2x?x8xf32>
  return %g0, %g1, %g2 : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>
}

// -----

// The gradients of query, key and value are each rank's rows: used only
// through shard.shard.
shard.grid @ranks(shape = ?)
func.func @unsharded_gradient(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>, %do: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %s = shard.sharding @ranks split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x8xf32>
  %ks = shard.shard %k to %s : tensor<1x2x?x8xf32>
  %vs = shard.shard %v to %s : tensor<1x2x?x8xf32>
  %ds = shard.shard %do to %s : tensor<1x2x?x8xf32>
  %0 = attn.attention %qs, %ks, %vs {normalizer = #attn.softmax}
      : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  // expected-error @+1 {{every use of the gradients of query, key and value must be a shard.shard with the operands' sharding}}
  %1:3 = attn.attention_grad %0, %ds
      : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>
  return %1#0 : tensor<1x2x?x8xf32>
}
