// RUN: attn-opt %s --attn-flash="vector-width=8" --canonicalize --split-input-file | FileCheck %s

/// A graph's head split and merge around the kernel: the query, a
/// transpose of the projection `[L, H*D] -> [H, L, D]`, is read through a
/// strided view of the projection's buffer (no transposed copy), and the
/// result, only merged back `[H, L, D] -> [L, H*D]`, is written through a
/// strided view of the merged buffer (the merge transpose is gone).
// CHECK-LABEL: func.func @heads
// CHECK-SAME: (%[[X:.*]]: tensor<77x96xf32>, %{{.*}}: tensor<3x1x77x32xf32>, %{{.*}}: tensor<3x1x77x32xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<77x96xf32>
// CHECK: %[[OE:.*]] = memref.expand_shape %[[OUT]] {{\[}}[0], [1, 2]] output_shape [77, 3, 32] : memref<77x96xf32> into memref<77x3x32xf32>
// CHECK: %[[OT:.*]] = memref.transpose %[[OE]] (d0, d1, d2) -> (d1, d0, d2) : memref<77x3x32xf32> to memref<3x77x32xf32, strided<[32, 96, 1]>>
// CHECK: %[[OV:.*]] = memref.expand_shape %[[OT]] {{.*}} into memref<3x1x77x32xf32, strided<[32, 32, 96, 1]>>
// CHECK: %[[XB:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<77x96xf32> to memref<77x96xf32>
// CHECK: %[[XE:.*]] = memref.expand_shape %[[XB]] {{\[}}[0], [1, 2]] output_shape [77, 3, 32] : memref<77x96xf32> into memref<77x3x32xf32>
// CHECK: %[[QT:.*]] = memref.transpose %[[XE]] (d0, d1, d2) -> (d1, d0, d2) : memref<77x3x32xf32> to memref<3x77x32xf32, strided<[32, 96, 1]>>
// CHECK: %[[QV:.*]] = memref.expand_shape %[[QT]] {{\[}}[0, 1], [2], [3]] output_shape [3, 1, 77, 32] : memref<3x77x32xf32, strided<[32, 96, 1]>> into memref<3x1x77x32xf32, strided<[32, 32, 96, 1]>>
// CHECK-NOT: memref.transpose
// CHECK: memref.load %[[QV]]
// CHECK: memref.store %{{.*}}, %[[OV]]
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable : memref<77x96xf32> to tensor<77x96xf32>
// CHECK-NOT: linalg.transpose
// CHECK: return %[[R]] : tensor<77x96xf32>
func.func @heads(%x: tensor<77x96xf32>, %k: tensor<3x1x77x32xf32>, %v: tensor<3x1x77x32xf32>) -> tensor<77x96xf32> {
  %h = tensor.expand_shape %x [[0], [1, 2]] output_shape [77, 3, 32] : tensor<77x96xf32> into tensor<77x3x32xf32>
  %e = tensor.empty() : tensor<3x77x32xf32>
  %t = linalg.transpose ins(%h : tensor<77x3x32xf32>) outs(%e : tensor<3x77x32xf32>) permutation = [1, 0, 2]
  %q = tensor.expand_shape %t [[0, 1], [2], [3]] output_shape [3, 1, 77, 32] : tensor<3x77x32xf32> into tensor<3x1x77x32xf32>
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<3x1x77x32xf32>, tensor<3x1x77x32xf32>, tensor<3x1x77x32xf32> -> tensor<3x1x77x32xf32>
  %o3 = tensor.collapse_shape %o [[0, 1], [2], [3]] : tensor<3x1x77x32xf32> into tensor<3x77x32xf32>
  %m0 = tensor.empty() : tensor<77x3x32xf32>
  %m = linalg.transpose ins(%o3 : tensor<3x77x32xf32>) outs(%m0 : tensor<77x3x32xf32>) permutation = [1, 0, 2]
  %r = tensor.collapse_shape %m [[0], [1, 2]] : tensor<77x3x32xf32> into tensor<77x96xf32>
  return %r : tensor<77x96xf32>
}

// -----

