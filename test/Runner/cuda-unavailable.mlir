// UNSUPPORTED: cuda-gpu
// Without a GPU or driver, --target=cuda fails with the reason, before
// compiling, and writes nothing.
// RUN: rm -rf %t && mkdir -p %t
// RUN: not attn-run %s --target=cuda --random-inputs --output %t/out.npy 2>&1 | FileCheck %s
// RUN: not ls %t/out.npy
// RUN: not attn-run --probe-cuda | FileCheck %s --check-prefix=PROBE
// CHECK: attn-run: error: --target=cuda: {{cannot load the CUDA driver|cuInit failed|no CUDA device}}
// PROBE: cuda: unavailable: {{cannot load the CUDA driver|cuInit failed|no CUDA device}}
func.func @f(%q: tensor<1x1x16x16xf16>, %k: tensor<1x1x16x16xf16>, %v: tensor<1x1x16x16xf16>) -> tensor<1x1x16x16xf16> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax} : tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16> -> tensor<1x1x16x16xf16>
  return %0 : tensor<1x1x16x16xf16>
}
