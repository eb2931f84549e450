// RUN: attn-opt %s --attn-export-entries --split-input-file --verify-diagnostics | FileCheck %s

// A dynamic function: sizes checked (dynamic not negative, static equal),
// the body under the checks, the result's dynamic sizes checked against the
// buffer, then written into it.
// CHECK-LABEL: func.func private @attn_opt_runtime_error(i32, i64, i64, i64)
// CHECK-LABEL: func.func @causal__entry(
// CHECK-SAME:    %[[Q:[^:]+]]: memref<?x?x?x?xf32>, %{{[^:]+}}: memref<?x?x?x?xf32>, %{{[^:]+}}: memref<?x?x?x?xf32>, %[[OUT:[^:]+]]: memref<?x?x?x?xf32>)
// CHECK-SAME:    attributes {attn.entry = "causal", llvm.emit_c_interface}
// CHECK:       %[[D0:.+]] = memref.dim %[[Q]], %c0
// CHECK:       arith.cmpi slt, %[[D0]], %c0
// CHECK:       func.call @attn_opt_runtime_error(%c7_i32, %c0_i64
// CHECK:       %[[D1:.+]] = memref.dim %[[Q]], %c1
// CHECK:       arith.cmpi ne, %[[D1]], %c4
// CHECK:       func.call @attn_opt_runtime_error(%c7_i32, %c1_i64
// The result buffer's static sizes (code 8, ResultSize), then its dynamic
// sizes against the query's, which the IR says they equal
// (ReifyRankedShapedTypeOpInterface): checked before computing.
// CHECK:       memref.dim %[[OUT]], %c3
// CHECK:       func.call @attn_opt_runtime_error(%c8_i32, %c3_i64
// CHECK:       %[[BD:.+]] = memref.dim %[[OUT]], %c0
// CHECK:       %[[QD:.+]] = memref.dim %[[Q]], %c0
// CHECK:       arith.cmpi ne, %[[BD]], %[[QD]]
// CHECK:       func.call @attn_opt_runtime_error(%c8_i32, %c0_i64
// CHECK:       memref.dim %[[OUT]], %c2
// CHECK:       memref.dim %[[Q]], %c2
// CHECK:       func.call @attn_opt_runtime_error(%c8_i32, %c2_i64
// CHECK:       scf.if %{{.+}} {
// CHECK-NEXT:    %[[QC:.+]] = memref.cast %[[Q]] : memref<?x?x?x?xf32> to memref<?x4x?x16xf32>
// CHECK-NEXT:    %[[QT:.+]] = bufferization.to_tensor %[[QC]] restrict : memref<?x4x?x16xf32> to tensor<?x4x?x16xf32>
// CHECK:         %[[R:.+]] = attn.attention %[[QT]]
// CHECK-NOT:     tensor.dim
// CHECK-NEXT:    %[[OC:.+]] = memref.cast %[[OUT]] : memref<?x?x?x?xf32> to memref<?x4x?x16xf32>
// CHECK-NEXT:    bufferization.materialize_in_destination %[[R]] in restrict writable %[[OC]]
// CHECK:       return
// CHECK-LABEL: func.func private @causal(
func.func @causal(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x16xf32>
  return %0 : tensor<?x4x?x16xf32>
}

// -----

// Private functions and declarations are not exported.
// CHECK-LABEL: func.func private @helper(
// CHECK-NOT: @helper__entry
// CHECK-LABEL: func.func @static__entry(
// CHECK-SAME: %{{[^:]+}}: memref<?x?xf32>, %{{[^:]+}}: memref<?x?xf32>)
func.func private @helper(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  return %x : tensor<2x3xf32>
}
func.func @static(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = func.call @helper(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A result size the IR does not tie to an argument is checked after
// computing, and the result written only when it fits.
// CHECK-LABEL: func.func @untied__entry(
// CHECK:       scf.if
// CHECK:         %[[E:.+]] = tensor.empty(%{{.+}}) : tensor<?xf32>
// CHECK:         %[[D:.+]] = tensor.dim %[[E]], %c0
// CHECK:         arith.cmpi ne, %{{.+}}, %[[D]]
// CHECK:         func.call @attn_opt_runtime_error(%c8_i32
// CHECK:         scf.if
// CHECK-NEXT:      memref.cast
// CHECK-NEXT:      bufferization.materialize_in_destination %[[E]]
func.func @untied(%n: tensor<3xi64>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %v = tensor.extract %n[%c0] : tensor<3xi64>
  %i = arith.index_cast %v : i64 to index
  %0 = tensor.empty(%i) : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

// expected-error @below {{'func.func' op argument 0 has type 'i32'; a kernel library's entries take ranked tensors of f16, bf16, f32, f64, i1, i8, i16, i32 or i64}}
func.func @scalar(%x: i32) -> i32 {
  return %x : i32
}

// -----

// expected-error @below {{'func.func' op result 0 has type 'tensor<*xf32>'}}
func.func @unranked(%x: tensor<4xf32>) -> tensor<*xf32> {
  %0 = tensor.cast %x : tensor<4xf32> to tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// expected-error @below {{argument 0 has type 'tensor<4xcomplex<f32>>'}}
func.func @complex(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  return %x : tensor<4xcomplex<f32>>
}
