// RUN: attn-opt %s --split-input-file --attn-distinct-results | FileCheck %s
// RUN: attn-opt %s --split-input-file --attn-lower-to-llvm-pipeline 2>/dev/null | FileCheck %s --check-prefix=LLVM
// RUN: attn-opt %s --split-input-file --attn-lower-to-nvvm-pipeline=format=isa 2>/dev/null | FileCheck %s --check-prefix=NVVM

/// A tensor returned twice: the second return gets a copy, so each result
/// is a buffer of its own (buffer-results-to-out-params erased the
/// allocation once per result and crashed every pipeline).
// CHECK-LABEL: func.func @twice(
// CHECK: %[[O:.*]] = attn.attention
// CHECK: %[[COPY:.*]] = bufferization.alloc_tensor() copy(%[[O]])
// CHECK: return %[[O]], %[[COPY]]
// LLVM-LABEL: llvm.func @twice(
// NVVM-LABEL: llvm.func @twice(
func.func @twice(%query: tensor<1x2x8x4xf32>, %key: tensor<1x2x8x4xf32>, %value: tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %0, %0 : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}

// -----

/// Distinct results, and a returned argument, stay as they are.
// CHECK-LABEL: func.func @distinct(
// CHECK-NOT: alloc_tensor
// CHECK: return %{{.*}}, %arg0
func.func @distinct(%query: tensor<1x2x8x4xf32>, %key: tensor<1x2x8x4xf32>, %value: tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %0, %query : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}
