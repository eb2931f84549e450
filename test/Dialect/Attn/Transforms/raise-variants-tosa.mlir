// RUN: attn-opt %s --pass-pipeline="builtin.module(func.func(tosa-to-linalg-named,tosa-to-linalg,tosa-to-arith,tosa-to-tensor),canonicalize,linalg-fuse-elementwise-ops,func.func(attn-raise),canonicalize)" --split-input-file --verify-diagnostics | FileCheck %s

// Pointwise and linear attention as TOSA graphs (tosa-to-linalg, then elementwise
// fusion, as attn-lower-to-llvm-pipeline runs them), raised by attn-raise.

// ReLU attention: tosa.clamp, the scale and 1/Lk as tosa.mul by constants.
// CHECK-LABEL: func.func @relu(
// CHECK-NOT:     linalg.
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.pointwise<relu>, scale = 1.250000e-01 : f32}
func.func @relu(%q: tensor<6x75x32xf32>, %k: tensor<6x75x32xf32>, %v: tensor<6x75x16xf32>) -> tensor<6x75x16xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x75x32xf32>) -> tensor<6x32x75xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x75xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x75xf32>
  %c = "tosa.const"() <{values = dense<0.125> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %ss = tosa.mul %s, %c, %shift : (tensor<6x75x75xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %r = tosa.clamp %ss {min_val = 0.0 : f32, max_val = 3.4028235e38 : f32} : (tensor<6x75x75xf32>) -> tensor<6x75x75xf32>
  %f = "tosa.const"() <{values = dense<0.0133333337> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %p = tosa.mul %r, %f, %shift : (tensor<6x75x75xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  // expected-remark @below {{raised attention: relu times Lk^-alpha, scale 0.125, K transposed, [B*H, L, D] operands}}
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x75x75xf32>, tensor<6x75x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x16xf32>
  return %o : tensor<6x75x16xf32>
}

// -----

// relu2: the clamp times itself.
// CHECK-LABEL: func.func @relu2(
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.pointwise<relu2, alpha = 0.0e+00>, scale = 1.000000e+00 : f32}
func.func @relu2(%q: tensor<6x75x32xf32>, %k: tensor<6x75x32xf32>, %v: tensor<6x75x16xf32>) -> tensor<6x75x16xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x75x32xf32>) -> tensor<6x32x75xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x75xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x75xf32>
  %r = tosa.clamp %s {min_val = 0.0 : f32, max_val = 3.4028235e38 : f32} : (tensor<6x75x75xf32>) -> tensor<6x75x75xf32>
  %p = tosa.mul %r, %r, %shift : (tensor<6x75x75xf32>, tensor<6x75x75xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  // expected-remark @below {{raised attention: relu2, scale 1, K transposed, [B*H, L, D] operands}}
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x75x75xf32>, tensor<6x75x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x16xf32>
  return %o : tensor<6x75x16xf32>
}

// -----

// relu6: tosa.clamp to [0, 6].
// CHECK-LABEL: func.func @relu6(
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.pointwise<relu6, alpha = 0.0e+00>, scale = 1.000000e+00 : f32}
func.func @relu6(%q: tensor<6x75x32xf32>, %k: tensor<6x75x32xf32>, %v: tensor<6x75x16xf32>) -> tensor<6x75x16xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x75x32xf32>) -> tensor<6x32x75xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x75xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x75xf32>
  %p = tosa.clamp %s {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<6x75x75xf32>) -> tensor<6x75x75xf32>
  // expected-remark @below {{raised attention: relu6, scale 1, K transposed, [B*H, L, D] operands}}
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x75x75xf32>, tensor<6x75x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x16xf32>
  return %o : tensor<6x75x16xf32>
}

// -----

