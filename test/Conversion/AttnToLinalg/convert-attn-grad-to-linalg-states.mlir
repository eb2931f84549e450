// RUN: attn-opt %s --convert-attn-grad-to-linalg="linear-kernelized=true" | FileCheck %s
// RUN: attn-opt %s --convert-attn-grad-to-linalg --verify-diagnostics -o /dev/null

/// Kernelized attention over a part of a longer sequence (the linear-time
/// gradient with key_state S and query_state G, what
/// attn-partition-sequence's backward gives each rank): the key state
/// (padded to the 16 columns of [V, 1]) joins every row's numerator and
/// denominator and dphi(Q); the query state (summed over each key/value
/// head's group) joins dphi(K) and dV.
// CHECK-LABEL: func.func @outside
// CHECK-SAME: %[[S:[^:]*]]: tensor<1x1x8x9xf32>, %[[G:[^:]*]]: tensor<1x2x8x9xf32>
// CHECK: %[[SW:.*]] = tensor.insert_slice %[[S]] into %{{.*}}[0, 0, 0, 0] [1, 1, 8, 9] [1, 1, 1, 1] : tensor<1x1x8x9xf32> into tensor<1x1x8x16xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[SW]] : tensor<1x1x2x7x8xf32>, tensor<1x1x8x16xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[SW]] : tensor<1x1x2x7x16xf32>, tensor<1x1x8x16xf32>)
// CHECK: %[[GW:.*]] = tensor.insert_slice %[[G]] into %{{.*}} : tensor<1x2x8x9xf32> into tensor<1x2x8x16xf32>
// CHECK: tensor.expand_shape %[[GW]]
// CHECK-NOT: attn.attention_grad
func.func @outside(%q: tensor<1x2x7x8xf32>, %k: tensor<1x1x7x8xf32>,
                   %v: tensor<1x1x7x8xf32>, %do: tensor<1x2x7x8xf32>,
                   %s: tensor<1x1x8x9xf32>, %g: tensor<1x2x8x9xf32>)
    -> (tensor<1x2x7x8xf32>, tensor<1x1x7x8xf32>, tensor<1x1x7x8xf32>) {
  %o = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>,
                                  pattern = #attn.causal}
      : tensor<1x2x7x8xf32>, tensor<1x1x7x8xf32>, tensor<1x1x7x8xf32>
      -> tensor<1x2x7x8xf32>
  // expected-error @+1 {{key_state and query_state need the linear-time gradient (the CPU pipeline's linear-kernelized)}}
  %dq, %dk, %dv = attn.attention_grad %o, %do
      key_state(%s : tensor<1x1x8x9xf32>) query_state(%g : tensor<1x2x8x9xf32>)
      : tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32>
      -> tensor<1x2x7x8xf32>, tensor<1x1x7x8xf32>, tensor<1x1x7x8xf32>
  return %dq, %dk, %dv : tensor<1x2x7x8xf32>, tensor<1x1x7x8xf32>, tensor<1x1x7x8xf32>
}
