// The same module gives the same IR, run after run, with the pass
// manager's threads: bufferization's constant globals (the kernels' block
// tables) are named and ordered by first use (attn-order-constant-globals),
// not in the order bufferization visited the functions, which depends on
// where they sit in memory.
// RUN: attn-opt %s --attn-lower-to-llvm-pipeline=vector-width=8 -o %t.1
// RUN: attn-opt %s --attn-lower-to-llvm-pipeline=vector-width=8 -o %t.2
// RUN: attn-opt %s --attn-lower-to-llvm-pipeline=vector-width=8 -o %t.3
// RUN: attn-opt %s --attn-lower-to-llvm-pipeline=vector-width=8 --mlir-disable-threading -o %t.4
// RUN: diff %t.1 %t.2
// RUN: diff %t.1 %t.3
// RUN: diff %t.1 %t.4
// RUN: FileCheck %s < %t.1

/// The first global is the first one the first function reads.
// CHECK: llvm.mlir.global private constant @[[FIRST:__constant_[0-9a-z]+]](
// CHECK-LABEL: llvm.func @a(
// CHECK: llvm.mlir.addressof @[[FIRST]] :

func.func @a(%q: tensor<1x2x40x16xf32>, %k: tensor<1x2x40x16xf32>, %v: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax,
      pattern = #attn.union<[#attn.window<before = 5, after = 0>, #attn.global<[0, 3]>]>}
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}
func.func @b(%q: tensor<1x2x40x16xf32>, %k: tensor<1x2x40x16xf32>, %v: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax,
      pattern = #attn.random<blocks = 2, block_size = 8, seed = 3>}
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}
func.func @c(%q: tensor<1x2x40x16xf32>, %k: tensor<1x2x40x16xf32>, %v: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.pointwise<relu>,
      pattern = #attn.intersect<[#attn.causal, #attn.strided<stride = 4>]>}
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}
func.func @d(%q: tensor<1x2x40x16xf32>, %k: tensor<1x2x40x16xf32>, %v: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}
