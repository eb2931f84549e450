// RUN: attn-opt %s --convert-attn-grad-to-linalg="linear-kernelized=true" --split-input-file | FileCheck %s
// RUN: attn-opt %s --convert-attn-grad-to-linalg --split-input-file | FileCheck %s --check-prefix=QUADRATIC

/// Causal kernelized attention: the features of Q and K (feature_map ops the
/// fused kernel recomputes), [N, den] = the causal sum with values
/// [V, 1, 0...] (padded to 16 columns), then dphi(Q) forward, dphi(K) and
/// dV as suffix sums: chunked_linear with `reverse` (no reversed copies),
/// summed over the query-head group (GQA).
/// No L x L tensor anywhere; without the option, the quadratic form's.
// CHECK-LABEL: func.func @causal_gqa
// CHECK-DAG: %[[FQ:.+]] = attn.feature_map %arg0 {kernel = #attn.kernel<elu_plus_one>} : tensor<1x4x37x16xf32> -> tensor<1x4x37x16xf32>
// CHECK-DAG: %[[FK:.+]] = attn.feature_map %arg1 {kernel = #attn.kernel<elu_plus_one>} : tensor<1x2x37x16xf32> -> tensor<1x2x37x16xf32>
// CHECK: %[[ND:.+]] = attn.chunked_linear %[[FQ]], %[[FK]], %{{.+}} {causal, chunk_size = 64 : i64, unnormalized} : tensor<1x4x37x16xf32>, tensor<1x2x37x16xf32>, tensor<1x2x37x16xf32> -> tensor<1x4x37x16xf32>
// CHECK: %[[DFQ:.+]] = attn.chunked_linear %{{.+}}, %{{.+}}, %[[FK]] {causal, chunk_size = 64 : i64, unnormalized} : tensor<1x4x37x16xf32>, tensor<1x2x37x16xf32>, tensor<1x2x37x16xf32> -> tensor<1x4x37x16xf32>
// CHECK-NOT: tensor.extract
// CHECK: attn.chunked_linear {{.*}} {causal, chunk_size = 64 : i64, reverse, unnormalized} : tensor<1x4x37x16xf32>, tensor<1x4x37x16xf32>, tensor<1x4x37x16xf32> -> tensor<1x4x37x16xf32>
// CHECK: iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel"]
// CHECK: attn.chunked_linear {{.*}} {causal, chunk_size = 64 : i64, reverse, unnormalized} : tensor<1x4x37x16xf32>, tensor<1x4x37x16xf32>, tensor<1x4x37x8xf32> -> tensor<1x4x37x8xf32>
// CHECK-NOT: 37x37
// CHECK: return
// QUADRATIC-LABEL: func.func @causal_gqa
// QUADRATIC-NOT: attn.chunked_linear
// QUADRATIC: 37x37
func.func @causal_gqa(%q: tensor<1x4x37x16xf32>, %k: tensor<1x2x37x16xf32>, %v: tensor<1x2x37x8xf32>, %do: tensor<1x4x37x8xf32>) -> (tensor<1x4x37x16xf32>, tensor<1x2x37x16xf32>, tensor<1x2x37x8xf32>) {
  %o = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal} : tensor<1x4x37x16xf32>, tensor<1x2x37x16xf32>, tensor<1x2x37x8xf32> -> tensor<1x4x37x8xf32>
  %dq, %dk, %dv = attn.attention_grad %o, %do : tensor<1x4x37x8xf32>, tensor<1x4x37x8xf32> -> tensor<1x4x37x16xf32>, tensor<1x2x37x16xf32>, tensor<1x2x37x8xf32>
  return %dq, %dk, %dv : tensor<1x4x37x16xf32>, tensor<1x2x37x16xf32>, tensor<1x2x37x8xf32>
}

// -----

/// Segments without causal: a symmetric mask, so every sum runs forward
/// (no reversal), each chunked_linear taking the segment ids.
// CHECK-LABEL: func.func @segments
// CHECK-COUNT-4: attn.chunked_linear {{.*}} segments(%arg3 : tensor<2x29xi32>) {chunk_size = 64 : i64, unnormalized}
// CHECK-NOT: tensor.extract
// CHECK: return
func.func @segments(%q: tensor<2x2x29x8xf32>, %k: tensor<2x2x29x8xf32>, %v: tensor<2x2x29x8xf32>, %ids: tensor<2x29xi32>, %do: tensor<2x2x29x8xf32>) -> (tensor<2x2x29x8xf32>, tensor<2x2x29x8xf32>, tensor<2x2x29x8xf32>) {
  %o = attn.attention %q, %k, %v segments(%ids : tensor<2x29xi32>) {normalizer = #attn.kernel<relu>, pattern = #attn.segments} : tensor<2x2x29x8xf32>, tensor<2x2x29x8xf32>, tensor<2x2x29x8xf32> -> tensor<2x2x29x8xf32>
  %dq, %dk, %dv = attn.attention_grad %o, %do : tensor<2x2x29x8xf32>, tensor<2x2x29x8xf32> -> tensor<2x2x29x8xf32>, tensor<2x2x29x8xf32>, tensor<2x2x29x8xf32>
  return %dq, %dk, %dv : tensor<2x2x29x8xf32>, tensor<2x2x29x8xf32>, tensor<2x2x29x8xf32>
}

// -----

/// No mask: no chunked form; contractions through the (Dv + 1) x F state
/// `Y^T phi(K)` and its kin instead of the L x L products.
// CHECK-LABEL: func.func @unmasked
// CHECK-NOT: attn.chunked_linear
// CHECK-NOT: 41x41
// CHECK: tensor<1x2x16x8xf32>
// CHECK-NOT: 41x41
// CHECK: return
func.func @unmasked(%q: tensor<1x2x41x8xf32>, %k: tensor<1x2x41x8xf32>, %v: tensor<1x2x41x8xf32>, %do: tensor<1x2x41x8xf32>) -> (tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32>) {
  %o = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>} : tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32> -> tensor<1x2x41x8xf32>
  %dq, %dk, %dv = attn.attention_grad %o, %do : tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32> -> tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32>
  return %dq, %dk, %dv : tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32>
}

// -----

/// A window has no linear form: the quadratic one.
// CHECK-LABEL: func.func @window
// CHECK-NOT: attn.chunked_linear
// CHECK: 41x41
func.func @window(%q: tensor<1x2x41x8xf32>, %k: tensor<1x2x41x8xf32>, %v: tensor<1x2x41x8xf32>, %do: tensor<1x2x41x8xf32>) -> (tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32>) {
  %o = attn.attention %q, %k, %v {normalizer = #attn.kernel<relu>, pattern = #attn.window<before = 4, after = 0>} : tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32> -> tensor<1x2x41x8xf32>
  %dq, %dk, %dv = attn.attention_grad %o, %do : tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32> -> tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32>
  return %dq, %dk, %dv : tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32>
}
