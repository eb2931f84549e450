// RUN: attn-opt %s -split-input-file -attn-check-allocations -verify-diagnostics | FileCheck %s
// RUN: attn-opt %s -split-input-file -attn-check-allocations=release-on-error -verify-diagnostics | FileCheck %s --check-prefix=RELEASE

// At the top level: a NULL result for a non-zero size reports OutOfMemory
// (code 11) with the size and returns; the rest runs on success only.

// CHECK-LABEL: llvm.func @top_level
// CHECK:         %[[P:.*]] = llvm.call @malloc(%[[SIZE:.*]]) : (i64) -> !llvm.ptr
// CHECK:         %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK:         %[[ISNULL:.*]] = llvm.icmp "eq" %[[P]], %[[NULL]] : !llvm.ptr
// CHECK:         %[[SIZED:.*]] = llvm.icmp "ne" %[[SIZE]], %{{.*}} : i64
// CHECK:         %[[FAILED:.*]] = llvm.and %[[ISNULL]], %[[SIZED]] : i1
// CHECK:         llvm.cond_br %[[FAILED]] weights([1, 1048575]), ^[[OOM:.*]], ^[[OK:.*]]
// CHECK:       ^[[OOM]]:
// CHECK:         %[[CODE:.*]] = llvm.mlir.constant(11 : i32) : i32
// CHECK:         llvm.call @attn_opt_runtime_error(%[[CODE]], %[[SIZE]], %{{.*}}, %{{.*}})
// CHECK:         llvm.br ^[[EXIT:.*]]
// CHECK:       ^[[OK]]:
// CHECK:         llvm.store
// CHECK:         llvm.call @free(%[[P]])
// CHECK:         llvm.return
// CHECK:       ^[[EXIT]]:
// CHECK-NEXT:    llvm.return
// With release-on-error, a mark on entry; the exit frees what was
// allocated since.
// RELEASE-LABEL: llvm.func @top_level
// RELEASE:         %[[MARK:.*]] = llvm.call @__attn_rt_mark() : () -> i64
// RELEASE:         llvm.call @malloc
// RELEASE:         llvm.call @attn_opt_runtime_error
// RELEASE:         llvm.br ^[[EXIT:.*]]
// RELEASE:       ^[[EXIT]]:
// RELEASE-NEXT:    llvm.call @__attn_rt_release(%[[MARK]]) : (i64) -> ()
// RELEASE-NEXT:    llvm.return
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @top_level(%size: i64, %x: f32) {
  %p = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  llvm.store %x, %p : f32, !llvm.ptr
  llvm.call @free(%p) : (!llvm.ptr) -> ()
  llvm.return
}

// -----

// A function with a result returns zeros after the error; aligned_alloc's
// size is its second operand.

// CHECK-LABEL: llvm.func @with_result
// CHECK:         %[[P:.*]] = llvm.call @aligned_alloc(%{{.*}}, %[[SIZE:.*]]) : (i64, i64) -> !llvm.ptr
// CHECK:         llvm.icmp "ne" %[[SIZE]]
// CHECK:         llvm.call @attn_opt_runtime_error(%{{.*}}, %[[SIZE]], %{{.*}}, %{{.*}})
// CHECK:         %[[Z:.*]] = llvm.mlir.zero : !llvm.struct<(ptr, ptr, i64)>
// CHECK-NEXT:    llvm.return %[[Z]] : !llvm.struct<(ptr, ptr, i64)>
llvm.func @aligned_alloc(i64, i64) -> !llvm.ptr
llvm.func @with_result(%size: i64) -> !llvm.struct<(ptr, ptr, i64)> {
  %a = llvm.mlir.constant(64 : i64) : i64
  %p = llvm.call @aligned_alloc(%a, %size) : (i64, i64) -> !llvm.ptr
  %u = llvm.mlir.undef : !llvm.struct<(ptr, ptr, i64)>
  %d0 = llvm.insertvalue %p, %u[0] : !llvm.struct<(ptr, ptr, i64)>
  %d1 = llvm.insertvalue %p, %d0[1] : !llvm.struct<(ptr, ptr, i64)>
  %d2 = llvm.insertvalue %size, %d1[2] : !llvm.struct<(ptr, ptr, i64)>
  llvm.return %d2 : !llvm.struct<(ptr, ptr, i64)>
}

// -----

// In a parallel iteration: the size goes into the function's flag, the
// iteration ends; after the omp.parallel the calling thread reads the flag,
// reports and returns.

