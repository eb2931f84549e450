// RUN: attn-opt %s --attn-schedule-threads -split-input-file | FileCheck %s
// RUN: attn-opt %s --attn-schedule-threads="schedule-kind=dynamic" -split-input-file | FileCheck %s --check-prefix=DYNAMIC
// RUN: attn-opt %s --attn-schedule-threads="schedule-kind=static" -split-input-file | FileCheck %s --check-prefix=STATIC
// RUN: attn-opt %s --attn-schedule-threads="schedule-kind=runtime" -split-input-file | FileCheck %s --check-prefix=RUNTIME
// RUN: not attn-opt %s --attn-schedule-threads="schedule-kind=fastest" -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

/// A work-sharing loop without a schedule (convert-scf-to-openmp's) gets
/// the pass's: guided by default; static leaves it alone.
// CHECK-LABEL: func @unscheduled
// CHECK: omp.wsloop schedule(guided) {
// CHECK-NEXT: omp.loop_nest (%{{.*}}, %{{.*}}) : index = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}})
// DYNAMIC-LABEL: func @unscheduled
// DYNAMIC: omp.wsloop schedule(dynamic) {
// STATIC-LABEL: func @unscheduled
// STATIC: omp.wsloop {
// RUNTIME-LABEL: func @unscheduled
// RUNTIME: omp.wsloop schedule(runtime) {
// BAD: error: attn-schedule-threads: schedule-kind must be guided, dynamic, static or runtime, not 'fastest'
func.func @unscheduled(%out: memref<8x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%h, %c) : index = (%c0, %c0) to (%c8, %c2) step (%c1, %c1) {
        memref.store %one, %out[%h, %c] : memref<8x2xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// -----

/// A loop that has a schedule keeps it.
// CHECK-LABEL: func @scheduled
// CHECK: omp.wsloop schedule(static) {
// DYNAMIC-LABEL: func @scheduled
// DYNAMIC: omp.wsloop schedule(static) {
func.func @scheduled(%out: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop schedule(static) {
      omp.loop_nest (%i) : index = (%c0) to (%c8) step (%c1) {
        memref.store %one, %out[%i] : memref<8xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
