// RUN: attn-opt %s --attn-lower-to-llvm-pipeline | FileCheck %s
// RUN: attn-opt %s --attn-lower-to-llvm-pipeline="reference=1 chunks=2" | FileCheck %s

/// The pipeline's target is its options' (default: AVX-512, 16 lanes, 32
/// registers), never the host's: the same command prints the same IR on
/// every machine, and AVX2's options give different (8-lane) kernels.
// RUN: attn-opt %s --attn-lower-to-llvm-pipeline > %t.default
// RUN: attn-opt %s --attn-lower-to-llvm-pipeline="vector-width=16 vector-registers=32" > %t.explicit
// RUN: diff %t.default %t.explicit
// RUN: attn-opt %s --attn-lower-to-llvm-pipeline="vector-width=8" > %t.avx2
// RUN: not diff -q %t.default %t.avx2
// RUN: FileCheck %s --check-prefix=AVX512 < %t.default
// RUN: FileCheck %s --check-prefix=AVX2 < %t.avx2
// AVX512: vector<16xf32>
// AVX2-NOT: vector<16xf32>
// AVX2: vector<8xf32>

/// The CPU pipeline ends in the LLVM dialect: the result became an
/// out-parameter (a fourth memref descriptor), the C interface is emitted,
/// the parallel loops are OpenMP work-sharing loops (guided), and math.exp is a
/// polynomial (no libm call).
// CHECK-LABEL: llvm.func @attention(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64
// CHECK-NOT: -> !llvm.struct
// CHECK: omp.parallel
// CHECK: omp.wsloop schedule(guided)
// CHECK-NOT: llvm.call @expf
// CHECK-LABEL: llvm.func @_mlir_ciface_attention(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
func.func @attention(%query: tensor<1x2x32x8xf32>, %key: tensor<1x2x32x8xf32>,
                     %value: tensor<1x2x32x8xf32>) -> tensor<1x2x32x8xf32>
    attributes {llvm.emit_c_interface} {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x2x32x8xf32>
  return %0 : tensor<1x2x32x8xf32>
}
