// RUN: attn-opt %s -attn-guard-allocation-sizes | FileCheck %s

// Dynamic sizes are checked without overflow against 2^47 bytes: each size
// is at least 0 and at most 2^47 / (the bytes so far). The element size
// (4) times the static sizes (8) is 32 bytes per step. On failure the
// error hook gets AllocationTooLarge (12), 32, the first size and the
// product of the others, and the allocation gets a size malloc refuses:
// -(2^62 / 32) = -144115188075855872, then 1.

// CHECK:       func.func private @attn_opt_runtime_error(i32, i64, i64, i64)
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME:    (%[[N:.*]]: index, %[[M:.*]]: index)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[LIMIT:.*]] = arith.constant 140737488355328 : index
// CHECK-DAG:     %[[STEP:.*]] = arith.constant 32 : index
// CHECK:         %[[NPOS:.*]] = arith.cmpi sge, %[[N]], %[[C0]] : index
// CHECK:         %[[ROOM:.*]] = arith.divui %[[LIMIT]], %[[STEP]] : index
// CHECK:         %[[NFITS:.*]] = arith.cmpi ule, %[[N]], %[[ROOM]] : index
// CHECK:         %[[MPOS:.*]] = arith.cmpi sge, %[[M]], %[[C0]] : index
// CHECK:         %[[ROOM2:.*]] = arith.divui %[[LIMIT]], %{{.*}} : index
// CHECK:         %[[MFITS:.*]] = arith.cmpi ule, %[[M]], %[[ROOM2]] : index
// CHECK:         %[[MOK:.*]] = arith.andi %[[MPOS]], %[[MFITS]] : i1
// CHECK:         %[[OK:.*]] = arith.andi %{{.*}}, %[[MOK]] : i1
// CHECK:         %[[BAD:.*]] = arith.xori %[[OK]], %{{.*}} : i1
// CHECK:         scf.if %[[BAD]] {
// CHECK:           %[[CODE:.*]] = arith.constant 12 : i32
// CHECK:           func.call @attn_opt_runtime_error(%[[CODE]], %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i64, i64, i64) -> ()
// CHECK:         }
// CHECK-DAG:     %[[SENTINEL:.*]] = arith.constant -144115188075855872 : index
// CHECK:         %[[N2:.*]] = arith.select %[[OK]], %[[N]], %[[SENTINEL]] : index
// CHECK:         %[[M2:.*]] = arith.select %[[OK]], %[[M]], %[[C1]] : index
// CHECK:         memref.alloc(%[[N2]], %[[M2]]) : memref<?x8x?xf32>
func.func @dynamic(%n: index, %m: index) -> memref<?x8x?xf32> {
  %a = memref.alloc(%n, %m) : memref<?x8x?xf32>
  return %a : memref<?x8x?xf32>
}

// Index elements count 8 bytes.

// CHECK-LABEL: func.func @index_elements
// CHECK:         arith.constant 8 : index
// CHECK:         arith.constant -576460752303423488 : index
// CHECK:         memref.alloc(%{{.*}}) : memref<?xindex>
func.func @index_elements(%n: index) -> memref<?xindex> {
  %a = memref.alloc(%n) : memref<?xindex>
  return %a : memref<?xindex>
}

// Static allocations and those of no bytes are left as they are.

// CHECK-LABEL: func.func @left_alone
// CHECK-NEXT:    memref.alloc() : memref<16x16xf32>
// CHECK-NEXT:    memref.alloc(%{{.*}}) : memref<?x0xf32>
// CHECK-NEXT:    return
func.func @left_alone(%n: index) -> (memref<16x16xf32>, memref<?x0xf32>) {
  %a = memref.alloc() : memref<16x16xf32>
  %b = memref.alloc(%n) : memref<?x0xf32>
  return %a, %b : memref<16x16xf32>, memref<?x0xf32>
}
