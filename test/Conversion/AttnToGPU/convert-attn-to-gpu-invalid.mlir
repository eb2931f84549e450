// RUN: not attn-opt %s --convert-attn-to-gpu=block-k=24 2>&1 | FileCheck %s --check-prefix=BLOCKK
// RUN: not attn-opt %s --attn-gpu-map-loops=threads=2000 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: not attn-opt %s --convert-attn-to-gpu=block-k=64 2>&1 | FileCheck %s --check-prefix=SMEM

// BLOCKK: error: convert-attn-to-gpu: block-k (24) must be a positive multiple of 16 (or 0)
// THREADS: error: attn-gpu-map-loops: threads (2000) must be in [1, 1024]
// SMEM: error: convert-attn-to-gpu: K and V blocks of 64 keys need 65536 bytes of shared memory, more than the 49152 a kernel may use statically (use a smaller block-k)
func.func @f(%q: tensor<1x1x64x16xf16>, %k: tensor<1x1x64x16xf16>, %v: tensor<1x1x64x16xf16>) -> tensor<1x1x64x16xf16> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax} : tensor<1x1x64x16xf16>, tensor<1x1x64x16xf16>, tensor<1x1x64x16xf16> -> tensor<1x1x64x16xf16>
  return %o : tensor<1x1x64x16xf16>
}

func.func @wide(%q: tensor<1x1x64x128xf32>, %k: tensor<1x1x64x128xf32>, %v: tensor<1x1x64x128xf32>) -> tensor<1x1x64x128xf32> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax} : tensor<1x1x64x128xf32>, tensor<1x1x64x128xf32>, tensor<1x1x64x128xf32> -> tensor<1x1x64x128xf32>
  return %o : tensor<1x1x64x128xf32>
}
