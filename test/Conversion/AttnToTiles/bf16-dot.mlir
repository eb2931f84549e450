// bf16 dot products of pairs (bf16-dot): QK^T and PV as vdpbf16ps
// (x86vector.avx512.dot, which lowers to the LLVM intrinsic and, for a CPU
// with AVX512_BF16, to the instruction) on Q^T and P in pairs and V packed
// in pairs of keys; the portable spelling with bf16-dot=emulated; f32
// kernels, odd head dims and decode tiles keep their f32 dot products.
// RUN: attn-opt %s --attn-flash="bf16-dot=native" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: attn-opt %s --attn-flash="bf16-dot=native" 2>/dev/null | FileCheck %s --check-prefix=NATIVE
// RUN: attn-opt %s --attn-flash="bf16-dot=emulated vector-width=8" 2>&1 | FileCheck %s --check-prefix=EMULATED
// RUN: attn-opt %s --attn-flash 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: attn-opt %s --attn-lower-to-llvm-pipeline="bf16-dot=native" -o - 2>/dev/null | FileCheck %s --check-prefix=LLVM
// attn-compile takes them where they pay (TargetModel::bf16DotFor): Zen 4,
// not Sapphire Rapids (AVX512_BF16 at half the FMAs' multiply-adds).
// RUN: attn-compile %s --target znver4 --object %t.o && %llvm_objdump -d %t.o | FileCheck %s --check-prefix=ASM
// RUN: attn-compile %s --target sapphirerapids --object %t.spr.o && %llvm_objdump -d %t.spr.o | FileCheck %s --check-prefix=ASM-V4
// RUN: attn-compile %s --target x86-64-v4 --object %t.v4.o && %llvm_objdump -d %t.v4.o | FileCheck %s --check-prefix=ASM-V4

// The first op only (odd head dim, f32, decode: f32 dot products).
// REMARK: remark: attn-flash: tiles of 64 queries x 64 keys, 16 lanes; visiting 8 of 8 key blocks (8 full); bf16 dot products of pairs (vdpbf16ps)
// REMARK-NOT: bf16 dot products

// NATIVE-LABEL: func.func @softmax
// NATIVE: scf.parallel
// V in pairs of keys: two rows interleaved, as i32.
// NATIVE: vector.interleave {{.*}} : vector<16xbf16> -> vector<32xbf16>
// NATIVE: vector.bitcast {{.*}} : vector<32xbf16> to vector<16xi32>
// QK^T: a key's pair broadcast against Q^T's pairs.
// NATIVE: vector.bitcast {{.*}} : vector<2xbf16> to vector<1xi32>
// NATIVE: vector.bitcast {{.*}} : vector<16xi32> to vector<32xbf16>
// NATIVE: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>
// The unscaled dot times the scale.
// NATIVE: arith.mulf {{.*}} : vector<16xf32>
// P rounded to bf16, rows interleaved, then PV.
// NATIVE: arith.truncf {{.*}} : vector<16xf32> to vector<16xbf16>
// NATIVE: vector.interleave {{.*}} : vector<16xbf16> -> vector<32xbf16>
// NATIVE: x86vector.avx512.dot {{.*}} : vector<32xbf16> -> vector<16xf32>

// EMULATED: remark: attn-flash: {{.*}}; bf16 dot products of pairs (emulated)
// EMULATED-NOT: x86vector
// EMULATED: vector.shuffle {{.*}} [1, 3, 5, 7, 9, 11, 13, 15] : vector<16xbf16>, vector<16xbf16>
// EMULATED: arith.extf {{.*}} : vector<8xbf16> to vector<8xf32>
// EMULATED: vector.fma

// NONE-NOT: bf16 dot products
// NONE-NOT: x86vector

// LLVM: llvm.call_intrinsic "llvm.x86.avx512bf16.dpbf16ps.512"
// ASM: vdpbf16ps
// ASM-V4-NOT: vdpbf16ps

func.func @softmax(%q: tensor<1x2x100x64xbf16>, %k: tensor<1x1x100x64xbf16>, %v: tensor<1x1x100x32xbf16>) -> tensor<1x2x100x32xbf16> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax} : tensor<1x2x100x64xbf16>, tensor<1x1x100x64xbf16>, tensor<1x1x100x32xbf16> -> tensor<1x2x100x32xbf16>
  return %0 : tensor<1x2x100x32xbf16>
}

// Not with an odd head dim, f32 inputs, or decode tiles.
// NATIVE-LABEL: func.func @odd_dim
// NATIVE-NOT: x86vector
// NATIVE-LABEL: func.func @f32
// NATIVE-NOT: x86vector
// NATIVE-LABEL: func.func @decode
// NATIVE-NOT: x86vector
// NATIVE: return
func.func @odd_dim(%q: tensor<1x2x100x33xbf16>) -> tensor<1x2x100x33xbf16> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax} : tensor<1x2x100x33xbf16>, tensor<1x2x100x33xbf16>, tensor<1x2x100x33xbf16> -> tensor<1x2x100x33xbf16>
  return %0 : tensor<1x2x100x33xbf16>
}

func.func @f32(%q: tensor<1x2x100x32xf32>) -> tensor<1x2x100x32xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax} : tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32>, tensor<1x2x100x32xf32> -> tensor<1x2x100x32xf32>
  return %0 : tensor<1x2x100x32xf32>
}

func.func @decode(%q: tensor<1x4x1x32xbf16>, %k: tensor<1x1x100x32xbf16>) -> tensor<1x4x1x32xbf16> {
  %0 = attn.attention %q, %k, %k {normalizer = #attn.softmax} : tensor<1x4x1x32xbf16>, tensor<1x1x100x32xbf16>, tensor<1x1x100x32xbf16> -> tensor<1x4x1x32xbf16>
  return %0 : tensor<1x4x1x32xbf16>
}
