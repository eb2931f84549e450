// RUN: attn-opt %s --attn-math-approximation -split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-math-approximation=avx512=true -split-input-file | FileCheck %s --check-prefix=AVX512

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

// -----

/// With avx512, exp of vector<16xf32> is 2^k exp(r) with 2^k applied by
/// vscalefps under a lane mask (x >= ln FLT_MIN or NaN: uge); the other
/// lanes are 0. attn.flush_below moves the mask's bound. Other types keep
/// MLIR's approximation, the NaN select and, for flush_below, a select of
/// 0 below the bound.
// CHECK-LABEL: func @scalef
// AVX512-LABEL: func @scalef
// AVX512-DAG: %[[MIN:.+]] = arith.constant dense<-87.336{{[0-9]+}}> : vector<16xf32>
// AVX512-DAG: %[[FLUSH:.+]] = arith.constant dense<-6.400000e+01> : vector<16xf32>
// AVX512: %[[KEEP:.+]] = arith.cmpf uge, %[[X:.+]], %[[MIN]] : vector<16xf32>
// AVX512: %[[MASK:.+]] = llvm.bitcast %[[KEEP]] : vector<16xi1> to i16
// AVX512: x86vector.avx512.mask.scalef %{{.*}}, %{{.*}}, %{{.*}}, %[[MASK]], %{{.*}} : vector<16xf32>
// AVX512: %[[KEEP2:.+]] = arith.cmpf uge, %[[X]], %[[FLUSH]] : vector<16xf32>
// AVX512: %[[MASK2:.+]] = llvm.bitcast %[[KEEP2]] : vector<16xi1> to i16
// AVX512: x86vector.avx512.mask.scalef %{{.*}}, %{{.*}}, %{{.*}}, %[[MASK2]], %{{.*}} : vector<16xf32>
// AVX512-NOT: x86vector
// AVX512: return
// CHECK-NOT: x86vector
// CHECK: %[[LOW:.+]] = arith.cmpf olt, %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: arith.select %[[LOW]], %{{.*}}, %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: return
func.func @scalef(%x: vector<16xf32>, %y: vector<8xf32>) -> (vector<16xf32>, vector<16xf32>, vector<8xf32>) {
  %e = math.exp %x : vector<16xf32>
  %f = math.exp %x {attn.flush_below = -64.0 : f32} : vector<16xf32>
  %g = math.exp %y : vector<8xf32>
  return %e, %f, %g : vector<16xf32>, vector<16xf32>, vector<8xf32>
}
