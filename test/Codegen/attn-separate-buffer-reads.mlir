// RUN: attn-opt %s --pass-pipeline='builtin.module(func.func(attn-separate-buffer-reads))' | FileCheck %s
// RUN: attn-opt %s --pass-pipeline='builtin.module(func.func(attn-separate-buffer-reads),one-shot-bufferize{bufferize-function-boundaries})' | FileCheck %s --check-prefix=BUF

/// One read-only to_buffer of %t serves two readers (as CSE leaves the reads
/// of two fused kernels): the second reader gets its own, right before it,
/// after the op that could write %t's buffer in place.
// CHECK-LABEL: func.func @two_readers
// CHECK: %[[T:.+]] = linalg.generic
// CHECK: %[[M1:.+]] = bufferization.to_buffer %[[T]] read_only
// CHECK: memref.load %[[M1]]
// CHECK: %[[U:.+]] = linalg.generic
// CHECK: %[[M2:.+]] = bufferization.to_buffer %[[T]] read_only
// CHECK-NEXT: scf.for
// CHECK: memref.load %[[M2]]
/// Bufferized, the second generic no longer writes %t's buffer: it gets
/// its own.
// BUF-LABEL: func.func @two_readers
// BUF: %[[A:.+]] = memref.alloc
// BUF: %[[B:.+]] = memref.alloc
// BUF-NOT: memref.alloc
// BUF: return
#id = affine_map<(d0) -> (d0)>
func.func @two_readers(%x: tensor<4xf32>, %i: index) -> (f32, f32, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %cst = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %m = bufferization.to_buffer %t read_only : tensor<4xf32> to memref<4xf32>
  %r1 = memref.load %m[%i] : memref<4xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %r2 = scf.for %j = %c0 to %c4 step %c1 iter_args(%acc = %cst) -> (f32) {
    %v = memref.load %m[%j] : memref<4xf32>
    %n = arith.addf %acc, %v : f32
    scf.yield %n : f32
  }
  return %r1, %r2, %u : f32, f32, tensor<4xf32>
}

/// A function argument is never written: its read stays shared.
// CHECK-LABEL: func.func @argument
// BUF-LABEL: func.func @argument
// CHECK-COUNT-1: bufferization.to_buffer
// CHECK-NOT: bufferization.to_buffer
func.func @argument(%x: tensor<4xf32>, %i: index) -> (f32, f32) {
  %m = bufferization.to_buffer %x read_only : tensor<4xf32> to memref<4xf32>
  %r1 = memref.load %m[%i] : memref<4xf32>
  %c0 = arith.constant 0 : index
  %r2 = memref.load %m[%c0] : memref<4xf32>
  return %r1, %r2 : f32, f32
}
