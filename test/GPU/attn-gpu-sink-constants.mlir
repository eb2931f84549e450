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

// Constant globals: a table of 64 KiB or less is sunk (outlining copies it
// into the kernel module); a larger one (a FAVOR+ projection of 65536
// features) stays on the host and reaches the kernel as an argument, since
// ptxas reads PTX data at seconds per megabyte (issue 40).
// CHECK-LABEL: func.func @globals
// CHECK:         %[[BIG:.*]] = memref.get_global @big : memref<65536x16xf32>
// CHECK:         gpu.launch
// CHECK:           %[[SMALL:.*]] = memref.get_global @small : memref<128x128xf32>
// CHECK-NOT:       memref.get_global
// CHECK:           memref.load %[[SMALL]]
// CHECK:           memref.load %[[BIG]]
memref.global "private" constant @small : memref<128x128xf32> = dense<1.0>
memref.global "private" constant @big : memref<65536x16xf32> = dense<2.0>
func.func @globals(%out: memref<2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %small = memref.get_global @small : memref<128x128xf32>
  %big = memref.get_global @big : memref<65536x16xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %a = memref.load %small[%tx, %tx] : memref<128x128xf32>
    %b = memref.load %big[%tx, %tx] : memref<65536x16xf32>
    memref.store %a, %out[%tx] : memref<2xf32>
    memref.store %b, %out[%ty] : memref<2xf32>
    gpu.terminator
  }
  return
}
