// FAVOR+ at its largest feature count (65536, the verifier's limit;
// test/Dialect/Attn/limits.mlir) compiles in seconds through both
// pipelines: the 65536 x 16 projection is one constant, and on the GPU it
// stays on the host (attn-gpu-sink-constants sinks no global above 64 KiB:
// in the kernel module, ptxas took 15 s to read it as PTX data; issue 40).
// The results at 4096 features are checked against the reference.
//
// RUN: attn-opt %s --attn-lower-to-llvm-pipeline -o /dev/null
// RUN: attn-opt %s --attn-lower-to-nvvm-pipeline="chip=sm_90a format=isa" --mlir-elide-elementsattrs-if-larger=16 | FileCheck %s
// RUN: attn-run %s --entry checked --random-inputs --check | FileCheck %s --check-prefix=CHECKED

// The projection is a global of the host module, passed to the kernels.
// CHECK: llvm.mlir.global private constant @{{.*}}(dense_resource<__elided__> : tensor<65536x16xf32>)
// CHECK: gpu.binary
// CHECK-NOT: 65536x16
// CHECKED: check result0: {{.*}} ok

func.func @most(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x64x16xf32>, %v: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<favor, features = 65536>, pattern = #attn.causal} : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %0 : tensor<1x1x64x16xf32>
}

func.func @checked(%q: tensor<1x2x37x16xf32>, %k: tensor<1x2x37x16xf32>, %v: tensor<1x2x37x8xf32>) -> tensor<1x2x37x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<favor, features = 4096>, pattern = #attn.causal} : tensor<1x2x37x16xf32>, tensor<1x2x37x16xf32>, tensor<1x2x37x8xf32> -> tensor<1x2x37x8xf32>
  return %0 : tensor<1x2x37x8xf32>
}
