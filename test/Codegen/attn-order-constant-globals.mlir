// RUN: attn-opt %s --split-input-file --attn-order-constant-globals | FileCheck %s

/// Globals numbered and listed against their first use (as bufferization
/// may leave them) are renamed and reordered by first use: functions in
/// module order, ops in block order, a nested region before what follows.
// CHECK-LABEL: module
// CHECK-NEXT: memref.global "private" constant @__constant_2xi32 : memref<2xi32> = dense<[1, 2]>
// CHECK-NEXT: memref.global "private" constant @__constant_2xf32 : memref<2xf32> = dense<[5.000000e-01, 2.500000e-01]>
// CHECK-NEXT: memref.global "private" constant @__constant_2xi32_0 : memref<2xi32> = dense<[3, 4]>
// CHECK-NEXT: memref.global "private" constant @__constant_2xi32_1 : memref<2xi32> = dense<[7, 8]>
// CHECK-NEXT: memref.global "private" @scratch
// CHECK-LABEL: func.func @first
// CHECK: memref.get_global @__constant_2xi32 :
// CHECK: scf.if
// CHECK: memref.get_global @__constant_2xf32 :
// CHECK: memref.get_global @__constant_2xi32_0 :
// CHECK-LABEL: func.func @second
// CHECK: memref.get_global @__constant_2xi32_1 :
// CHECK: memref.get_global @__constant_2xi32 :
// CHECK: memref.get_global @scratch
module {
  memref.global "private" @scratch : memref<2xi32> = uninitialized
  memref.global "private" constant @__constant_2xi32_1 : memref<2xi32> = dense<[3, 4]>
  memref.global "private" constant @__constant_2xi32 : memref<2xi32> = dense<[7, 8]>
  memref.global "private" constant @__constant_2xf32 : memref<2xf32> = dense<[0.5, 0.25]>
  memref.global "private" constant @__constant_2xi32_0 : memref<2xi32> = dense<[1, 2]>
  func.func @first(%c: i1) {
    %a = memref.get_global @__constant_2xi32_0 : memref<2xi32>
    scf.if %c {
      %b = memref.get_global @__constant_2xf32 : memref<2xf32>
    }
    %d = memref.get_global @__constant_2xi32_1 : memref<2xi32>
    return
  }
  func.func @second() {
    %e = memref.get_global @__constant_2xi32 : memref<2xi32>
    %f = memref.get_global @__constant_2xi32_0 : memref<2xi32>
    %g = memref.get_global @scratch : memref<2xi32>
    return
  }
}

// -----

/// An unused constant global follows the used ones; a name of the user's
/// that merely looks like bufferization's is renamed only if constant.
// CHECK-LABEL: module
// CHECK-NEXT: memref.global "private" constant @__constant_3xi8 : memref<3xi8> = dense<[4, 5, 6]>
// CHECK-NEXT: memref.global "private" constant @__constant_3xi8_0 : memref<3xi8> = dense<[1, 2, 3]>
// CHECK-NEXT: memref.global "private" @__constant_user
// CHECK: memref.get_global @__constant_3xi8 :
module {
  memref.global "private" constant @__constant_3xi8 : memref<3xi8> = dense<[1, 2, 3]>
  memref.global "private" @__constant_user : memref<3xi8> = uninitialized
  memref.global "private" constant @__constant_3xi8_0 : memref<3xi8> = dense<[4, 5, 6]>
  func.func @f() {
    %a = memref.get_global @__constant_3xi8_0 : memref<3xi8>
    %b = memref.get_global @__constant_user : memref<3xi8>
    return
  }
}
