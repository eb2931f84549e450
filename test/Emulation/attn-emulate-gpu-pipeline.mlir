// RUN: attn-opt %s --attn-emulate-gpu-pipeline | FileCheck %s
// RUN: attn-opt %s --attn-emulate-gpu-pipeline="tensor-cores=false" | FileCheck %s --check-prefix=SIMT

/// The GPU pipeline's front (the fused kernel of convert-attn-to-gpu, here
/// the mma.sync one for f16), each launch emulated by an OpenMP team, all
/// lowered to the LLVM dialect for the host: no GPU op, no gpu.module, no
/// binary is left.
// CHECK-LABEL: llvm.func @causal_f16(
// CHECK: omp.parallel
// CHECK: omp.barrier
// CHECK-NOT: gpu.
// CHECK-NOT: nvgpu.
// SIMT-LABEL: llvm.func @causal_f16(
// SIMT: omp.parallel
// SIMT-NOT: gpu.
func.func @causal_f16(%query: tensor<1x2x40x16xf16>, %key: tensor<1x1x40x16xf16>,
                      %value: tensor<1x1x40x16xf16>) -> tensor<1x2x40x16xf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x2x40x16xf16>, tensor<1x1x40x16xf16>, tensor<1x1x40x16xf16> -> tensor<1x2x40x16xf16>
  return %0 : tensor<1x2x40x16xf16>
}
