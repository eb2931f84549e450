// RUN: attn-opt %s --split-input-file --attn-raise --verify-diagnostics | FileCheck %s

// Pointwise attention written as linalg: O = c * h(a * Q K^T) V for every h
// of #attn.pointwise, spelled as front ends write it (one fused generic or
// several ops; the factor c = Lk^-alpha as a constant, a division, or
// computed from the key shape), with masks before h (-inf) or after it (0),
// grouped heads and a gate. attn-raise evaluates the elementwise chain and
// fits h, a and c (docs/Raising.md).

// relu2 in one fused generic; Lk^-1/2 computed from the shape of K.
// CHECK-LABEL: func.func @relu2_fused(
// CHECK-SAME:    %[[Q:.+]]: tensor<1x2x33x16xf32>, %[[K:.+]]: tensor<1x2x33x16xf32>, %[[V:.+]]: tensor<1x2x33x8xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         attn.attention %[[Q]], %[[K]], %[[V]] {normalizer = #attn.pointwise<relu2, alpha = 5.0e-01>, scale = 2.500000e-01 : f32}
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @relu2_fused(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %c2 = arith.constant 2 : index
  %lk = tensor.dim %k, %c2 : tensor<1x2x33x16xf32>
  %lki = arith.index_cast %lk : index to i64
  %lkf = arith.sitofp %lki : i64 to f32
  %mhalf = arith.constant -0.5 : f32
  %f = math.powf %lkf, %mhalf : f32
  %quarter = arith.constant 0.25 : f32
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %xs = arith.mulf %x, %quarter : f32
    %r = arith.maximumf %xs, %zero : f32
    %r2 = arith.mulf %r, %r : f32
    %y = arith.mulf %r2, %f : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{raised attention: relu2 times Lk^-alpha, scale 0.25}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// Exact GELU, unfused: s / 4, 0.5 x (1 + erf(x / sqrt 2)), then / Lk.
// CHECK-LABEL: func.func @gelu_erf(
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.pointwise<gelu>, scale = 2.500000e-01 : f32}
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @gelu_erf(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %four = arith.constant 4.0 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.707106769 : f32
  %lk = arith.constant 33.0 : f32
  %ss = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.divf %x, %four : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%ss : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %h = arith.mulf %x, %half : f32
    %t = arith.mulf %x, %rsqrt2 : f32
    %e = math.erf %t : f32
    %e1 = arith.addf %e, %one : f32
    %y = arith.mulf %h, %e1 : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%g : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.divf %x, %lk : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{raised attention: gelu times Lk^-alpha (3 elementwise ops), scale 0.25}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// GELU, tanh approximation (PyTorch approximate="tanh"), no factor: alpha 0.
// CHECK-LABEL: func.func @gelu_tanh(
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.pointwise<gelu_tanh, alpha = 0.0e+00>, scale = 1.000000e+00 : f32}
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @gelu_tanh(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %cst = arith.constant 0.797884583 : f32
  %a3 = arith.constant 4.471500e-02 : f32
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %x2 = arith.mulf %x, %x : f32
    %x3 = arith.mulf %x2, %x : f32
    %t0 = arith.mulf %x3, %a3 : f32
    %t1 = arith.addf %x, %t0 : f32
    %u = arith.mulf %t1, %cst : f32
    %t = math.tanh %u : f32
    %t2 = arith.addf %one, %t : f32
    %h = arith.mulf %half, %x : f32
    %y = arith.mulf %h, %t2 : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{raised attention: gelu_tanh, scale 1}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// softplus as log(1 + exp(x)), times rsqrt(Lk) computed from the shape.
// CHECK-LABEL: func.func @softplus(
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.pointwise<softplus, alpha = 5.0e-01>, scale = 1.000000e+00 : f32}
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @softplus(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %one = arith.constant 1.0 : f32
  %c2 = arith.constant 2 : index
  %lk = tensor.dim %k, %c2 : tensor<1x2x33x16xf32>
  %lki = arith.index_cast %lk : index to i32
  %lkf = arith.uitofp %lki : i32 to f32
  %f = math.rsqrt %lkf : f32
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %e = math.exp %x : f32
    %e1 = arith.addf %one, %e : f32
    %l = math.log %e1 : f32
    %y = arith.mulf %f, %l : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{raised attention: softplus times Lk^-alpha, scale 1}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// Identity: the scaled scores times V (no activation).
// CHECK-LABEL: func.func @identity(
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.pointwise<identity, alpha = 0.0e+00>, scale = 1.250000e-01 : f32}
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @identity(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %cst = arith.constant 0.125 : f32
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.mulf %x, %cst : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{raised attention: identity, scale 0.125}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// relu6 (a clamp to [0, 6]) times 1/33 = Lk^-1.
// CHECK-LABEL: func.func @relu6(
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.pointwise<relu6>, scale = 1.000000e+00 : f32}
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @relu6(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %six = arith.constant 6.0 : f32
  %cst = arith.constant 0.0303030312 : f32
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %lo = arith.maximumf %x, %zero : f32
    %hi = arith.minimumf %lo, %six : f32
    %y = arith.mulf %cst, %hi : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{raised attention: relu6 times Lk^-alpha, scale 1}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// sigmoid, then a causal mask on the weights (masked weights are 0).
// CHECK-LABEL: func.func @sigmoid_causal(
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.pointwise<sigmoid, alpha = 0.0e+00>, pattern = #attn.causal, scale = 2.500000e-01 : f32}
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @sigmoid_causal(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %one = arith.constant 1.0 : f32
  %cst = arith.constant 0.25 : f32
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %xs = arith.mulf %x, %cst : f32
    %n = arith.negf %xs : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %y = arith.divf %one, %d : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%g : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %ok = arith.cmpi ule, %j, %i : index
    %y = arith.select %ok, %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{raised attention: sigmoid, masked after h, causal mask from the indices, scale 0.25}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// relu, then a boolean padding mask tensor on the weights.
// CHECK-LABEL: func.func @relu_mask_tensor(
// CHECK-SAME:    %[[M:[^:]+]]: tensor<33x33xi1>
// CHECK:         attn.attention %{{.+}} mask(%[[M]] : tensor<33x33xi1>) {normalizer = #attn.pointwise<relu, alpha = 0.0e+00>, scale = 1.000000e+00 : f32}
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @relu_mask_tensor(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>, %m: tensor<33x33xi1>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %p = linalg.generic {indexing_maps = [#id, #m2, #id], iterator_types = #par} ins(%g, %m : tensor<1x2x33x33xf32>, tensor<33x33xi1>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %keep: i1, %out: f32):
    %y = arith.select %keep, %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{raised attention: relu, masked after h, boolean mask tensor, scale 1}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// relu after a causal -inf mask (relu(-inf) = 0: the key is removed).
// CHECK-LABEL: func.func @relu_causal_before(
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.pointwise<relu, alpha = 0.0e+00>, pattern = #attn.causal, scale = 2.500000e-01 : f32}
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @relu_causal_before(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %cst = arith.constant 0.25 : f32
  %sm = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %ok = arith.cmpi ule, %j, %i : index
    %xs = arith.mulf %x, %cst : f32
    %y = arith.select %ok, %xs, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%sm : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{raised attention: relu, causal mask from the indices, scale 0.25}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// Not raised: GELU of -inf is NaN, so the graph does not remove the key.
// CHECK-LABEL: func.func @gelu_minus_inf(
// CHECK-NOT:     attn.attention
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @gelu_minus_inf(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.707106769 : f32
  %sm = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %ok = arith.cmpi ule, %j, %i : index
    %y = arith.select %ok, %x, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%sm : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %h = arith.mulf %x, %half : f32
    %t = arith.mulf %x, %rsqrt2 : f32
    %e = math.erf %t : f32
    %e1 = arith.addf %e, %one : f32
    %y = arith.mulf %h, %e1 : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{not raised to attn.attention: the scores are masked with -inf before gelu, which is not 0 at -inf (the graph computes NaN or -inf)}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// Not raised: tanh is not a pointwise function of attn.
// CHECK-LABEL: func.func @tanh(
// CHECK-NOT:     attn.attention
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @tanh(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = math.tanh %x : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{not raised to attn.attention: the weights are an elementwise function of the scores that is not c * h(a * s) with a constant c > 0 and h one of relu, relu2, gelu, gelu_tanh, softplus, identity, relu6, sigmoid}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// Not raised: 2 sigmoid(s) is not Lk^-alpha sigmoid(s) for alpha in [0, 1].
// CHECK-LABEL: func.func @sigmoid_times_two(
// CHECK-NOT:     attn.attention
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @sigmoid_times_two(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %n = arith.negf %x : f32
    %e = math.exp %n : f32
    %d = arith.addf %one, %e : f32
    %y = arith.divf %two, %d : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{not raised to attn.attention: the sigmoid is scaled by 2, not Lk^-alpha with alpha in [0, 1]}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// relu times 4: relu is homogeneous, the factor becomes the scale.
// CHECK-LABEL: func.func @relu_times_four(
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.pointwise<relu, alpha = 0.0e+00>, scale = 4.000000e+00 : f32}
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @relu_times_four(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %four = arith.constant 4.0 : f32
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %r = arith.maximumf %x, %zero : f32
    %y = arith.mulf %r, %four : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{raised attention: relu, scale 4}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// A gate: the output times a tensor of its shape.
// CHECK-LABEL: func.func @gated(
// CHECK-SAME:    %[[G:[^:]+]]: tensor<1x2x33x8xf32>)
// CHECK-NOT:     linalg.generic
// CHECK:         attn.attention %{{.+}} gate(%[[G]] : tensor<1x2x33x8xf32>) {normalizer = #attn.pointwise<relu, alpha = 0.0e+00>, scale = 1.000000e+00 : f32}
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @gated(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>, %g: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{raised attention: relu, scale 1, gated}}
  %o0 = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  %o = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = #par} ins(%o0, %g : tensor<1x2x33x8xf32>, tensor<1x2x33x8xf32>) outs(%eo : tensor<1x2x33x8xf32>) {
  ^bb0(%x: f32, %gx: f32, %out: f32):
    %y = arith.mulf %gx, %x : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// qk-layernorm: Q and K layer-normalized over D (mean, centred squares, rsqrt
// of the variance plus eps; the squares of K fused into their sum).
// CHECK-LABEL: func.func @qk_layernorm(
// CHECK-SAME:    %[[Q:.+]]: tensor<1x2x33x16xf32>, %[[K:.+]]: tensor<1x2x33x16xf32>, %[[V:.+]]: tensor<1x2x33x8xf32>)
// CHECK-NOT:     linalg.
// CHECK:         attn.attention %[[Q]], %[[K]], %[[V]] {normalizer = #attn.pointwise<relu, alpha = 0.0e+00>, qk_norm_eps = 9.99999974E-6 : f32, scale = 1.000000e+00 : f32}
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @qk_layernorm(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %dim = arith.constant 16.0 : f32
  %lneps = arith.constant 1.0e-05 : f32
  %qn_er = tensor.empty() : tensor<1x2x33xf32>
  %qn_rz = linalg.fill ins(%zero : f32) outs(%qn_er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %qn_sum = linalg.reduce ins(%q : tensor<1x2x33x16xf32>) outs(%qn_rz : tensor<1x2x33xf32>) dimensions = [3]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  %qn_e = tensor.empty() : tensor<1x2x33x16xf32>
  %qn_xc = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, i)>, affine_map<(b, h, i, d) -> (b, h, i, d)>], iterator_types = #par} ins(%q, %qn_sum : tensor<1x2x33x16xf32>, tensor<1x2x33xf32>) outs(%qn_e : tensor<1x2x33x16xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %m = arith.divf %s, %dim : f32
    %c = arith.subf %a, %m : f32
    linalg.yield %c : f32
  } -> tensor<1x2x33x16xf32>
  %qn_sq = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, i, d)>], iterator_types = #par} ins(%qn_xc : tensor<1x2x33x16xf32>) outs(%qn_e : tensor<1x2x33x16xf32>) {
  ^bb0(%a: f32, %out: f32):
    %a2 = arith.mulf %a, %a : f32
    linalg.yield %a2 : f32
  } -> tensor<1x2x33x16xf32>
  %qn_vs = linalg.reduce ins(%qn_sq : tensor<1x2x33x16xf32>) outs(%qn_rz : tensor<1x2x33xf32>) dimensions = [3]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  %qn_rs = linalg.generic {indexing_maps = [affine_map<(b, h, i) -> (b, h, i)>, affine_map<(b, h, i) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%qn_vs : tensor<1x2x33xf32>) outs(%qn_er : tensor<1x2x33xf32>) {
  ^bb0(%a: f32, %out: f32):
    %var = arith.divf %a, %dim : f32
    %ve = arith.addf %var, %lneps : f32
    %rs = math.rsqrt %ve : f32
    linalg.yield %rs : f32
  } -> tensor<1x2x33xf32>
  %qn = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, i)>, affine_map<(b, h, i, d) -> (b, h, i, d)>], iterator_types = #par} ins(%qn_xc, %qn_rs : tensor<1x2x33x16xf32>, tensor<1x2x33xf32>) outs(%qn_e : tensor<1x2x33x16xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %c = arith.mulf %a, %s : f32
    linalg.yield %c : f32
  } -> tensor<1x2x33x16xf32>
  %kn_er = tensor.empty() : tensor<1x2x33xf32>
  %kn_rz = linalg.fill ins(%zero : f32) outs(%kn_er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %kn_sum = linalg.reduce ins(%k : tensor<1x2x33x16xf32>) outs(%kn_rz : tensor<1x2x33xf32>) dimensions = [3]
    (%a: f32, %acc: f32) {
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    }
  %kn_e = tensor.empty() : tensor<1x2x33x16xf32>
  %kn_xc = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, i)>, affine_map<(b, h, i, d) -> (b, h, i, d)>], iterator_types = #par} ins(%k, %kn_sum : tensor<1x2x33x16xf32>, tensor<1x2x33xf32>) outs(%kn_e : tensor<1x2x33x16xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %m = arith.divf %s, %dim : f32
    %c = arith.subf %a, %m : f32
    linalg.yield %c : f32
  } -> tensor<1x2x33x16xf32>
  %kn_vs = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%kn_xc : tensor<1x2x33x16xf32>) outs(%kn_rz : tensor<1x2x33xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %a2 = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %a2 : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33xf32>
  %kn_rs = linalg.generic {indexing_maps = [affine_map<(b, h, i) -> (b, h, i)>, affine_map<(b, h, i) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%kn_vs : tensor<1x2x33xf32>) outs(%kn_er : tensor<1x2x33xf32>) {
  ^bb0(%a: f32, %out: f32):
    %var = arith.divf %a, %dim : f32
    %ve = arith.addf %var, %lneps : f32
    %rs = math.rsqrt %ve : f32
    linalg.yield %rs : f32
  } -> tensor<1x2x33xf32>
  %kn = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, i)>, affine_map<(b, h, i, d) -> (b, h, i, d)>], iterator_types = #par} ins(%kn_xc, %kn_rs : tensor<1x2x33x16xf32>, tensor<1x2x33xf32>) outs(%kn_e : tensor<1x2x33x16xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %c = arith.mulf %a, %s : f32
    linalg.yield %c : f32
  } -> tensor<1x2x33x16xf32>
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qn, %kn : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{raised attention: relu, scale 1, qk-layernorm (eps 1e-05)}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// Grouped-query ReLU attention: K and V heads broadcast (2 query heads each).
// CHECK-LABEL: func.func @gqa_relu(
// CHECK-SAME:    %[[Q:.+]]: tensor<1x2x33x16xf32>, %[[K:.+]]: tensor<1x1x33x16xf32>, %[[V:.+]]: tensor<1x1x33x8xf32>)
// CHECK-NOT:     linalg.
// CHECK:         attn.attention %[[Q]], %[[K]], %[[V]] {normalizer = #attn.pointwise<relu>, scale = 2.500000e-01 : f32} : tensor<1x2x33x16xf32>, tensor<1x1x33x16xf32>, tensor<1x1x33x8xf32> -> tensor<1x2x33x8xf32>
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @gqa_relu(%q: tensor<1x2x33x16xf32>, %k: tensor<1x1x33x16xf32>, %v: tensor<1x1x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e5 = tensor.empty() : tensor<1x1x2x33x16xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x1x33x16xf32>) outs(%e5 : tensor<1x1x2x33x16xf32>) dimensions = [2]
  %kk = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x1x2x33x16xf32> into tensor<1x2x33x16xf32>
  %e5v = tensor.empty() : tensor<1x1x2x33x8xf32>
  %vb = linalg.broadcast ins(%v : tensor<1x1x33x8xf32>) outs(%e5v : tensor<1x1x2x33x8xf32>) dimensions = [2]
  %vv = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x1x2x33x8xf32> into tensor<1x2x33x8xf32>
  %cst = arith.constant 0.25 : f32
  %f = arith.constant 0.0303030312 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %kk : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %xs = arith.mulf %x, %cst : f32
    %r = arith.maximumf %xs, %zero : f32
    %y = arith.mulf %r, %f : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{raised attention: relu times Lk^-alpha, scale 0.25, grouped heads (2 query heads per key/value head)}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %vv : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// Not raised: relu clipped at 1000 agrees with relu only below 1000 (the chain is
// also evaluated around its own constants, not only at fixed samples).
// CHECK-LABEL: func.func @relu_clipped_at_1000(
// CHECK-NOT:     attn.attention
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#m2 = affine_map<(b, h, i, j) -> (i, j)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @relu_clipped_at_1000(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %clip = arith.constant 1000.0 : f32
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%s : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %r = arith.maximumf %x, %zero : f32
    %y = arith.minimumf %r, %clip : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  // expected-remark @below {{not raised to attn.attention: the weights are an elementwise function of the scores that is not c * h(a * s) with a constant c > 0 and h one of relu, relu2, gelu, gelu_tanh, softplus, identity, relu6, sigmoid}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}
