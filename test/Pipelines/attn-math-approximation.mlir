// RUN: attn-opt %s --attn-math-approximation -split-input-file | FileCheck %s

/// exp, erf and tanh on vectors become polynomials (plain arithmetic LLVM
/// vectorizes), not calls into libm.
// CHECK-LABEL: func @approximated
// CHECK-NOT: math.exp
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK: arith.mulf
// CHECK: return
func.func @approximated(%x: vector<16xf32>) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>) {
  %e = math.exp %x : vector<16xf32>
  %g = math.erf %x : vector<16xf32>
  %t = math.tanh %x : vector<16xf32>
  return %e, %g, %t : vector<16xf32>, vector<16xf32>, vector<16xf32>
}

// -----

/// Ops without an approximation are left alone.
// CHECK-LABEL: func @kept
// CHECK: math.sqrt
func.func @kept(%x: f32) -> f32 {
  %s = math.sqrt %x : f32
  return %s : f32
}
