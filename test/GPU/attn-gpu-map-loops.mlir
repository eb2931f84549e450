// RUN: attn-opt %s --attn-gpu-map-loops=threads=64 | FileCheck %s
// RUN: attn-opt %s --attn-gpu-map-loops=threads=64 --convert-parallel-loops-to-gpu --canonicalize | FileCheck %s --check-prefix=LAUNCH

// A 3-d loop nest of 2 x 3 x 50 = 300 iterations: 5 blocks of 64 threads,
// the linear index split innermost-first, the tail guarded.

// CHECK-LABEL: func.func @nest
// CHECK:         %[[BLOCKS:.*]] = arith.ceildivsi %[[TOTAL:[0-9]+]], %c64 : index
// CHECK:         scf.parallel (%[[BLK:.*]]) = (%{{.*}}) to (%[[BLOCKS]])
// CHECK:           scf.parallel (%[[THR:.*]]) = (%{{.*}}) to (%{{.*}})
// CHECK:             %[[LIN:.*]] = arith.addi %{{.*}}, %[[THR]]
// CHECK:             %[[IN:.*]] = arith.cmpi slt, %[[LIN]], %[[TOTAL]]
// CHECK:             scf.if %[[IN]] {
// CHECK:               arith.remui %[[LIN]], %{{.*}}
// CHECK:               memref.store
// CHECK:           } {mapping = [#gpu.loop_dim_map<processor = thread_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
// CHECK:         } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}

// LAUNCH-LABEL: func.func @nest
// LAUNCH:         gpu.launch blocks({{.*}}) in ({{.*}} = %c5{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}}) threads({{.*}}) in ({{.*}} = %c64{{.*}}, {{.*}} = %c1{{.*}}, {{.*}} = %c1{{.*}})
// LAUNCH:           arith.cmpi slt, %{{.*}}, %c300
func.func @nest(%m: memref<2x3x50xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c50 = arith.constant 50 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c2, %c3, %c50) step (%c1, %c1, %c1) {
    memref.store %f, %m[%i, %j, %k] : memref<2x3x50xf32>
    scf.reduce
  }
  return
}

// Loops with reductions and loops already inside kernels stay as they are.

// CHECK-LABEL: func.func @left_alone
// CHECK:         scf.parallel
// CHECK-NOT:     mapping
// CHECK:         scf.reduce
func.func @left_alone(%m: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  %r = scf.parallel (%i) = (%c0) to (%c8) step (%c1) init (%z) -> f32 {
    %x = memref.load %m[%i] : memref<8xf32>
    scf.reduce(%x : f32) {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      scf.reduce.return %s : f32
    }
  }
  return %r : f32
}
