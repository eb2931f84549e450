// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),canonicalize,linalg-fuse-elementwise-ops,func.func(attn-raise),canonicalize)" --verify-diagnostics | FileCheck %s

// The softmax TOSA legalizations emit (keep-dim reductions, a reciprocal
// times the numerator), after tosa-to-linalg and elementwise fusion.
// CHECK-LABEL: func.func @tosa_attention(
// CHECK-NOT:     linalg.
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {normalizer = #attn.softmax, scale = 1.250000e-01 : f32} : tensor<6x1x75x32xf32>
// CHECK-NOT:     linalg.
func.func @tosa_attention(%q: tensor<6x75x32xf32>, %k: tensor<6x75x32xf32>, %v: tensor<6x75x32xf32>) -> tensor<6x75x32xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x75x32xf32>) -> tensor<6x32x75xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x75xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x75xf32>
  %c = "tosa.const"() <{values = dense<0.125> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %ss = tosa.mul %s, %c, %shift : (tensor<6x75x75xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %m = tosa.reduce_max %ss {axis = 2 : i32} : (tensor<6x75x75xf32>) -> tensor<6x75x1xf32>
  %d = tosa.sub %ss, %m : (tensor<6x75x75xf32>, tensor<6x75x1xf32>) -> tensor<6x75x75xf32>
  %e = tosa.exp %d : (tensor<6x75x75xf32>) -> tensor<6x75x75xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<6x75x75xf32>) -> tensor<6x75x1xf32>
  %r = tosa.reciprocal %sum : (tensor<6x75x1xf32>) -> tensor<6x75x1xf32>
  %p = tosa.mul %e, %r, %shift : (tensor<6x75x75xf32>, tensor<6x75x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  // expected-remark @below {{raised attention: softmax decomposed into max, exp, sum, div, scale 0.125, K transposed, [B*H, L, D] operands}}
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x75x75xf32>, tensor<6x75x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x32xf32>
  return %o : tensor<6x75x32xf32>
}
