// RUN: attn-opt %s --attn-gpu-host-memory -split-input-file -verify-diagnostics

/// A kernel may not read a mutable host global: its device copy would stop
/// being the global.
module attributes {gpu.container_module} {
  memref.global "private" @state : memref<4xf32> = dense<0.0>
  gpu.module @kernels {
    gpu.func @k(%m: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func @mutable() {
    %c1 = arith.constant 1 : index
    // expected-error @below {{attn-gpu-host-memory: a GPU kernel reads a mutable host global}}
    %g = memref.get_global @state : memref<4xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%g : memref<4xf32>)
    return
  }
}

// -----

/// Only direct uses get the device copy; a view of a host buffer is refused.
module attributes {gpu.container_module} {
  memref.global "private" constant @table : memref<8xi32> = dense<1>
  gpu.module @kernels {
    gpu.func @k(%m: memref<4xi32, strided<[1], offset: 4>>) kernel {
      gpu.return
    }
  }
  func.func @view() {
    %c1 = arith.constant 1 : index
    // expected-error @below {{attn-gpu-host-memory: a GPU kernel reads a view of this host buffer}}
    %g = memref.get_global @table : memref<8xi32>
    %v = memref.subview %g[4] [4] [1] : memref<8xi32> to memref<4xi32, strided<[1], offset: 4>>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%v : memref<4xi32, strided<[1], offset: 4>>)
    return
  }
}
