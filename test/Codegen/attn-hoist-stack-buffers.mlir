// RUN: attn-opt %s --attn-hoist-stack-buffers | FileCheck %s

// A transfer's buffer inside loops of a parallel region moves to the start
// of the region (one per thread), allocated once instead of per iteration.
// CHECK-LABEL: func.func @in_parallel_loops
// CHECK: omp.parallel {
// CHECK-NEXT: %[[T:.*]] = memref.alloca() : memref<vector<4x8xf32>>
// CHECK: omp.wsloop
// CHECK: scf.for
// CHECK-NOT: memref.alloca
// CHECK: memref.store %{{.*}}, %[[T]][]
func.func @in_parallel_loops(%n: index, %v: vector<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        scf.for %j = %c0 to %n step %c1 {
          %t = memref.alloca() : memref<vector<4x8xf32>>
          memref.store %v, %t[] : memref<vector<4x8xf32>>
        }
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// In a function's loop: to the function's entry.
// CHECK-LABEL: func.func @in_loop
// CHECK-NEXT: memref.alloca() : memref<vector<4x8xf32>>
// CHECK: scf.for
func.func @in_loop(%n: index, %v: vector<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %j = %c0 to %n step %c1 {
    %t = memref.alloca() : memref<vector<4x8xf32>>
    memref.store %v, %t[] : memref<vector<4x8xf32>>
  }
  return
}

// Left alone: outside loops, inside an alloca scope (released per
// iteration), with dynamic sizes, or used outside its region.
// CHECK-LABEL: func.func @left_alone
// CHECK: memref.alloca() : memref<4xf32>
// CHECK: scf.for
// CHECK: memref.alloca_scope
// CHECK-NEXT: memref.alloca() : memref<8xf32>
// CHECK: memref.alloca(%{{.*}}) : memref<?xf32>
func.func @left_alone(%n: index, %x: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloca() : memref<4xf32>
  memref.store %x, %a[%c0] : memref<4xf32>
  scf.for %j = %c0 to %n step %c1 {
    memref.alloca_scope {
      %b = memref.alloca() : memref<8xf32>
      memref.store %x, %b[%c0] : memref<8xf32>
    }
    %d = memref.alloca(%n) : memref<?xf32>
    memref.store %x, %d[%c0] : memref<?xf32>
  }
  return
}
