// RUN: attn-opt %s -split-input-file --attn-differentiate | FileCheck %s
// RUN: attn-opt %s -split-input-file --attn-differentiate --convert-attn-grad-to-linalg | FileCheck %s --check-prefix=LOWERED
// RUN: attn-opt %s -split-input-file --attn-differentiate=capture-gradients=false | FileCheck %s --check-prefix=NOCAPTURES

/// attn-differentiate adds @F_grad: @F's arguments, the output's
/// cotangent, the gradients of query, key and value.

// CHECK-LABEL: func.func @causal(
// CHECK: return %{{.*}} : tensor<1x4x33x16xf32>
// CHECK-LABEL: func.func @causal_grad(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x4x33x16xf32>, %[[K:[^:]*]]: tensor<1x2x40x16xf32>, %[[V:[^:]*]]: tensor<1x2x40x16xf32>, %[[DO:[^:]*]]: tensor<1x4x33x16xf32>)
// CHECK-SAME: -> (tensor<1x4x33x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>)
// CHECK: %[[O:[^ ]*]] = attn.attention %[[Q]], %[[K]], %[[V]] {normalizer = #attn.softmax, pattern = #attn.causal}
// CHECK: %[[DQ:[^,]*]], %[[DK:[^,]*]], %[[DV:[^ ]*]] = attn.attention_grad %[[O]], %[[DO]] :
// CHECK: return %[[DQ]], %[[DK]], %[[DV]]
// The reference gradient replaces the op and its forward op (used only as
// its description).
// LOWERED-LABEL: func.func @causal_grad(
// LOWERED-NOT: attn.
// LOWERED: linalg.generic
// LOWERED-NOT: attn.
// LOWERED: return
func.func @causal(%q: tensor<1x4x33x16xf32>, %k: tensor<1x2x40x16xf32>,
                  %v: tensor<1x2x40x16xf32>) -> tensor<1x4x33x16xf32> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x4x33x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>
      -> tensor<1x4x33x16xf32>
  return %o : tensor<1x4x33x16xf32>
}

// -----

/// A returned log-sum-exp adds its cotangent d_lse; bias, gate and sinks
/// add their gradients, in that order.

// CHECK-LABEL: func.func @modifiers_grad(
// CHECK-SAME: %{{[^:]*}}: tensor<2xf32>, %[[DO:[^:]*]]: tensor<2x2x8x4xf32>, %[[DL:[^:]*]]: tensor<2x2x8xf32>)
// CHECK-SAME: -> (tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>, tensor<1x2x8x8xf32>, tensor<2x2x8x4xf32>, tensor<2xf32>)
// CHECK: %[[O:[^,]*]], %{{.*}} = attn.attention
// CHECK: attn.attention_grad %[[O]], %[[DO]] grad_lse(%[[DL]] : tensor<2x2x8xf32>)
// CHECK-SAME: bias(tensor<1x2x8x8xf32>) gate(tensor<2x2x8x4xf32>) sinks(tensor<2xf32>)
func.func @modifiers(%q: tensor<2x2x8x4xf32>, %k: tensor<2x2x8x4xf32>,
                     %v: tensor<2x2x8x4xf32>, %b: tensor<1x2x8x8xf32>,
                     %g: tensor<2x2x8x4xf32>, %s: tensor<2xf32>)
    -> (tensor<2x2x8x4xf32>, tensor<2x2x8xf32>) {
  %o, %l = attn.attention %q, %k, %v bias(%b : tensor<1x2x8x8xf32>)
      gate(%g : tensor<2x2x8x4xf32>) sinks(%s : tensor<2xf32>)
      {normalizer = #attn.softmax, softcap = 10.0 : f32}
      : tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>, tensor<2x2x8x4xf32>
      -> tensor<2x2x8x4xf32>, tensor<2x2x8xf32>
  return %o, %l : tensor<2x2x8x4xf32>, tensor<2x2x8xf32>
}

// -----

/// ALiBi slopes and the floating-point tensors a score region captures (a
/// T5 bias table; not the integer ids) add their gradients, last;
/// capture-gradients=false leaves the captures constant.

// CHECK-LABEL: func.func @learned_grad(
// CHECK-SAME: -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xf32>, tensor<2x15xf32>)
// CHECK: attn.attention_grad
// CHECK-SAME: alibi_slopes(tensor<2xf32>) captures(tensor<2x15xf32>)
// NOCAPTURES-LABEL: func.func @learned_grad(
// NOCAPTURES-SAME: -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2xf32>)
// NOCAPTURES: attn.attention_grad
// NOCAPTURES-SAME: alibi_slopes(tensor<2xf32>){{$}}
func.func @learned(%q: tensor<1x2x8x4xf32>, %s: tensor<2xf32>,
                   %t: tensor<2x15xf32>, %ids: tensor<8xi32>)
    -> tensor<1x2x8x4xf32> {
  %o = attn.attention %q, %q, %q alibi_slopes(%s : tensor<2xf32>)
      captures(%t, %ids : tensor<2x15xf32>, tensor<8xi32>)
      {normalizer = #attn.softmax}
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
      -> tensor<1x2x8x4xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %c: tensor<2x15xf32>, %d: tensor<8xi32>):
        %a = tensor.extract %d[%i] : tensor<8xi32>
        %z = tensor.extract %d[%j] : tensor<8xi32>
        %e = arith.cmpi eq, %a, %z : i32
        attn.yield %e : i1
      }
      score_mod {
      ^bb0(%x: f32, %b: index, %h: index, %i: index, %j: index, %c: tensor<2x15xf32>, %d: tensor<8xi32>):
        %r = arith.subi %i, %j : index
        %c7 = arith.constant 7 : index
        %at = arith.addi %r, %c7 : index
        %e = tensor.extract %c[%h, %at] : tensor<2x15xf32>
        %y = arith.addf %x, %e : f32
        attn.yield %y : f32
      }
  return %o : tensor<1x2x8x4xf32>
}

