// The hash rounds of attn.lsh_attention are a loop at run time, not code
// per round: 4097 rounds compile to the same code as 2 (both lowerings: the
// CPU kernels of attn-lsh-kernels and the linalg lowering the reference, the
// GPU pipeline and other shapes take), with every round's rotation in one
// constant; before, each round was unrolled and the LLVM pipeline took
// minutes (issue 40). The limit that remains is the constant's size, a
// verifier diagnostic (test/Dialect/Attn/invalid.mlir). The results are
// checked against the reference at 4097 rounds.
//
// RUN: attn-opt %s --attn-lsh-kernels="vector-width=16" | FileCheck %s --check-prefix=KERNELS
// RUN: attn-opt %s --convert-attn-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: attn-opt %s --attn-lower-to-llvm-pipeline -o /dev/null
// RUN: attn-opt %s --attn-lower-to-nvvm-pipeline=chip=sm_90a -o /dev/null
// RUN: attn-run %s --entry kernels --random-inputs --check | FileCheck %s --check-prefix=CHECKED
// RUN: attn-run %s --entry generic --random-inputs --check | FileCheck %s --check-prefix=CHECKED

// KERNELS-LABEL: func.func @kernels
// KERNELS: %[[ROT:.*]] = bufferization.to_buffer %{{.*}} : tensor<4097x16x4xf32> to memref<4097x16x4xf32>
// KERNELS: memref.subview %[[ROT]][%{{.*}}, 0, 0] [1, 16, 4]
// KERNELS: scf.for %[[R:.*]] = %{{.*}} to %c4097 step
// KERNELS: memref.subview %[[ROT]][%[[R]], 0, 0] [1, 16, 4]
// KERNELS-NOT: memref.subview %[[ROT]]
// KERNELS-LABEL: func.func @generic
func.func @kernels(%qk: tensor<1x2x64x16xf32>, %value: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  %0 = attn.lsh_attention %qk, %value {num_hashes = 4097, num_buckets = 8, chunk_size = 16, seed = 3} : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return %0 : tensor<1x2x64x16xf32>
}

// LINALG-LABEL: func.func @generic
// LINALG: arith.constant dense<{{.*}}> : tensor<4097x16x4xf32>
// LINALG: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// LINALG-NOT: scf.for
// LINALG: return
func.func @generic(%qk: tensor<1x2x64x16xf32>, %value: tensor<1x2x64x8xf32>) -> tensor<1x2x64x8xf32> {
  %0 = attn.lsh_attention %qk, %value {num_hashes = 4097, num_buckets = 8, chunk_size = 16, seed = 3} : tensor<1x2x64x16xf32>, tensor<1x2x64x8xf32> -> tensor<1x2x64x8xf32>
  return %0 : tensor<1x2x64x8xf32>
}

// CHECKED: check result0: {{.*}} ok