// sigmoid attention, 1/sqrt(D) scale.
// CHECK-LABEL: func.func @sigmoid(
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.pointwise<sigmoid, alpha = 0.0e+00>, scale = 0.176776{{[0-9]+}} : f32}
func.func @sigmoid(%q: tensor<6x75x32xf32>, %k: tensor<6x75x32xf32>, %v: tensor<6x75x16xf32>) -> tensor<6x75x16xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x75x32xf32>) -> tensor<6x32x75xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x75xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x75xf32>
  %c = "tosa.const"() <{values = dense<0.176776692> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %ss = tosa.mul %s, %c, %shift : (tensor<6x75x75xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %p = tosa.sigmoid %ss : (tensor<6x75x75xf32>) -> tensor<6x75x75xf32>
  // expected-remark @below {{raised attention: sigmoid, scale 0.176777, K transposed, [B*H, L, D] operands}}
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x75x75xf32>, tensor<6x75x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x16xf32>
  return %o : tensor<6x75x16xf32>
}

// -----

// Exact GELU from tosa.erf, times 1/sqrt(Lk).
// CHECK-LABEL: func.func @gelu(
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.pointwise<gelu, alpha = 5.0e-01>, scale = 1.000000e+00 : f32}
func.func @gelu(%q: tensor<6x75x32xf32>, %k: tensor<6x75x32xf32>, %v: tensor<6x75x16xf32>) -> tensor<6x75x16xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x75x32xf32>) -> tensor<6x32x75xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x75xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x75xf32>
  %h = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %r2 = "tosa.const"() <{values = dense<0.707106769> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %one = "tosa.const"() <{values = dense<1.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %x1 = tosa.mul %s, %r2, %shift : (tensor<6x75x75xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %e = tosa.erf %x1 : (tensor<6x75x75xf32>) -> tensor<6x75x75xf32>
  %e1 = tosa.add %e, %one : (tensor<6x75x75xf32>, tensor<1x1x1xf32>) -> tensor<6x75x75xf32>
  %hx = tosa.mul %s, %h, %shift : (tensor<6x75x75xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %g = tosa.mul %hx, %e1, %shift : (tensor<6x75x75xf32>, tensor<6x75x75xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %f = "tosa.const"() <{values = dense<0.115470052> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %p = tosa.mul %g, %f, %shift : (tensor<6x75x75xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  // expected-remark @below {{raised attention: gelu times Lk^-alpha, scale 1, K transposed, [B*H, L, D] operands}}
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x75x75xf32>, tensor<6x75x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x16xf32>
  return %o : tensor<6x75x16xf32>
}

// -----

// GELU, tanh approximation, from tosa.tanh.
// CHECK-LABEL: func.func @gelu_tanh(
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.pointwise<gelu_tanh, alpha = 0.0e+00>, scale = 1.000000e+00 : f32}
func.func @gelu_tanh(%q: tensor<6x75x32xf32>, %k: tensor<6x75x32xf32>, %v: tensor<6x75x16xf32>) -> tensor<6x75x16xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x75x32xf32>) -> tensor<6x32x75xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x75xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x75xf32>
  %h = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %c = "tosa.const"() <{values = dense<0.797884583> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %a = "tosa.const"() <{values = dense<0.044715> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %one = "tosa.const"() <{values = dense<1.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %x2 = tosa.mul %s, %s, %shift : (tensor<6x75x75xf32>, tensor<6x75x75xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %x3 = tosa.mul %x2, %s, %shift : (tensor<6x75x75xf32>, tensor<6x75x75xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %ax3 = tosa.mul %x3, %a, %shift : (tensor<6x75x75xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %in = tosa.add %s, %ax3 : (tensor<6x75x75xf32>, tensor<6x75x75xf32>) -> tensor<6x75x75xf32>
  %u = tosa.mul %in, %c, %shift : (tensor<6x75x75xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %t = tosa.tanh %u : (tensor<6x75x75xf32>) -> tensor<6x75x75xf32>
  %t1 = tosa.add %t, %one : (tensor<6x75x75xf32>, tensor<1x1x1xf32>) -> tensor<6x75x75xf32>
  %hx = tosa.mul %s, %h, %shift : (tensor<6x75x75xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  %p = tosa.mul %hx, %t1, %shift : (tensor<6x75x75xf32>, tensor<6x75x75xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  // expected-remark @below {{raised attention: gelu_tanh, scale 1, K transposed, [B*H, L, D] operands}}
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x75x75xf32>, tensor<6x75x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x16xf32>
  return %o : tensor<6x75x16xf32>
}

// -----

// softplus: log(exp(s) + 1).
// CHECK-LABEL: func.func @softplus(
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.pointwise<softplus, alpha = 0.0e+00>, scale = 1.000000e+00 : f32}
func.func @softplus(%q: tensor<6x75x32xf32>, %k: tensor<6x75x32xf32>, %v: tensor<6x75x16xf32>) -> tensor<6x75x16xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x75x32xf32>) -> tensor<6x32x75xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x75xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x75xf32>
  %one = "tosa.const"() <{values = dense<1.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %e = tosa.exp %s : (tensor<6x75x75xf32>) -> tensor<6x75x75xf32>
  %e1 = tosa.add %e, %one : (tensor<6x75x75xf32>, tensor<1x1x1xf32>) -> tensor<6x75x75xf32>
  %p = tosa.log %e1 : (tensor<6x75x75xf32>) -> tensor<6x75x75xf32>
  // expected-remark @below {{raised attention: softplus, scale 1, K transposed, [B*H, L, D] operands}}
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x75x75xf32>, tensor<6x75x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x16xf32>
  return %o : tensor<6x75x16xf32>
}

// -----

// Identity: the scores times 1/Lk (for identity, a factor is a scale).
// CHECK-LABEL: func.func @identity(
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.pointwise<identity, alpha = 0.0e+00>, scale = 0.0133333337 : f32}
func.func @identity(%q: tensor<6x75x32xf32>, %k: tensor<6x75x32xf32>, %v: tensor<6x75x16xf32>) -> tensor<6x75x16xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x75x32xf32>) -> tensor<6x32x75xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x75xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x75xf32>
  %c = "tosa.const"() <{values = dense<0.0133333337> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %p = tosa.mul %s, %c, %shift : (tensor<6x75x75xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<6x75x75xf32>
  // expected-remark @below {{raised attention: identity, scale 0.0133333, K transposed, [B*H, L, D] operands}}
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x75x75xf32>, tensor<6x75x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x16xf32>
  return %o : tensor<6x75x16xf32>
}

// -----

// relu with a boolean mask tensor (tosa.select with 0) on the weights; fusion
// puts the clamp into the select.
// CHECK-LABEL: func.func @relu_masked(
// CHECK:         attn.attention %{{.+}} mask(%{{.+}} : tensor<1x1x75x75xi1>) {normalizer = #attn.pointwise<relu, alpha = 0.0e+00>, scale = 1.000000e+00 : f32}
func.func @relu_masked(%q: tensor<6x75x32xf32>, %k: tensor<6x75x32xf32>, %v: tensor<6x75x16xf32>, %m: tensor<1x75x75xi1>) -> tensor<6x75x16xf32> {
  %kt = tosa.transpose %k {perms = array<i32: 0, 2, 1>} : (tensor<6x75x32xf32>) -> tensor<6x32x75xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s = tosa.matmul %q, %kt, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x75xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x75xf32>
  %r = tosa.clamp %s {min_val = 0.0 : f32, max_val = 3.4028235e38 : f32} : (tensor<6x75x75xf32>) -> tensor<6x75x75xf32>
  %z = "tosa.const"() <{values = dense<0.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %p = tosa.select %m, %r, %z : (tensor<1x75x75xi1>, tensor<6x75x75xf32>, tensor<1x1x1xf32>) -> tensor<6x75x75xf32>
  // expected-remark @below {{raised attention: relu, masked after h, boolean mask tensor, scale 1, K transposed, [B*H, L, D] operands}}
  %o = tosa.matmul %p, %v, %zp, %zp : (tensor<6x75x75xf32>, tensor<6x75x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x16xf32>
  return %o : tensor<6x75x16xf32>
}

// -----

// Linear attention, quadratic order: elu + 1 features (tosa.greater / add / exp /
// select), (A V) times the reciprocal of rowsum(A) + eps.
// CHECK-LABEL: func.func @linear_quadratic(
// CHECK-NOT:     tosa.
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.kernel<elu_plus_one, eps = 9.99999997{{[0-9]+}}e-07>}
func.func @linear_quadratic(%q: tensor<6x75x32xf32>, %k: tensor<6x75x32xf32>, %v: tensor<6x75x16xf32>) -> tensor<6x75x16xf32> {
  %zc = "tosa.const"() <{values = dense<0.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %onec = "tosa.const"() <{values = dense<1.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %fq_pos = tosa.greater %q, %zc : (tensor<6x75x32xf32>, tensor<1x1x1xf32>) -> tensor<6x75x32xi1>
  %fq_a = tosa.add %q, %onec : (tensor<6x75x32xf32>, tensor<1x1x1xf32>) -> tensor<6x75x32xf32>
  %fq_e = tosa.exp %q : (tensor<6x75x32xf32>) -> tensor<6x75x32xf32>
  %fq = tosa.select %fq_pos, %fq_a, %fq_e : (tensor<6x75x32xi1>, tensor<6x75x32xf32>, tensor<6x75x32xf32>) -> tensor<6x75x32xf32>
  %fk_pos = tosa.greater %k, %zc : (tensor<6x75x32xf32>, tensor<1x1x1xf32>) -> tensor<6x75x32xi1>
  %fk_a = tosa.add %k, %onec : (tensor<6x75x32xf32>, tensor<1x1x1xf32>) -> tensor<6x75x32xf32>
  %fk_e = tosa.exp %k : (tensor<6x75x32xf32>) -> tensor<6x75x32xf32>
  %fk = tosa.select %fk_pos, %fk_a, %fk_e : (tensor<6x75x32xi1>, tensor<6x75x32xf32>, tensor<6x75x32xf32>) -> tensor<6x75x32xf32>
  %kt = tosa.transpose %fk {perms = array<i32: 0, 2, 1>} : (tensor<6x75x32xf32>) -> tensor<6x32x75xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %a = tosa.matmul %fq, %kt, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x75xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x75xf32>
  %num = tosa.matmul %a, %v, %zp, %zp : (tensor<6x75x75xf32>, tensor<6x75x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x16xf32>
  %den = tosa.reduce_sum %a {axis = 2 : i32} : (tensor<6x75x75xf32>) -> tensor<6x75x1xf32>
  %eps = "tosa.const"() <{values = dense<1.0e-06> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %de = tosa.add %den, %eps : (tensor<6x75x1xf32>, tensor<1x1x1xf32>) -> tensor<6x75x1xf32>
  %r = tosa.reciprocal %de : (tensor<6x75x1xf32>) -> tensor<6x75x1xf32>
  // expected-remark @below {{raised attention: linear attention (elu + 1 features) in quadratic form, normalized after the V product, eps 1e-06, [B*H, L, D] operands}}
  %o = tosa.mul %num, %r, %shift : (tensor<6x75x16xf32>, tensor<6x75x1xf32>, tensor<1xi8>) -> tensor<6x75x16xf32>
  return %o : tensor<6x75x16xf32>
}

// -----

// Linear attention in linear order: phi(K)^T V first (tosa.maximum features),
// the denominator phi(Q) times the column sum_k phi(K) (a [B, D, 1] matmul).
// CHECK-LABEL: func.func @linear_order(
// CHECK-NOT:     tosa.
// CHECK-NOT:     linalg.batch_matmul
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.kernel<relu>}
func.func @linear_order(%q: tensor<6x75x32xf32>, %k: tensor<6x75x32xf32>, %v: tensor<6x75x16xf32>) -> tensor<6x75x16xf32> {
  %zc = "tosa.const"() <{values = dense<0.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %fq = tosa.maximum %q, %zc : (tensor<6x75x32xf32>, tensor<1x1x1xf32>) -> tensor<6x75x32xf32>
  %fk = tosa.maximum %k, %zc : (tensor<6x75x32xf32>, tensor<1x1x1xf32>) -> tensor<6x75x32xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %fkt = tosa.transpose %fk {perms = array<i32: 0, 2, 1>} : (tensor<6x75x32xf32>) -> tensor<6x32x75xf32>
  %kv = tosa.matmul %fkt, %v, %zp, %zp : (tensor<6x32x75xf32>, tensor<6x75x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x32x16xf32>
  %num = tosa.matmul %fq, %kv, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x16xf32>
  %z = tosa.reduce_sum %fkt {axis = 2 : i32} : (tensor<6x32x75xf32>) -> tensor<6x32x1xf32>
  %den = tosa.matmul %fq, %z, %zp, %zp : (tensor<6x75x32xf32>, tensor<6x32x1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<6x75x1xf32>
  %r = tosa.reciprocal %den : (tensor<6x75x1xf32>) -> tensor<6x75x1xf32>
  // expected-remark @below {{raised attention: linear attention (relu features) in linear order, [B*H, L, D] operands}}
  %o = tosa.mul %num, %r, %shift : (tensor<6x75x16xf32>, tensor<6x75x1xf32>, tensor<1xi8>) -> tensor<6x75x16xf32>
  return %o : tensor<6x75x16xf32>
}
