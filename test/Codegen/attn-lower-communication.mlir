// RUN: attn-opt %s --attn-lower-communication --split-input-file --allow-unregistered-dialect | FileCheck %s

// An exchange becomes a blocking send and receive ordered by rank parity
// (MLIR 22 lowers no mpi.isend / irecv / wait); the bytes handed to MPI are
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
// CHECK: %[[RANK:.*]] = mpi.comm_rank
// CHECK: arith.remui %[[RANK]]
// CHECK: scf.if
// CHECK-NEXT: scf.if %[[SENDS]] {
// CHECK-NEXT: mpi.send(%[[KF]], %{{.*}}, %[[D]], %[[COMM]])
// CHECK-NEXT: }
// CHECK-NEXT: scf.if %[[RECEIVES]] {
// CHECK-NEXT: mpi.recv(%[[BF]], %{{.*}}, %[[S]], %{{.*}})
// CHECK: } else {
// CHECK-NEXT: scf.if %[[RECEIVES]] {
// CHECK-NEXT: mpi.recv(%[[BF]]
// CHECK: scf.if %[[SENDS]] {
// CHECK-NEXT: mpi.send(%[[KF]]
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
// CHECK: mpi.send
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
