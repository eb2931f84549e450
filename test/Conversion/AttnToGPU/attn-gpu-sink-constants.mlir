// RUN: attn-opt %s --attn-gpu-sink-constants | FileCheck %s

// CHECK-LABEL: func.func @f
// CHECK:         gpu.launch
// CHECK-DAG:       arith.constant dense<2.000000e+00> : vector<4xf32>
// CHECK-DAG:       arith.constant 0xFF800000 : f32
// CHECK:           vector.store
func.func @f(%m: memref<4xf32>, %s: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = arith.constant dense<2.0> : vector<4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    vector.store %v, %m[%c0] : memref<4xf32>, vector<4xf32>
    memref.store %ninf, %s[%c0] : memref<1xf32>
    gpu.terminator
  }
  return
}
