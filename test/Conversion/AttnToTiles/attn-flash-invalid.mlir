// RUN: not attn-opt %s --attn-flash="vector-width=12" 2>&1 | FileCheck %s --check-prefix=WIDTH
// RUN: not attn-opt %s --attn-flash="vector-registers=4" 2>&1 | FileCheck %s --check-prefix=REGS
// RUN: not attn-opt %s --attn-lower-pointwise="vector-width=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not attn-opt %s --attn-flash="bf16-dot=avx" 2>&1 | FileCheck %s --check-prefix=DOT
// RUN: not attn-opt %s --attn-block-sparse="vector-width=32 bf16-dot=native" 2>&1 | FileCheck %s --check-prefix=DOT32

/// Target options the kernels cannot use are diagnosed, not guessed.
// WIDTH: error: attn-flash: vector-width (12) must be 4, 8, 16 or 32 and vector-registers (0) 0 or at least 8
// REGS: error: attn-flash: vector-width (16) must be 4, 8, 16 or 32 and vector-registers (4) 0 or at least 8
// ZERO: error: attn-lower-pointwise: vector-width (0) must be 4, 8, 16 or 32
// DOT: error: attn-flash: bf16-dot must be none, native or emulated, not 'avx'
// DOT32: error: attn-block-sparse: bf16-dot=native needs a vector width of 4, 8 or 16
func.func @f(%q: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %0 : tensor<1x1x64x16xf32>
}
