// RUN: attn-opt %s --attn-emulate-gpu -split-input-file -verify-diagnostics | FileCheck %s

// A launch becomes loops over the grid around an OpenMP team of blockDim
// threads; barriers are team barriers; a shuffle goes through the scratch
// buffer between two barriers; workgroup memory is one buffer per block.

// CHECK-LABEL: func.func @kernel
// CHECK:         %[[SCRATCH:.*]] = memref.alloc(%{{.*}}) : memref<?x12xf32>
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             scf.for
// CHECK:               %[[SH:.*]] = memref.alloc() : memref<32xf32>
// CHECK:               omp.parallel num_threads(%{{.*}} : i32) {
// CHECK:                 %[[T:.*]] = func.call @omp_get_thread_num() : () -> i32
// CHECK:                 memref.store %{{.*}}, %[[SH]]
// CHECK:                 omp.barrier
// CHECK:                 memref.store %{{.*}}, %[[SCRATCH]]
// CHECK:                 omp.barrier
// CHECK:                 arith.xori
// CHECK:                 memref.load %[[SCRATCH]]
// CHECK:                 omp.barrier
// CHECK:                 omp.terminator
// CHECK:               memref.dealloc %[[SH]]
// CHECK:         memref.dealloc %[[SCRATCH]]
// CHECK-NOT:     gpu.
func.func @kernel(%m: memref<2x32xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %i1 = arith.constant 1 : i32
  %i32 = arith.constant 32 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) workgroup(%sh : memref<32xf32, #gpu.address_space<workgroup>>) {
    %x = memref.load %m[%bx, %tx] : memref<2x32xf32>
    memref.store %x, %sh[%tx] : memref<32xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %y, %ok = gpu.shuffle xor %x, %i1, %i32 : f32
    memref.store %y, %m[%bx, %tx] : memref<2x32xf32>
    gpu.terminator
  }
  return
}

// -----

func.func @unsupported(%m: memref<32xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %x = memref.load %m[%tx] : memref<32xf32>
    // expected-error @below {{attn-emulate-gpu: unsupported in an emulated kernel}}
    %s = gpu.subgroup_reduce add %x : (f32) -> f32
    memref.store %s, %m[%tx] : memref<32xf32>
    gpu.terminator
  }
  return
}

// -----

// nvgpu.mma.sync: each lane writes its A (8 slots) and B (4 slots) elements
// into the warp's dense A and B in the scratch buffer, at the coordinates of
// MLIR's fragment layout; after a barrier it computes its 4 accumulators as
// 16-step dot products (math.fma) and waits again before the buffer is
// reused. A partial warp is a run-time error.

// CHECK-LABEL: func.func @mma
// CHECK:         %[[SCRATCH:.*]] = memref.alloc(%{{.*}}) : memref<?x12xf32>
// CHECK:         omp.parallel
// CHECK:           cf.assert %{{.*}}, "attn-emulate-gpu: nvgpu.mma.sync in a partial warp"
// CHECK-COUNT-12:  memref.store %{{.*}}, %[[SCRATCH]]
// CHECK:           omp.barrier
// CHECK:           scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)
// CHECK-COUNT-4:     math.fma
// CHECK:           omp.barrier
// CHECK-NOT:     nvgpu.
func.func @mma(%a: vector<4x2xf16>, %b: vector<2x2xf16>, %out: memref<32x4xf32>) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %zero = arith.constant dense<0.0> : vector<2x2xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c32, %sy = %c1, %sz = %c1) {
    %d = nvgpu.mma.sync (%a, %b, %zero) {mmaShape = [16, 8, 16]}
        : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
    %e = vector.extract %d[0, 0] : f32 from vector<2x2xf32>
    %c0 = arith.constant 0 : index
    memref.store %e, %out[%tx, %c0] : memref<32x4xf32>
    gpu.terminator
  }
  return
}
