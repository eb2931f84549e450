// RUN: attn-opt %s --attn-lower-communication --split-input-file --allow-unregistered-dialect | FileCheck %s

// An exchange becomes MPI_Irecv and MPI_Isend calls of MPICH's ABI
// (MPI_FLOAT = 1275069450 = 0x4c00040a; MLIR 22 lowers no mpi.isend / irecv
// / wait), waited for at attn.exchange_wait; the bytes handed to MPI are
// counted in a module global read by attn_opt_bytes_sent (no peer, dest or
// source < 0, skips the call and counts nothing); an all-reduce counts its
// input. The communicator is the host's (attn_opt_communicator(), 0: the
// world).
// CHECK: memref.global "private" @attn_opt_bytes_sent_counter : memref<i64> = dense<0>
// CHECK-LABEL: func.func @attn_opt_bytes_sent() -> i64
// CHECK: memref.get_global @attn_opt_bytes_sent_counter
// CHECK-LABEL: func.func @ring(
// CHECK-SAME: %[[K:[^:]*]]: memref<1x2x?x8xf32>, %[[BUF:[^:]*]]: memref<1x2x?x8xf32>, %[[D:[^:]*]]: i32, %[[S:[^:]*]]: i32
// CHECK: %[[WORLD:.*]] = mpi.comm_world : !mpi.comm
// CHECK: %[[WORLDH:.*]] = builtin.unrealized_conversion_cast %[[WORLD]] : !mpi.comm to i64
// CHECK: %[[GIVEN:.*]] = call @attn_opt_communicator() : () -> i64
// CHECK: %[[UNSET:.*]] = arith.cmpi eq, %[[GIVEN]], %{{.*}} : i64
// CHECK: %[[H:.*]] = arith.select %[[UNSET]], %[[WORLDH]], %[[GIVEN]] : i64
// CHECK: %[[COMM:.*]] = builtin.unrealized_conversion_cast %[[H]] : i64 to !mpi.comm
// CHECK: %[[KF:.*]] = memref.collapse_shape %[[K]] {{\[\[}}0, 1, 2, 3]] : memref<1x2x?x8xf32> into memref<?xf32>
// CHECK: %[[BF:.*]] = memref.collapse_shape %[[BUF]]
// CHECK: %[[SENDS:.*]] = arith.cmpi sge, %[[D]], %{{.*}} : i32
// CHECK: %[[RECEIVES:.*]] = arith.cmpi sge, %[[S]], %{{.*}} : i32
// CHECK: %[[N:.*]] = memref.dim %[[KF]]
// CHECK: %[[BYTES:.*]] = arith.muli %{{.*}}, %c4_i64
// CHECK: %[[COUNT:.*]] = arith.select %[[SENDS]], %[[BYTES]]
// CHECK: %[[OLD:.*]] = memref.load
// CHECK: %[[NEW:.*]] = arith.addi %[[OLD]], %[[COUNT]]
// CHECK: memref.store %[[NEW]]
// CHECK: %[[REQS:.*]] = memref.alloc() : memref<2xi32>
// CHECK: scf.if %[[RECEIVES]] {
// CHECK: %[[RH:.*]] = builtin.unrealized_conversion_cast %[[COMM]] : !mpi.comm to i64
// CHECK: %[[RC:.*]] = arith.trunci %[[RH]] : i64 to i32
// CHECK: func.call @MPI_Irecv(%{{.*}}, %{{.*}}, %c1275069450_i32, %[[S]], %{{.*}}, %[[RC]], %{{.*}}) : (!llvm.ptr, i32, i32, i32, i32, i32, !llvm.ptr) -> i32
// CHECK: scf.if %[[SENDS]] {
// CHECK: func.call @MPI_Isend(%{{.*}}, %{{.*}}, %c1275069450_i32, %[[D]],
// CHECK: scf.if %[[RECEIVES]] {
// CHECK: func.call @MPI_Wait
// CHECK: scf.if %[[SENDS]] {
// CHECK: func.call @MPI_Wait
// CHECK: memref.dealloc %[[REQS]]
// CHECK-NOT: attn.exchange_wait
// CHECK: arith.muli %{{.*}}, %c8_i64
// CHECK: mpi.allreduce(%{{.*}}, %{{.*}}, MPI_SUM, %[[COMM]]) : memref<3xi64>, memref<3xi64>
// CHECK: func.func private @attn_opt_communicator() -> i64
func.func @ring(%k: memref<1x2x?x8xf32>, %buf: memref<1x2x?x8xf32>, %d: i32, %s: i32, %sizes: memref<3xi64>, %into: memref<3xi64>) {
  %c = mpi.comm_world : !mpi.comm
  %t = arith.constant 1 : i32
  %sr, %rr = attn.exchange %k into %buf to %d from %s tag %t comm %c : memref<1x2x?x8xf32>, memref<1x2x?x8xf32>
  attn.exchange_wait %buf sent %k requests %sr, %rr : memref<1x2x?x8xf32>, memref<1x2x?x8xf32>
  attn.allreduce %sizes into %into comm %c : memref<3xi64>, memref<3xi64>
  return
}

