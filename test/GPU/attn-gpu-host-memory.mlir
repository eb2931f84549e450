// RUN: attn-opt %s --attn-gpu-host-memory | FileCheck %s

// Host allocations become managed (host_shared) ones, deallocations the
// matching gpu.dealloc; a constant global read by a kernel is copied once
// into managed memory and freed at the end of the block.

module attributes {gpu.container_module} {
  memref.global "private" constant @table : memref<4xi32> = dense<[0, 1, 2, 3]>
  gpu.module @kernels {
    gpu.func @k(%t: memref<4xi32>, %o: memref<4xf32>) kernel {
      gpu.return
    }
  }
  // CHECK-LABEL: func.func @f
  // CHECK:         %[[G:.*]] = memref.get_global @table
  // CHECK:         %[[T:.*]] = gpu.alloc  host_shared () : memref<4xi32>
  // CHECK:         memref.copy %[[G]], %[[T]]
  // CHECK:         %[[O:.*]] = gpu.alloc  host_shared () : memref<4xf32>
  // CHECK:         gpu.launch_func @kernels::@k {{.*}} args(%[[T]] : memref<4xi32>, %[[O]] : memref<4xf32>)
  // CHECK:         memref.copy %[[O]], %{{.*}}
  // CHECK:         %[[W:.*]] = gpu.wait async
  // CHECK:         %[[D:.*]] = gpu.dealloc async [%[[W]]] %[[O]]
  // CHECK:         gpu.wait [%[[D]]]
  // CHECK:         gpu.dealloc async [%{{.*}}] %[[T]]
  // CHECK:         return
  func.func @f(%out: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %g = memref.get_global @table : memref<4xi32>
    %o = memref.alloc() : memref<4xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%g : memref<4xi32>, %o : memref<4xf32>)
    memref.copy %o, %out : memref<4xf32> to memref<4xf32>
    memref.dealloc %o : memref<4xf32>
    return
  }
}
