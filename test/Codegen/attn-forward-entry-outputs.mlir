// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-forward-entry-outputs))" | FileCheck %s

// The result is computed in the caller's buffer: the allocation becomes a
// cast of the argument, the copy is gone.
// CHECK-LABEL: func.func @entry(
// CHECK-SAME:    %[[IN:.+]]: memref<?x?xf32>, %[[OUT:.+]]: memref<?x?xf32>)
// CHECK-NEXT:    %[[C0:.+]] = arith.constant 0
// CHECK-NEXT:    %[[D:.+]] = memref.dim %[[OUT]], %[[C0]]
// CHECK-NEXT:    %[[BUF:.+]] = memref.cast %[[OUT]] : memref<?x?xf32> to memref<?x4xf32>
// CHECK-NEXT:    memref.cast %[[IN]]
// CHECK-NEXT:    linalg.copy ins(%{{.+}} : memref<?x4xf32>) outs(%[[BUF]] : memref<?x4xf32>)
// CHECK-NEXT:    return
func.func @entry(%in: memref<?x?xf32>, %out: memref<?x?xf32>) attributes {attn.entry = "f"} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %out, %c0 : memref<?x?xf32>
  %alloc = memref.alloc(%n) : memref<?x4xf32>
  %src = memref.cast %in : memref<?x?xf32> to memref<?x4xf32>
  linalg.copy ins(%src : memref<?x4xf32>) outs(%alloc : memref<?x4xf32>)
  %dst = memref.cast %out : memref<?x?xf32> to memref<?x4xf32>
  memref.copy %alloc, %dst : memref<?x4xf32> to memref<?x4xf32>
  return
}

// -----

// Not forwarded: the copy is guarded (sizes checked after computing), the
// buffer is read elsewhere, the allocation is used after the copy, or the
// function is not an entry.
// CHECK-LABEL: func.func @guarded(
// CHECK:         memref.alloc
// CHECK:         memref.copy
func.func @guarded(%out: memref<?xf32>, %ok: i1) attributes {attn.entry = "g"} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %out, %c0 : memref<?xf32>
  %alloc = memref.alloc(%n) : memref<?xf32>
  scf.if %ok {
    memref.copy %alloc, %out : memref<?xf32> to memref<?xf32>
  }
  return
}

// CHECK-LABEL: func.func @read_elsewhere(
// CHECK:         memref.alloc
// CHECK:         memref.copy
func.func @read_elsewhere(%out: memref<?xf32>) -> f32 attributes {attn.entry = "r"} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %out, %c0 : memref<?xf32>
  %alloc = memref.alloc(%n) : memref<?xf32>
  %x = memref.load %out[%c0] : memref<?xf32>
  memref.copy %alloc, %out : memref<?xf32> to memref<?xf32>
  return %x : f32
}

// CHECK-LABEL: func.func @used_after(
// CHECK:         memref.alloc
// CHECK:         memref.copy
func.func @used_after(%out: memref<?xf32>) -> f32 attributes {attn.entry = "u"} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %out, %c0 : memref<?xf32>
  %alloc = memref.alloc(%n) : memref<?xf32>
  memref.copy %alloc, %out : memref<?xf32> to memref<?xf32>
  %x = memref.load %alloc[%c0] : memref<?xf32>
  return %x : f32
}

// CHECK-LABEL: func.func @not_entry(
// CHECK:         memref.alloc
// CHECK:         memref.copy
func.func @not_entry(%out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %out, %c0 : memref<?xf32>
  %alloc = memref.alloc(%n) : memref<?xf32>
  memref.copy %alloc, %out : memref<?xf32> to memref<?xf32>
  return
}