/// K and V split from projections too: views as well. A transposed copy
/// of each would cost more than the strided reads (a pass over K and V and
/// a fresh buffer's page faults per call: 90 vs 61 ms for the attention of
/// bench/transformer.sh at L = 4096 on an AVX-512 machine).
// CHECK-LABEL: func.func @heads_kv
// CHECK-SAME: (%{{.*}}: tensor<3x1x77x32xf32>, %[[K:.*]]: tensor<77x96xf32>, %[[V:.*]]: tensor<77x96xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[KB:.*]] = bufferization.to_buffer %[[K]] read_only
// CHECK: %[[KE:.*]] = memref.expand_shape %[[KB]]
// CHECK: %[[KT:.*]] = memref.transpose %[[KE]] (d0, d1, d2) -> (d1, d0, d2) : memref<77x3x32xf32> to memref<3x77x32xf32, strided<[32, 96, 1]>>
// CHECK: %[[KV:.*]] = memref.expand_shape %[[KT]]
// CHECK: %[[VB:.*]] = bufferization.to_buffer %[[V]] read_only
// CHECK: %[[VE:.*]] = memref.expand_shape %[[VB]]
// CHECK: %[[VT:.*]] = memref.transpose %[[VE]] (d0, d1, d2) -> (d1, d0, d2) : memref<77x3x32xf32> to memref<3x77x32xf32, strided<[32, 96, 1]>>
// CHECK: %[[VV:.*]] = memref.expand_shape %[[VT]]
// CHECK-NOT: linalg.transpose
// CHECK-DAG: memref.load %[[KV]]
// CHECK-DAG: memref.load %[[VV]]
// CHECK: return
func.func @heads_kv(%q: tensor<3x1x77x32xf32>, %k2: tensor<77x96xf32>, %v2: tensor<77x96xf32>) -> tensor<3x1x77x32xf32> {
  %h = tensor.expand_shape %k2 [[0], [1, 2]] output_shape [77, 3, 32] : tensor<77x96xf32> into tensor<77x3x32xf32>
  %e = tensor.empty() : tensor<3x77x32xf32>
  %t = linalg.transpose ins(%h : tensor<77x3x32xf32>) outs(%e : tensor<3x77x32xf32>) permutation = [1, 0, 2]
  %k = tensor.expand_shape %t [[0, 1], [2], [3]] output_shape [3, 1, 77, 32] : tensor<3x77x32xf32> into tensor<3x1x77x32xf32>
  %hv = tensor.expand_shape %v2 [[0], [1, 2]] output_shape [77, 3, 32] : tensor<77x96xf32> into tensor<77x3x32xf32>
  %tv = linalg.transpose ins(%hv : tensor<77x3x32xf32>) outs(%e : tensor<3x77x32xf32>) permutation = [1, 0, 2]
  %v = tensor.expand_shape %tv [[0, 1], [2], [3]] output_shape [3, 1, 77, 32] : tensor<3x77x32xf32> into tensor<3x1x77x32xf32>
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax}
      : tensor<3x1x77x32xf32>, tensor<3x1x77x32xf32>, tensor<3x1x77x32xf32> -> tensor<3x1x77x32xf32>
  return %o : tensor<3x1x77x32xf32>
}

// -----

/// A result with a second use, or no transpose in its chain, keeps the
/// kernel's own output buffer.
// CHECK-LABEL: func.func @two_uses
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<3x1x77x32xf32>
// CHECK: %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK: linalg.transpose ins(%{{.*}} : tensor<3x77x32xf32>)
// CHECK: return %[[R]],
func.func @two_uses(%q: tensor<3x1x77x32xf32>, %k: tensor<3x1x77x32xf32>, %v: tensor<3x1x77x32xf32>) -> (tensor<3x1x77x32xf32>, tensor<77x3x32xf32>) {
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax}
      : tensor<3x1x77x32xf32>, tensor<3x1x77x32xf32>, tensor<3x1x77x32xf32> -> tensor<3x1x77x32xf32>
  %o3 = tensor.collapse_shape %o [[0, 1], [2], [3]] : tensor<3x1x77x32xf32> into tensor<3x77x32xf32>
  %m0 = tensor.empty() : tensor<77x3x32xf32>
  %m = linalg.transpose ins(%o3 : tensor<3x77x32xf32>) outs(%m0 : tensor<77x3x32xf32>) permutation = [1, 0, 2]
  return %o, %m : tensor<3x1x77x32xf32>, tensor<77x3x32xf32>
}
