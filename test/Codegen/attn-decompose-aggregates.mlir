// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(attn-decompose-aggregates))" | FileCheck %s

// linalg.softmax becomes linalg.generic ops the CPU pipeline lowers: a max
// reduction, exp(x - max), a sum reduction, a division.
// CHECK-LABEL: func.func @softmax(
// CHECK-NOT:     linalg.softmax
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:           arith.maxnumf
// CHECK:         linalg.generic
// CHECK:           arith.subf
// CHECK:           math.exp
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:           arith.addf
// CHECK:         linalg.generic
// CHECK:           arith.divf
func.func @softmax(%x: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %e = tensor.empty() : tensor<4x8x16xf32>
  %0 = linalg.softmax dimension(2) ins(%x : tensor<4x8x16xf32>) outs(%e : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}
