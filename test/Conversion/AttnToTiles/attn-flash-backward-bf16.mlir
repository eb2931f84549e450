// RUN: attn-opt %s --attn-flash-backward="vector-width=16 bf16-dot=native" 2> /dev/null | FileCheck %s
// RUN: attn-opt %s --attn-flash-backward="vector-width=16 bf16-dot=emulated" 2> /dev/null | FileCheck %s --check-prefix=EMULATED
// RUN: attn-opt %s --attn-flash-backward="vector-width=16" 2> /dev/null | FileCheck %s --check-prefix=NONE

/// bf16 Q, K, V and dO: the five products of the block step on bf16 pairs
/// (x86vector.avx512.dot, the pass loading its dialect itself), the
/// prologue's words in i32 buffers; partial blocks test whether their rows
/// are finite before the product that skips zeros. Emulated: the same
/// kernel, the dot product as two FMAs on the extended halves. Without
/// bf16-dot: f32 products only.
// CHECK-LABEL: func.func @causal_bf16
// CHECK: memref.alloc({{.*}}) {alignment = 64 : i64} : memref<1x2x8x64xi32>
// CHECK: x86vector.avx512.dot
// CHECK: arith.cmpf oeq
// CHECK: scf.if
// CHECK: x86vector.avx512.dot
// EMULATED-LABEL: func.func @causal_bf16
// EMULATED-NOT: x86vector
// EMULATED: vector.shuffle
// EMULATED: arith.extf {{.*}} : vector<16xbf16> to vector<16xf32>
// NONE-LABEL: func.func @causal_bf16
// NONE-NOT: x86vector.avx512.dot
// NONE-NOT: x64xi32>
// NONE: return
func.func @causal_bf16(%q: tensor<1x2x40x16xbf16>, %do: tensor<1x2x40x16xbf16>) -> tensor<1x2x40x16xbf16> {
  %o = attn.attention %q, %q, %q {normalizer = #attn.pointwise<relu>, pattern = #attn.causal} : tensor<1x2x40x16xbf16>, tensor<1x2x40x16xbf16>, tensor<1x2x40x16xbf16> -> tensor<1x2x40x16xbf16>
  %dq, %dk, %dv = attn.attention_grad %o, %do : tensor<1x2x40x16xbf16>, tensor<1x2x40x16xbf16> -> tensor<1x2x40x16xbf16>, tensor<1x2x40x16xbf16>, tensor<1x2x40x16xbf16>
  return %dq : tensor<1x2x40x16xbf16>
}
