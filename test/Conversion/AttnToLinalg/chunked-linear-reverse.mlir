// RUN: attn-opt %s --convert-attn-to-linalg | FileCheck %s

/// The reference lowering of a reversed attn.chunked_linear (`reverse`):
/// the operands' sequences reversed (tensor.extract at L - 1 - i), the
/// quadratic form of the forward op (the causal mask, j <= i), the result
/// reversed back; no chunked_linear left.
// CHECK-LABEL: func.func @reverse
// CHECK-NOT: attn.chunked_linear
// CHECK: arith.subi %c36
// CHECK: tensor.extract %arg0
// CHECK: arith.cmpi sle
// CHECK: tensor.extract
// CHECK-NOT: attn.chunked_linear
// CHECK: return
func.func @reverse(%fq: tensor<1x2x37x16xf32>, %fk: tensor<1x2x37x16xf32>,
                   %v: tensor<1x2x37x8xf32>) -> tensor<1x2x37x8xf32> {
  %0 = attn.chunked_linear %fq, %fk, %v {chunk_size = 16, causal, reverse, unnormalized}
      : tensor<1x2x37x16xf32>, tensor<1x2x37x16xf32>, tensor<1x2x37x8xf32> -> tensor<1x2x37x8xf32>
  return %0 : tensor<1x2x37x8xf32>
}