// -----

/// Functions without an attention are left alone.

// CHECK-LABEL: func.func @plain(
// CHECK-NOT: func.func @plain_grad
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

/// Linformer: the attention over the projected keys and values, its
/// gradient, then the projections' chain rule (dK = E^T dK', dE = sum dK'
/// K^T): the gradients of query, key, value and both projections.
// CHECK-LABEL: func.func @linformer_grad
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x2x40x16xf32>, %[[K:[^:]*]]: tensor<1x2x40x16xf32>, %[[V:[^:]*]]: tensor<1x2x40x8xf32>, %[[E:[^:]*]]: tensor<8x40xf32>, %[[F:[^:]*]]: tensor<8x40xf32>, %[[D:[^:]*]]: tensor<1x2x40x8xf32>)
// CHECK-SAME: -> (tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x8xf32>, tensor<8x40xf32>, tensor<8x40xf32>)
// CHECK-NOT: attn.lowrank_attention
// CHECK: %[[KP:.*]] = linalg.generic {{.*}} ins(%[[E]], %[[K]] :
// CHECK: %[[VP:.*]] = linalg.generic {{.*}} ins(%[[F]], %[[V]] :
// CHECK: %[[O:.*]] = attn.attention %[[Q]], %[[KP]], %[[VP]] {normalizer = #attn.softmax, scale = 2.500000e-01 : f32}
// CHECK: %[[DQ:.*]], %[[DKP:.*]], %[[DVP:.*]] = attn.attention_grad %[[O]], %[[D]]
// CHECK: %[[DK:.*]] = linalg.generic {{.*}} ins(%[[E]], %[[DKP]] :
// CHECK: %[[DE:.*]] = linalg.generic {{.*}} ins(%[[DKP]], %[[K]] :
// CHECK: %[[DV:.*]] = linalg.generic {{.*}} ins(%[[F]], %[[DVP]] :
// CHECK: %[[DF:.*]] = linalg.generic {{.*}} ins(%[[DVP]], %[[V]] :
// CHECK: return %[[DQ]], %[[DK]], %[[DV]], %[[DE]], %[[DF]]
func.func @linformer(%q: tensor<1x2x40x16xf32>, %k: tensor<1x2x40x16xf32>, %v: tensor<1x2x40x8xf32>, %e: tensor<8x40xf32>, %f: tensor<8x40xf32>) -> tensor<1x2x40x8xf32> {
  %0 = attn.lowrank_attention %q, %k, %v, %e, %f : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x8xf32>, tensor<8x40xf32>, tensor<8x40xf32> -> tensor<1x2x40x8xf32>
  return %0 : tensor<1x2x40x8xf32>
}

// -----

/// A forward sharded along the sequence (attn-partition-sequence): the
/// cotangent comes, and the gradients of query, key and value go, through
/// shard.shard with the operands' sharding; the forward's own result
/// annotation is gone (the gradient's description only).
// CHECK-LABEL: func.func @sharded_grad
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x2x?x8xf32>, %{{[^:]*}}: tensor<1x2x?x8xf32>, %{{[^:]*}}: tensor<1x2x?x8xf32>, %[[D:[^:]*]]: tensor<1x2x?x8xf32>)
// CHECK: %[[S:.*]] = shard.sharding @ranks split_axes = {{\[\[}}], [], [0]]
// CHECK: %[[O:.*]] = attn.attention
// CHECK-NOT: shard.shard %[[O]]
// CHECK: %[[DS:.*]] = shard.shard %[[D]] to %[[S]]
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]] = attn.attention_grad %[[O]], %[[DS]]
// CHECK: %[[G0:.*]] = shard.shard %[[DQ]] to %[[S]]
// CHECK: %[[G1:.*]] = shard.shard %[[DK]] to %[[S]]
// CHECK: %[[G2:.*]] = shard.shard %[[DV]] to %[[S]]
// CHECK: return %[[G0]], %[[G1]], %[[G2]]
shard.grid @ranks(shape = ?)
func.func @sharded(%q: tensor<1x2x?x8xf32>, %k: tensor<1x2x?x8xf32>, %v: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %s = shard.sharding @ranks split_axes = [[], [], [0]] : !shard.sharding
  %qs = shard.shard %q to %s : tensor<1x2x?x8xf32>
  %ks = shard.shard %k to %s : tensor<1x2x?x8xf32>
  %vs = shard.shard %v to %s : tensor<1x2x?x8xf32>
  %0 = attn.attention %qs, %ks, %vs {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  %1 = shard.shard %0 to %s : tensor<1x2x?x8xf32>
  return %1 : tensor<1x2x?x8xf32>
}
