// RUN: attn-opt %s --attn-lower-to-llvm-pipeline | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-llvm-pipeline="reference=1 chunks=2" | FileCheck %s

/// The CPU pipeline ends in the LLVM dialect: the result became an
/// out-parameter (a fourth memref descriptor), the C interface is emitted,
/// the parallel loops are OpenMP work-sharing loops, and math.exp is a
/// polynomial (no libm call).
// CHECK-LABEL: llvm.func @attention(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64
// CHECK-NOT: -> !llvm.struct
// CHECK: omp.parallel
// CHECK: omp.wsloop
// CHECK-NOT: llvm.call @expf
// CHECK-LABEL: llvm.func @_mlir_ciface_attention(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
func.func @attention(%query: tensor<1x2x32x8xf32>, %key: tensor<1x2x32x8xf32>,
                     %value: tensor<1x2x32x8xf32>) -> tensor<1x2x32x8xf32>
    attributes {llvm.emit_c_interface} {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x2x32x8xf32>
  return %0 : tensor<1x2x32x8xf32>
}
