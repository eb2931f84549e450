// RUN: attn-opt %s --split-input-file --attn-raise --verify-diagnostics | FileCheck %s

// Linear (kernelized) attention written as linalg, in both association orders
// and normalized before or after the V product: raised to #attn.kernel, which
// attn-reassociate then computes in linear form (docs/Raising.md).

// Quadratic order, normalized after the V product: (A V) / (rowsum(A) + eps),
// A = phi(Q) phi(K)^T with elu + 1 features.
// CHECK-LABEL: func.func @quadratic_after_v(
// CHECK-SAME:    %[[Q:.+]]: tensor<1x2x33x16xf32>, %[[K:.+]]: tensor<1x2x33x16xf32>, %[[V:.+]]: tensor<1x2x33x8xf32>)
// CHECK-NOT:     linalg.
// CHECK:         attn.attention %[[Q]], %[[K]], %[[V]] {normalizer = #attn.kernel<elu_plus_one, eps = 9.99999997{{[0-9]+}}e-07>}
// CHECK-NOT:     linalg.
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @quadratic_after_v(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ef = tensor.empty() : tensor<1x2x33x16xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%q : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %fk = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%k : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %a = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq, %fk : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %num = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%a, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  %er = tensor.empty() : tensor<1x2x33xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %den = linalg.reduce ins(%a : tensor<1x2x33x33xf32>) outs(%rz : tensor<1x2x33xf32>) dimensions = [3]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  // expected-remark @below {{raised attention: linear attention (elu + 1 features) in quadratic form, normalized after the V product, eps 1e-06}}
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%num, %den : tensor<1x2x33x8xf32>, tensor<1x2x33xf32>) outs(%eo : tensor<1x2x33x8xf32>) {
  ^bb0(%n: f32, %d: f32, %out: f32):
    %eps = arith.constant 1.0e-06 : f32
    %de = arith.addf %d, %eps : f32
    %y = arith.divf %n, %de : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// Causal linear attention in quadratic form: the feature products masked
// with 0, relu features, the numerator times the reciprocal of the row sum.
// CHECK-LABEL: func.func @quadratic_causal(
// CHECK-NOT:     linalg.
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.kernel<relu>, pattern = #attn.causal}
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @quadratic_causal(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ef = tensor.empty() : tensor<1x2x33x16xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%q : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %fk = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%k : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %a = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq, %fk : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %am = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%a : tensor<1x2x33x33xf32>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %ok = arith.cmpi sle, %j, %i : index
    %y = arith.select %ok, %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %num = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%am, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  %er = tensor.empty() : tensor<1x2x33xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %den = linalg.reduce ins(%am : tensor<1x2x33x33xf32>) outs(%rz : tensor<1x2x33xf32>) dimensions = [3]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  %rd = linalg.generic {indexing_maps = [affine_map<(b, h, i) -> (b, h, i)>, affine_map<(b, h, i) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%den : tensor<1x2x33xf32>) outs(%er : tensor<1x2x33xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.divf %one, %x : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33xf32>
  // expected-remark @below {{raised attention: linear attention (relu features) in quadratic form, normalized after the V product, causal mask from the indices}}
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%num, %rd : tensor<1x2x33x8xf32>, tensor<1x2x33xf32>) outs(%eo : tensor<1x2x33x8xf32>) {
  ^bb0(%n: f32, %d: f32, %out: f32):
    %y = arith.mulf %n, %d : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// A key padding mask ([B, 1, 1, Lk], broadcast) on the feature products: the
// op broadcasts batch and head dims only, so the rows are materialized.
// CHECK-LABEL: func.func @quadratic_padding(
// CHECK-SAME:    %[[M:[^:]+]]: tensor<1x1x1x33xi1>)
// CHECK:         %[[R:.+]] = tensor.collapse_shape %[[M]] {{\[}}[0], [1], [2, 3]] : tensor<1x1x1x33xi1> into tensor<1x1x33xi1>
// CHECK:         %[[B:.+]] = linalg.broadcast ins(%[[R]] : tensor<1x1x33xi1>) outs(%{{.+}} : tensor<1x1x33x33xi1>) dimensions = [2]
// CHECK:         attn.attention %{{.+}} mask(%[[B]] : tensor<1x1x33x33xi1>) {normalizer = #attn.kernel<elu_plus_one>}
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @quadratic_padding(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>, %m: tensor<1x1x1x33xi1>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ef = tensor.empty() : tensor<1x2x33x16xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%q : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %fk = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%k : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %a = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq, %fk : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %am = linalg.generic {indexing_maps = [#id, affine_map<(b, h, i, j) -> (b, 0, 0, j)>, #id], iterator_types = #par} ins(%a, %m : tensor<1x2x33x33xf32>, tensor<1x1x1x33xi1>) outs(%es : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %keep: i1, %out: f32):
    %y = arith.select %keep, %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %num = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%am, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  %er = tensor.empty() : tensor<1x2x33xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %den = linalg.reduce ins(%am : tensor<1x2x33x33xf32>) outs(%rz : tensor<1x2x33xf32>) dimensions = [3]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  // expected-remark @below {{raised attention: linear attention (elu + 1 features) in quadratic form, normalized after the V product, boolean mask tensor}}
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%num, %den : tensor<1x2x33x8xf32>, tensor<1x2x33xf32>) outs(%eo : tensor<1x2x33x8xf32>) {
  ^bb0(%n: f32, %d: f32, %out: f32):
    %y = arith.divf %n, %d : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// Linear order: phi(Q) (phi(K)^T V) / (phi(Q) . sum_k phi(K) + eps), the form
// linear attention is usually written in (einsums).
// CHECK-LABEL: func.func @linear_order(
// CHECK-SAME:    %[[Q:.+]]: tensor<1x2x33x16xf32>, %[[K:.+]]: tensor<1x2x33x16xf32>, %[[V:.+]]: tensor<1x2x33x8xf32>)
// CHECK-NOT:     linalg.
// CHECK:         attn.attention %[[Q]], %[[K]], %[[V]] {normalizer = #attn.kernel<elu_plus_one, eps = 1.000000047{{[0-9]+}}e-03>}
// CHECK-NOT:     linalg.
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @linear_order(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ef = tensor.empty() : tensor<1x2x33x16xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%q : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %fk = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%k : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %ekv = tensor.empty() : tensor<1x2x16x8xf32>
  %kvz = linalg.fill ins(%zero : f32) outs(%ekv : tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  %kv = linalg.generic {indexing_maps = [affine_map<(b, h, d, e, j) -> (b, h, j, d)>, affine_map<(b, h, d, e, j) -> (b, h, j, e)>, affine_map<(b, h, d, e, j) -> (b, h, d, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fk, %v : tensor<1x2x33x16xf32>, tensor<1x2x33x8xf32>) outs(%kvz : tensor<1x2x16x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x16x8xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %num = linalg.generic {indexing_maps = [affine_map<(b, h, i, e, d) -> (b, h, i, d)>, affine_map<(b, h, i, e, d) -> (b, h, d, e)>, affine_map<(b, h, i, e, d) -> (b, h, i, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq, %kv : tensor<1x2x33x16xf32>, tensor<1x2x16x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  %ez = tensor.empty() : tensor<1x2x16xf32>
  %zz = linalg.fill ins(%zero : f32) outs(%ez : tensor<1x2x16xf32>) -> tensor<1x2x16xf32>
  %z = linalg.reduce ins(%fk : tensor<1x2x33x16xf32>) outs(%zz : tensor<1x2x16xf32>) dimensions = [2]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  %er = tensor.empty() : tensor<1x2x33xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %den = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, d)>, affine_map<(b, h, i, d) -> (b, h, i)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%fq, %z : tensor<1x2x33x16xf32>, tensor<1x2x16xf32>) outs(%rz : tensor<1x2x33xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33xf32>
  // expected-remark @below {{raised attention: linear attention (elu + 1 features) in linear order, eps 0.001}}
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%num, %den : tensor<1x2x33x8xf32>, tensor<1x2x33xf32>) outs(%eo : tensor<1x2x33x8xf32>) {
  ^bb0(%n: f32, %d: f32, %out: f32):
    %eps = arith.constant 1.0e-03 : f32
    %de = arith.addf %d, %eps : f32
    %r = arith.divf %one, %de : f32
    %y = arith.mulf %r, %n : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// Linear order with named ops ([B*H, L, D]): batch_matmul of the transposed
// features, linalg.reduce, batch_matvec; relu features.
// CHECK-LABEL: func.func @linear_order_named(
// CHECK-NOT:     linalg.
// CHECK:         attn.attention %{{.+}} {normalizer = #attn.kernel<relu>} : tensor<4x1x33x16xf32>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @linear_order_named(%q: tensor<4x33x16xf32>, %k: tensor<4x33x16xf32>, %v: tensor<4x33x8xf32>) -> tensor<4x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ef = tensor.empty() : tensor<4x33x16xf32>
  %fq = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q : tensor<4x33x16xf32>) outs(%ef : tensor<4x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<4x33x16xf32>
  %fk = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%k : tensor<4x33x16xf32>) outs(%ef : tensor<4x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<4x33x16xf32>
  %et = tensor.empty() : tensor<4x16x33xf32>
  %fkt = linalg.transpose ins(%fk : tensor<4x33x16xf32>) outs(%et : tensor<4x16x33xf32>) permutation = [0, 2, 1]
  %ekv = tensor.empty() : tensor<4x16x8xf32>
  %kvz = linalg.fill ins(%zero : f32) outs(%ekv : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %kv = linalg.batch_matmul ins(%fkt, %v : tensor<4x16x33xf32>, tensor<4x33x8xf32>) outs(%kvz : tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
  %eo = tensor.empty() : tensor<4x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x33x8xf32>) -> tensor<4x33x8xf32>
  %num = linalg.batch_matmul ins(%fq, %kv : tensor<4x33x16xf32>, tensor<4x16x8xf32>) outs(%oz : tensor<4x33x8xf32>) -> tensor<4x33x8xf32>
  %ez = tensor.empty() : tensor<4x16xf32>
  %zz = linalg.fill ins(%zero : f32) outs(%ez : tensor<4x16xf32>) -> tensor<4x16xf32>
  %z = linalg.reduce ins(%fk : tensor<4x33x16xf32>) outs(%zz : tensor<4x16xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  %er = tensor.empty() : tensor<4x33xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%er : tensor<4x33xf32>) -> tensor<4x33xf32>
  %den = linalg.batch_matvec ins(%fq, %z : tensor<4x33x16xf32>, tensor<4x16xf32>) outs(%rz : tensor<4x33xf32>) -> tensor<4x33xf32>
  // expected-remark @below {{raised attention: linear attention (relu features) in linear order, [B*H, L, D] operands}}
  %o = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%num, %den : tensor<4x33x8xf32>, tensor<4x33xf32>) outs(%eo : tensor<4x33x8xf32>) {
  ^bb0(%n: f32, %d: f32, %out: f32):
    %y = arith.divf %n, %d : f32
    linalg.yield %y : f32
  } -> tensor<4x33x8xf32>
  return %o : tensor<4x33x8xf32>
}

// -----

// Not raised: elu + 1 on Q but relu on K.
// CHECK-LABEL: func.func @different_features(
// CHECK-NOT:     attn.attention
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @different_features(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ef = tensor.empty() : tensor<1x2x33x16xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%q : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %fk = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%k : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %a = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq, %fk : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %num = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%a, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  %er = tensor.empty() : tensor<1x2x33xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %den = linalg.reduce ins(%a : tensor<1x2x33x33xf32>) outs(%rz : tensor<1x2x33xf32>) dimensions = [3]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  // expected-remark @below {{not raised to attn.attention: the product is normalized by its row sums, but Q and K do not go through the same feature map (elu + 1, relu or FAVOR+)}}
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%num, %den : tensor<1x2x33x8xf32>, tensor<1x2x33xf32>) outs(%eo : tensor<1x2x33x8xf32>) {
  ^bb0(%n: f32, %d: f32, %out: f32):
    %y = arith.divf %n, %d : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// Not raised: divided by twice the row sum.
// CHECK-LABEL: func.func @twice_the_sum(
// CHECK-NOT:     attn.attention
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @twice_the_sum(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ef = tensor.empty() : tensor<1x2x33x16xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%q : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %fk = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%k : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %a = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq, %fk : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %num = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%a, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  %er = tensor.empty() : tensor<1x2x33xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %den = linalg.reduce ins(%a : tensor<1x2x33x33xf32>) outs(%rz : tensor<1x2x33xf32>) dimensions = [3]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  // expected-remark @below {{not raised to attn.attention: the product is divided by a row value, but not as num / (den + eps) with a constant eps >= 0}}
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%num, %den : tensor<1x2x33x8xf32>, tensor<1x2x33xf32>) outs(%eo : tensor<1x2x33x8xf32>) {
  ^bb0(%n: f32, %d: f32, %out: f32):
    %two = arith.constant 2.0 : f32
    %d2 = arith.mulf %d, %two : f32
    %y = arith.divf %n, %d2 : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// FAVOR+ (Performer): x = D^-1/4 Q, phi(x) = exp(x W^T - |x|^2 / 2) / sqrt(m)
// with the projection W [m, D] an argument: the op gets W as its projection
// operand and scale (D^-1/4)^2.
// CHECK-LABEL: func.func @favor(
// CHECK-SAME:    %[[Q:[^:]+]]: tensor<1x2x33x16xf32>, %[[K:[^:]+]]: tensor<1x2x33x16xf32>, %[[V:[^:]+]]: tensor<1x2x33x8xf32>, %[[W:[^:]+]]: tensor<24x16xf32>)
// CHECK-NOT:     linalg.
// CHECK:         attn.attention %[[Q]], %[[K]], %[[V]] projection(%[[W]] : tensor<24x16xf32>) {normalizer = #attn.kernel<favor, features = 24, eps = 9.99999997{{[0-9]+}}e-07>, scale = 2.500000e-01 : f32}
// CHECK-NOT:     linalg.
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @favor(%q: tensor<1x2x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x8xf32>, %w: tensor<24x16xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ef = tensor.empty() : tensor<1x2x33x16xf32>
  %quarter4 = arith.constant 0.5 : f32
  %half = arith.constant 0.5 : f32
  %rsqrtm = arith.constant 0.204124153 : f32
  %fq_x = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%q : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.mulf %x, %quarter4 : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %fq_fe = tensor.empty() : tensor<1x2x33x24xf32>
  %fq_fz = linalg.fill ins(%zero : f32) outs(%fq_fe : tensor<1x2x33x24xf32>) -> tensor<1x2x33x24xf32>
  %fq_xw = linalg.generic {indexing_maps = [affine_map<(b, h, l, r, d) -> (b, h, l, d)>, affine_map<(b, h, l, r, d) -> (r, d)>, affine_map<(b, h, l, r, d) -> (b, h, l, r)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq_x, %w : tensor<1x2x33x16xf32>, tensor<24x16xf32>) outs(%fq_fz : tensor<1x2x33x24xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %mm : f32
    linalg.yield %s : f32
  } -> tensor<1x2x33x24xf32>
  %fq_re = tensor.empty() : tensor<1x2x33xf32>
  %fq_rz = linalg.fill ins(%zero : f32) outs(%fq_re : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %fq_sq = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%fq_x : tensor<1x2x33x16xf32>) outs(%fq_rz : tensor<1x2x33xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %a2 = arith.mulf %a, %a : f32
    %s = arith.addf %acc, %a2 : f32
    linalg.yield %s : f32
  } -> tensor<1x2x33xf32>
  %fq = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%fq_xw, %fq_sq : tensor<1x2x33x24xf32>, tensor<1x2x33xf32>) outs(%fq_fe : tensor<1x2x33x24xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %h = arith.mulf %s, %half : f32
    %d = arith.subf %a, %h : f32
    %e = math.exp %d : f32
    %y = arith.mulf %e, %rsqrtm : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x24xf32>
  %fk_x = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%k : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %y = arith.mulf %x, %quarter4 : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %fk_fe = tensor.empty() : tensor<1x2x33x24xf32>
  %fk_fz = linalg.fill ins(%zero : f32) outs(%fk_fe : tensor<1x2x33x24xf32>) -> tensor<1x2x33x24xf32>
  %fk_xw = linalg.generic {indexing_maps = [affine_map<(b, h, l, r, d) -> (b, h, l, d)>, affine_map<(b, h, l, r, d) -> (r, d)>, affine_map<(b, h, l, r, d) -> (b, h, l, r)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fk_x, %w : tensor<1x2x33x16xf32>, tensor<24x16xf32>) outs(%fk_fz : tensor<1x2x33x24xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %mm = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %mm : f32
    linalg.yield %s : f32
  } -> tensor<1x2x33x24xf32>
  %fk_re = tensor.empty() : tensor<1x2x33xf32>
  %fk_rz = linalg.fill ins(%zero : f32) outs(%fk_re : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %fk_sq = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%fk_x : tensor<1x2x33x16xf32>) outs(%fk_rz : tensor<1x2x33xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %a2 = arith.mulf %a, %a : f32
    %s = arith.addf %acc, %a2 : f32
    linalg.yield %s : f32
  } -> tensor<1x2x33xf32>
  %fk = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%fk_xw, %fk_sq : tensor<1x2x33x24xf32>, tensor<1x2x33xf32>) outs(%fk_fe : tensor<1x2x33x24xf32>) {
  ^bb0(%a: f32, %s: f32, %out: f32):
    %h = arith.mulf %s, %half : f32
    %d = arith.subf %a, %h : f32
    %e = math.exp %d : f32
    %y = arith.mulf %e, %rsqrtm : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x24xf32>
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, r) -> (b, h, i, r)>, affine_map<(b, h, i, j, r) -> (b, h, j, r)>, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq, %fk : tensor<1x2x33x24xf32>, tensor<1x2x33x24xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %num = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%a, %v : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  %er = tensor.empty() : tensor<1x2x33xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %den = linalg.reduce ins(%a : tensor<1x2x33x33xf32>) outs(%rz : tensor<1x2x33xf32>) dimensions = [3]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  // expected-remark @below {{raised attention: linear attention (FAVOR+ features, m = 24) in quadratic form, normalized after the V product, eps 1e-06}}
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%num, %den : tensor<1x2x33x8xf32>, tensor<1x2x33xf32>) outs(%eo : tensor<1x2x33x8xf32>) {
  ^bb0(%n: f32, %d: f32, %out: f32):
    %eps = arith.constant 1.0e-06 : f32
    %de = arith.addf %d, %eps : f32
    %y = arith.divf %n, %de : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}

// -----

// Grouped-query linear attention: K and V heads broadcast before the features.
// CHECK-LABEL: func.func @gqa_linear(
// CHECK-SAME:    %[[Q:.+]]: tensor<1x2x33x16xf32>, %[[K:.+]]: tensor<1x1x33x16xf32>, %[[V:.+]]: tensor<1x1x33x8xf32>)
// CHECK-NOT:     linalg.
// CHECK:         attn.attention %[[Q]], %[[K]], %[[V]] {normalizer = #attn.kernel<elu_plus_one, eps = 9.99999997{{[0-9]+}}e-07>} : tensor<1x2x33x16xf32>, tensor<1x1x33x16xf32>, tensor<1x1x33x8xf32> -> tensor<1x2x33x8xf32>
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
#par = ["parallel", "parallel", "parallel", "parallel"]
func.func @gqa_linear(%q: tensor<1x2x33x16xf32>, %k: tensor<1x1x33x16xf32>, %v: tensor<1x1x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ef = tensor.empty() : tensor<1x2x33x16xf32>
  %e5 = tensor.empty() : tensor<1x1x2x33x16xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x1x33x16xf32>) outs(%e5 : tensor<1x1x2x33x16xf32>) dimensions = [2]
  %kk = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x1x2x33x16xf32> into tensor<1x2x33x16xf32>
  %e5v = tensor.empty() : tensor<1x1x2x33x8xf32>
  %vb = linalg.broadcast ins(%v : tensor<1x1x33x8xf32>) outs(%e5v : tensor<1x1x2x33x8xf32>) dimensions = [2]
  %vv = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x1x2x33x8xf32> into tensor<1x2x33x8xf32>
  %fq = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%q : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %fk = linalg.generic {indexing_maps = [#id, #id], iterator_types = #par} ins(%kk : tensor<1x2x33x16xf32>) outs(%ef : tensor<1x2x33x16xf32>) {
  ^bb0(%x: f32, %out: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a1 = arith.addf %x, %one : f32
    %ex = math.exp %x : f32
    %y = arith.select %pos, %a1, %ex : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x16xf32>
  %es = tensor.empty() : tensor<1x2x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x33x33xf32>) -> tensor<1x2x33x33xf32>
  %a = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%fq, %fk : tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32>) outs(%sz : tensor<1x2x33x33xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x33xf32>
  %eo = tensor.empty() : tensor<1x2x33x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32>
  %num = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%a, %vv : tensor<1x2x33x33xf32>, tensor<1x2x33x8xf32>) outs(%oz : tensor<1x2x33x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %mm = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %mm : f32
    linalg.yield %r : f32
  } -> tensor<1x2x33x8xf32>
  %er = tensor.empty() : tensor<1x2x33xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x33xf32>) -> tensor<1x2x33xf32>
  %den = linalg.reduce ins(%a : tensor<1x2x33x33xf32>) outs(%rz : tensor<1x2x33xf32>) dimensions = [3]
    (%x: f32, %acc: f32) {
      %r = arith.addf %x, %acc : f32
      linalg.yield %r : f32
    }
  // expected-remark @below {{raised attention: linear attention (elu + 1 features) in quadratic form, normalized after the V product, eps 1e-06, grouped heads (2 query heads per key/value head)}}
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = #par} ins(%num, %den : tensor<1x2x33x8xf32>, tensor<1x2x33xf32>) outs(%eo : tensor<1x2x33x8xf32>) {
  ^bb0(%n: f32, %d: f32, %out: f32):
    %eps = arith.constant 1.0e-06 : f32
    %de = arith.addf %d, %eps : f32
    %y = arith.divf %n, %de : f32
    linalg.yield %y : f32
  } -> tensor<1x2x33x8xf32>
  return %o : tensor<1x2x33x8xf32>
}