// -----

// A strided buffer (a slice of the block in hand) is sent from a contiguous
// copy, freed where the wait was; a strided receive buffer is received into
// a copy, copied out and freed there.
// CHECK-LABEL: func.func @strided(
// CHECK: %[[STAGE:.*]] = memref.alloc(%{{.*}}) : memref<1x2x?x8xf32>
// CHECK: memref.copy %{{.*}}, %[[STAGE]]
// CHECK: %[[IN:.*]] = memref.alloc(%{{.*}}) : memref<1x2x?x8xf32>
// CHECK: func.call @MPI_Isend
// CHECK: "test.use"
// CHECK: memref.copy %[[IN]], %{{.*}}
// CHECK-DAG: memref.dealloc %[[STAGE]]
// CHECK-DAG: memref.dealloc %[[IN]]
func.func @strided(%k: memref<1x2x?x8xf32, strided<[?, ?, 8, 1], offset: ?>>, %buf: memref<1x2x?x8xf32, strided<[?, ?, 8, 1], offset: ?>>, %d: i32, %s: i32) {
  %c = mpi.comm_world : !mpi.comm
  %t = arith.constant 2 : i32
  %sr, %rr = attn.exchange %k into %buf to %d from %s tag %t comm %c : memref<1x2x?x8xf32, strided<[?, ?, 8, 1], offset: ?>>, memref<1x2x?x8xf32, strided<[?, ?, 8, 1], offset: ?>>
  "test.use"() : () -> ()
  attn.exchange_wait %buf sent %k requests %sr, %rr : memref<1x2x?x8xf32, strided<[?, ?, 8, 1], offset: ?>>, memref<1x2x?x8xf32, strided<[?, ?, 8, 1], offset: ?>>
  return
}

// -----

// Open MPI's ABI (the module's dlti.map): handles are pointers, the
// predefined ones Open MPI's globals, requests 8 bytes.
// CHECK: llvm.mlir.global external @ompi_mpi_float() {addr_space = 0 : i32} : i8
// CHECK-LABEL: func.func @open_mpi(
// CHECK: memref.alloc() : memref<2xi64>
// CHECK: %[[F:.*]] = llvm.mlir.addressof @ompi_mpi_float : !llvm.ptr
// CHECK: %[[H:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !mpi.comm to i64
// CHECK: %[[C:.*]] = llvm.inttoptr %[[H]] : i64 to !llvm.ptr
// CHECK: func.call @MPI_Irecv(%{{.*}}, %{{.*}}, %[[F]], %{{.*}}, %{{.*}}, %[[C]], %{{.*}}) : (!llvm.ptr, i32, !llvm.ptr, i32, i32, !llvm.ptr, !llvm.ptr) -> i32
// CHECK: func.call @MPI_Isend
// CHECK: %[[NULL:.*]] = llvm.inttoptr %c0_i64{{.*}} : i64 to !llvm.ptr
// CHECK: func.call @MPI_Wait(%{{.*}}, %[[NULL]])
module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">} {
  func.func @open_mpi(%k: memref<1x2x?x8xf32>, %buf: memref<1x2x?x8xf32>, %d: i32, %s: i32) {
    %c = mpi.comm_world : !mpi.comm
    %t = arith.constant 1 : i32
    %sr, %rr = attn.exchange %k into %buf to %d from %s tag %t comm %c : memref<1x2x?x8xf32>, memref<1x2x?x8xf32>
    attn.exchange_wait %buf sent %k requests %sr, %rr : memref<1x2x?x8xf32>, memref<1x2x?x8xf32>
    return
  }
}
