// RUN: attn-opt %s --convert-attn-grad-to-linalg --split-input-file --verify-diagnostics | FileCheck %s

/// The reference gradient of causal softmax with GQA: the forward's scores
/// and weights recomputed (the 5-D B x Hkv x G x Lq x Lk scores), dP, the
/// score gradient, then dQ, dK (summed over the group: reductions over g
/// and i) and dV; the forward op, only the gradient's description, is gone.
// CHECK-LABEL: func.func @causal_gqa
// CHECK-NOT: attn.
// CHECK: tensor<1x2x2x7x9xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: outs(%{{.*}} : tensor<1x2x2x7x8xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK-SAME: outs(%{{.*}} : tensor<1x2x9x8xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK-SAME: outs(%{{.*}} : tensor<1x2x9x8xf32>)
// CHECK-NOT: attn.
// CHECK: return
func.func @causal_gqa(%q: tensor<1x4x7x8xf32>, %k: tensor<1x2x9x8xf32>,
                      %v: tensor<1x2x9x8xf32>, %do: tensor<1x4x7x8xf32>)
    -> (tensor<1x4x7x8xf32>, tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>) {
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x4x7x8xf32>, tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32> -> tensor<1x4x7x8xf32>
  %dq, %dk, %dv = attn.attention_grad %o, %do
      : tensor<1x4x7x8xf32>, tensor<1x4x7x8xf32>
      -> tensor<1x4x7x8xf32>, tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>
  return %dq, %dk, %dv : tensor<1x4x7x8xf32>, tensor<1x2x9x8xf32>, tensor<1x2x9x8xf32>
}

// -----

/// A forward op used elsewhere stays.
// CHECK-LABEL: func.func @forward_kept
// CHECK: %[[O:.*]] = attn.attention
// CHECK-NOT: attn.attention_grad
// CHECK: return %[[O]],
func.func @forward_kept(%q: tensor<1x1x4x4xf32>, %do: tensor<1x1x4x4xf32>)
    -> (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {
  %o = attn.attention %q, %q, %q {normalizer = #attn.pointwise<relu>}
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  %dq, %dk, %dv = attn.attention_grad %o, %do
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
      -> tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
  return %o, %dq : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>
}

// -----

/// The sinks' gradient of a varlen batch sums the rows of the sequences
/// only: each term is selected by `row < query_lengths[b]`.
// CHECK-LABEL: func.func @sinks_varlen
// CHECK: tensor.extract %{{.*}} : tensor<2xf32>
// CHECK: math.exp
// CHECK: arith.negf
// CHECK: %[[LEN:.*]] = tensor.extract %{{.*}} : tensor<2xi32>
// CHECK: %[[ROWS:.*]] = arith.index_cast %[[LEN]] : i32 to index
// CHECK: %[[IN:.*]] = arith.cmpi slt, %{{.*}}, %[[ROWS]] : index
// CHECK: arith.select %[[IN]]
// CHECK: iterator_types = ["reduction", "parallel", "reduction"]
func.func @sinks_varlen(%q: tensor<2x2x4x4xf32>, %s: tensor<2xf32>,
                        %l: tensor<2xi32>, %do: tensor<2x2x4x4xf32>) -> tensor<2xf32> {
  %o = attn.attention %q, %q, %q query_lengths(%l : tensor<2xi32>)
      sinks(%s : tensor<2xf32>) {normalizer = #attn.softmax}
      : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32> -> tensor<2x2x4x4xf32>
  %dq, %dk, %dv, %ds = attn.attention_grad %o, %do
      : tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>
      -> tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32>, tensor<2x2x4x4xf32> sinks(tensor<2xf32>)
  return %ds : tensor<2xf32>
}