// CHECK-LABEL: llvm.func @in_parallel
// CHECK:         %[[FLAG:.*]] = llvm.alloca %{{.*}} x i64 {alignment = 8 : i64}
// CHECK:         llvm.store %{{.*}}, %[[FLAG]] : i64, !llvm.ptr
// CHECK:         omp.parallel
// CHECK:           omp.loop_nest
// CHECK:             %[[P:.*]] = llvm.call @malloc(%[[SIZE:.*]]) : (i64) -> !llvm.ptr
// CHECK:             llvm.cond_br %{{.*}} weights([1, 1048575]), ^[[OOM:.*]], ^[[OK:.*]]
// CHECK:           ^[[OOM]]:
// CHECK-NEXT:        llvm.store %[[SIZE]], %[[FLAG]] atomic monotonic {alignment = 8 : i64}
// CHECK-NEXT:        omp.yield
// CHECK:           ^[[OK]]:
// CHECK:             llvm.call @free(%[[P]])
// CHECK-NEXT:        omp.yield
// CHECK:         %[[SEEN:.*]] = llvm.load %[[FLAG]] atomic monotonic {alignment = 8 : i64} : !llvm.ptr -> i64
// CHECK:         %[[ANY:.*]] = llvm.icmp "ne" %[[SEEN]], %{{.*}} : i64
// CHECK:         llvm.cond_br %[[ANY]] weights([1, 1048575]), ^[[REPORT:.*]], ^[[ON:.*]]
// CHECK:       ^[[REPORT]]:
// CHECK:         llvm.call @attn_opt_runtime_error(%{{.*}}, %[[SEEN]], %{{.*}}, %{{.*}})
// CHECK:         llvm.br ^[[EXIT:.*]]
// CHECK:       ^[[ON]]:
// CHECK-NEXT:    llvm.return
// CHECK:       ^[[EXIT]]:
// CHECK-NEXT:    llvm.return
// RELEASE-LABEL: llvm.func @in_parallel
// RELEASE:           omp.loop_nest
// RELEASE-NEXT:        %[[IMARK:.*]] = llvm.call @__attn_rt_mark() : () -> i64
// RELEASE:             llvm.cond_br %{{.*}} weights([1, 1048575]), ^[[OOM:.*]], ^
// RELEASE:           ^[[OOM]]:
// RELEASE-NEXT:        llvm.call @__attn_rt_release(%[[IMARK]]) : (i64) -> ()
// RELEASE-NEXT:        llvm.store
// RELEASE-NEXT:        omp.yield
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @in_parallel(%n: i64, %size: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : i64 = (%c0) to (%n) step (%c1) {
        %p = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
        llvm.call @free(%p) : (!llvm.ptr) -> ()
        omp.yield
      }
    }
    omp.terminator
  }
  llvm.return
}

// -----

// A call of a function that checks allocations asks whether the running
// call failed, and returns if so. A function that allocates nothing is left
// alone.

// CHECK-LABEL: llvm.func @nothing
// CHECK-NOT:     attn_opt_runtime
// CHECK:         llvm.return
// CHECK-LABEL: llvm.func @caller
// CHECK:         llvm.call @nothing()
// CHECK-NEXT:    llvm.call @helper(%{{.*}})
// CHECK-NEXT:    %[[S:.*]] = llvm.call @attn_opt_runtime_failed() : () -> i32
// CHECK:         %[[F:.*]] = llvm.icmp "ne" %[[S]], %{{.*}} : i32
// CHECK:         llvm.cond_br %[[F]] weights([1, 1048575]), ^[[E:.*]], ^[[ON:.*]]
// CHECK:       ^[[E]]:
// CHECK-NEXT:    llvm.br ^[[EXIT:.*]]
// CHECK:       ^[[ON]]:
// CHECK-NEXT:    llvm.return
llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @helper(%size: i64) {
  %p = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  llvm.call @free(%p) : (!llvm.ptr) -> ()
  llvm.return
}
llvm.func @nothing() {
  llvm.return
}
llvm.func @caller(%size: i64) {
  llvm.call @nothing() : () -> ()
  llvm.call @helper(%size) : (i64) -> ()
  llvm.return
}

// -----

// What the pipelines do not emit is an error, not an unchecked allocation.

llvm.func @malloc(i64) -> !llvm.ptr
llvm.func @free(!llvm.ptr)
llvm.func @in_parallel_region(%size: i64) {
  omp.parallel {
    // expected-error @below {{attn-check-allocations: cannot check an allocation inside omp.parallel}}
    %p = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
    llvm.call @free(%p) : (!llvm.ptr) -> ()
    omp.terminator
  }
  llvm.return
}

// -----

// The NVVM pipeline's host code: gpu.alloc's mgpuMemAlloc(size, stream,
// host_shared) returns NULL when the device has no room; the kernel is not
// launched on it.

// CHECK-LABEL: llvm.func @device
// CHECK:         %[[P:.*]] = llvm.call @mgpuMemAlloc(%[[SIZE:.*]], %{{.*}}, %{{.*}}) : (i64, !llvm.ptr, i8) -> !llvm.ptr
// CHECK:         %[[ISNULL:.*]] = llvm.icmp "eq" %[[P]], %{{.*}} : !llvm.ptr
// CHECK:         %[[SIZED:.*]] = llvm.icmp "ne" %[[SIZE]], %{{.*}} : i64
// CHECK:         %[[FAILED:.*]] = llvm.and %[[ISNULL]], %[[SIZED]] : i1
// CHECK:         llvm.cond_br %[[FAILED]] weights([1, 1048575]), ^[[OOM:.*]], ^[[OK:.*]]
// CHECK:       ^[[OOM]]:
// CHECK:         llvm.call @attn_opt_runtime_error(%{{.*}}, %[[SIZE]], %{{.*}}, %{{.*}})
// CHECK:       ^[[OK]]:
// CHECK:         llvm.call @launch(%[[P]])
llvm.func @mgpuMemAlloc(i64, !llvm.ptr, i8) -> !llvm.ptr
llvm.func @mgpuMemFree(!llvm.ptr, !llvm.ptr)
llvm.func @launch(!llvm.ptr)
llvm.func @device(%size: i64, %stream: !llvm.ptr) {
  %shared = llvm.mlir.constant(1 : i8) : i8
  %p = llvm.call @mgpuMemAlloc(%size, %stream, %shared) : (i64, !llvm.ptr, i8) -> !llvm.ptr
  llvm.call @launch(%p) : (!llvm.ptr) -> ()
  llvm.call @mgpuMemFree(%p, %stream) : (!llvm.ptr, !llvm.ptr) -> ()
  llvm.return
}
