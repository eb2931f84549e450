// RUN: attn-opt %s --split-input-file --attn-raise --verify-diagnostics | FileCheck %s
// linalg.softmax decomposed by upstream (max with a NaN init and maxnumf)
// is raised too:
// RUN: attn-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(attn-decompose-aggregates,attn-raise))" 2>&1 | FileCheck %s --check-prefix=UPSTREAM
// UPSTREAM: remark: raised attention: softmax decomposed into max, exp, sum, div, scale 0.125, K transposed, [B*H, L, D] operands

// torch-mlir's form: [B*H, L, D] batch_matmul with K transposed, the scores
// multiplied by a constant, linalg.softmax, batch_matmul.
// CHECK-LABEL: func.func @named_3d(
// CHECK-SAME:    %[[Q:.+]]: tensor<8x128x64xf32>, %[[K:.+]]: tensor<8x128x64xf32>, %[[V:.+]]: tensor<8x128x64xf32>)
// CHECK-DAG:     %[[Q4:.+]] = tensor.expand_shape %[[Q]] {{\[\[}}0, 1], [2], [3]] output_shape [8, 1, 128, 64]
// CHECK-DAG:     %[[K4:.+]] = tensor.expand_shape %[[K]]
// CHECK-DAG:     %[[V4:.+]] = tensor.expand_shape %[[V]]
// CHECK:         %[[O:.+]] = attn.attention %[[Q4]], %[[K4]], %[[V4]] {normalizer = #attn.softmax, scale = 1.250000e-01 : f32}
// CHECK:         %[[O3:.+]] = tensor.collapse_shape %[[O]] {{\[\[}}0, 1], [2], [3]] : tensor<8x1x128x64xf32> into tensor<8x128x64xf32>
// CHECK-NOT:     linalg.batch_matmul
// CHECK-NOT:     linalg.softmax
// CHECK:         return %[[O3]]
func.func @named_3d(%q: tensor<8x128x64xf32>, %k: tensor<8x128x64xf32>, %v: tensor<8x128x64xf32>) -> tensor<8x128x64xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %kt0 = tensor.empty() : tensor<8x64x128xf32>
  %kt = linalg.transpose ins(%k : tensor<8x128x64xf32>) outs(%kt0 : tensor<8x64x128xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<8x128x128xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x128x64xf32>, tensor<8x64x128xf32>) outs(%sz : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x128x128xf32>) outs(%s0 : tensor<8x128x128xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %scale : f32
    linalg.yield %y : f32
  } -> tensor<8x128x128xf32>
  %p = linalg.softmax dimension(2) ins(%ss : tensor<8x128x128xf32>) outs(%s0 : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %o0 = tensor.empty() : tensor<8x128x64xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<8x128x64xf32>) -> tensor<8x128x64xf32>
  // expected-remark @below {{raised attention: linalg.softmax, scale 0.125, K transposed, [B*H, L, D] operands}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x128x128xf32>, tensor<8x128x64xf32>) outs(%oz : tensor<8x128x64xf32>) -> tensor<8x128x64xf32>
  return %o : tensor<8x128x64xf32>
}

// -----

// 4-D [B, H, L, D] contractions as linalg.generic, the scores divided by a
// constant, softmax decomposed into max, exp(s - max), sum, div.
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id = affine_map<(b, h, i, j) -> (b, h, i, j)>
#row = affine_map<(b, h, i, j) -> (b, h, i)>
// CHECK-LABEL: func.func @generic_4d(
// CHECK-SAME:    %[[Q:.+]]: tensor<2x4x37x16xf32>, %[[K:.+]]: tensor<2x4x50x16xf32>, %[[V:.+]]: tensor<2x4x50x8xf32>)
// CHECK-NOT:     linalg.
// CHECK:         %[[O:.+]] = attn.attention %[[Q]], %[[K]], %[[V]] {normalizer = #attn.softmax, scale = 2.500000e-01 : f32}
// CHECK-NEXT:    return %[[O]]
func.func @generic_4d(%q: tensor<2x4x37x16xf32>, %k: tensor<2x4x50x16xf32>, %v: tensor<2x4x50x8xf32>) -> tensor<2x4x37x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %four = arith.constant 4.0 : f32
  %e0 = tensor.empty() : tensor<2x4x37x50xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x4x37x50xf32>) -> tensor<2x4x37x50xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x37x16xf32>, tensor<2x4x50x16xf32>) outs(%sz : tensor<2x4x37x50xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x50xf32>
  %ss = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<2x4x37x50xf32>) outs(%e0 : tensor<2x4x37x50xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.divf %x, %four : f32
    linalg.yield %y : f32
  } -> tensor<2x4x37x50xf32>
  %r0 = tensor.empty() : tensor<2x4x37xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%r0 : tensor<2x4x37xf32>) -> tensor<2x4x37xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%ss : tensor<2x4x37x50xf32>) outs(%mi : tensor<2x4x37xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.maximumf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<2x4x37xf32>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ss, %max : tensor<2x4x37x50xf32>, tensor<2x4x37xf32>) outs(%e0 : tensor<2x4x37x50xf32>) {
  ^bb0(%x: f32, %mx: f32, %o: f32):
    %d = arith.subf %x, %mx : f32
    %y = math.exp %d : f32
    linalg.yield %y : f32
  } -> tensor<2x4x37x50xf32>
  %si = linalg.fill ins(%zero : f32) outs(%r0 : tensor<2x4x37xf32>) -> tensor<2x4x37xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%ex : tensor<2x4x37x50xf32>) outs(%si : tensor<2x4x37xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<2x4x37xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%ex, %sum : tensor<2x4x37x50xf32>, tensor<2x4x37xf32>) outs(%e0 : tensor<2x4x37x50xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %y = arith.divf %x, %t : f32
    linalg.yield %y : f32
  } -> tensor<2x4x37x50xf32>
  %o0 = tensor.empty() : tensor<2x4x37x8xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<2x4x37x8xf32>) -> tensor<2x4x37x8xf32>
  // expected-remark @below {{raised attention: softmax decomposed into max, exp, sum, div, scale 0.25}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x4x37x50xf32>, tensor<2x4x50x8xf32>) outs(%oz : tensor<2x4x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}

// -----

// ReLU attention: relu of the scaled scores times 1/8 = 64^-0.5 (Lk = 64).
// CHECK-LABEL: func.func @relu(
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {normalizer = #attn.pointwise<relu, alpha = 5.0e-01>, scale = 1.250000e-01 : f32}
// CHECK-NOT:     linalg.
func.func @relu(%q: tensor<4x64x32xf32>, %k: tensor<4x64x32xf32>, %v: tensor<4x64x32xf32>) -> tensor<4x64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %kt0 = tensor.empty() : tensor<4x32x64xf32>
  %kt = linalg.transpose ins(%k : tensor<4x64x32xf32>) outs(%kt0 : tensor<4x32x64xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<4x64x64xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x64x32xf32>, tensor<4x32x64xf32>) outs(%sz : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %scale : f32
    linalg.yield %y : f32
  } -> tensor<4x64x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ss : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<4x64x64xf32>
  %c = arith.constant 0.125 : f32
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %c : f32
    linalg.yield %y : f32
  } -> tensor<4x64x64xf32>
  %o0 = tensor.empty() : tensor<4x64x32xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  // expected-remark @below {{raised attention: relu times Lk^-alpha (3 elementwise ops), scale 0.125, K transposed, [B*H, L, D] operands}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x64x64xf32>, tensor<4x64x32xf32>) outs(%oz : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  return %o : tensor<4x64x32xf32>
}

// -----

// Near misses: softmax over the query dim; a scale that is a run-time
// value; the scores used twice; an accumulation into something other than
// zeros. Nothing is raised; remarks say why.
// CHECK-LABEL: func.func @near_misses(
// CHECK-NOT:     attn.attention
func.func @near_misses(%q: tensor<4x64x32xf32>, %kt: tensor<4x32x64xf32>, %v: tensor<4x64x32xf32>, %t: f32, %init: tensor<4x64x32xf32>) -> (tensor<4x64x32xf32>, tensor<4x64x32xf32>, tensor<4x64x32xf32>, tensor<4x64x64xf32>, tensor<4x64x32xf32>) {
  %zero = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<4x64x64xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %o0 = tensor.empty() : tensor<4x64x32xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>

  %s1 = linalg.batch_matmul ins(%q, %kt : tensor<4x64x32xf32>, tensor<4x32x64xf32>) outs(%sz : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %p1 = linalg.softmax dimension(1) ins(%s1 : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  // expected-remark @below {{not raised to attn.attention: linalg.softmax normalizes dim 1, not the key dim 2}}
  %o1 = linalg.batch_matmul ins(%p1, %v : tensor<4x64x64xf32>, tensor<4x64x32xf32>) outs(%oz : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>

  %s2 = linalg.batch_matmul ins(%q, %kt : tensor<4x64x32xf32>, tensor<4x32x64xf32>) outs(%sz : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %ss2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s2 : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %t : f32
    linalg.yield %y : f32
  } -> tensor<4x64x64xf32>
  %p2 = linalg.softmax dimension(2) ins(%ss2 : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  // expected-remark @below {{not raised to attn.attention: the scores are scaled by something that is not a constant}}
  %o2 = linalg.batch_matmul ins(%p2, %v : tensor<4x64x64xf32>, tensor<4x64x32xf32>) outs(%oz : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>

  %s3 = linalg.batch_matmul ins(%q, %kt : tensor<4x64x32xf32>, tensor<4x32x64xf32>) outs(%sz : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %p3 = linalg.softmax dimension(2) ins(%s3 : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  // expected-remark @below {{not raised to attn.attention: the scores have another use}}
  %o3 = linalg.batch_matmul ins(%p3, %v : tensor<4x64x64xf32>, tensor<4x64x32xf32>) outs(%oz : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>

  %s4 = linalg.batch_matmul ins(%q, %kt : tensor<4x64x32xf32>, tensor<4x32x64xf32>) outs(%sz : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %p4 = linalg.softmax dimension(2) ins(%s4 : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  // expected-remark @below {{not raised to attn.attention: the output product does not accumulate into zeros}}
  %o4 = linalg.batch_matmul ins(%p4, %v : tensor<4x64x64xf32>, tensor<4x64x32xf32>) outs(%init : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  return %o1, %o2, %o3, %s3, %o4 : tensor<4x64x32xf32>, tensor<4x64x32xf32>, tensor<4x64x32xf32>, tensor<4x64x64xf32>, tensor<4x64x32xf32>
}

// -----

// Not attention: a matrix product after an activation (an MLP) gets no
// remark and stays.
// CHECK-LABEL: func.func @mlp(
// CHECK:         linalg.batch_matmul
// CHECK-NOT:     attn.attention
func.func @mlp(%x: tensor<4x64x32xf32>, %w: tensor<4x32x16xf32>) -> tensor<4x64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64x32xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<4x64x32xf32>) outs(%e : tensor<4x64x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = math.tanh %a : f32
    linalg.yield %y : f32
  } -> tensor<4x64x32xf32>
  %o0 = tensor.empty() : tensor<4x64x16xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<4x64x16xf32>) -> tensor<4x64x16xf32>
  %o = linalg.batch_matmul ins(%g, %w : tensor<4x64x32xf32>, tensor<4x32x16xf32>) outs(%oz : tensor<4x64x16xf32>) -> tensor<4x64x16xf32>
  return %o : tensor<4x64x16xf32>
}

// -----

// Grouped-query attention as exporters write it: K and V heads broadcast
// ([B, 2, L, D] -> [B, 2, 2, L, D] -> [B, 4, L, D]); the scale on Q.
#q4 = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k4 = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s4 = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p4 = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v4 = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o4 = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, d) -> (b, h, i, d)>
// CHECK-LABEL: func.func @gqa(
// CHECK-SAME:    %[[Q:.+]]: tensor<1x4x33x16xf32>, %[[K:.+]]: tensor<1x2x33x16xf32>, %[[V:.+]]: tensor<1x2x33x16xf32>)
// CHECK-NOT:     linalg.
// CHECK:         attn.attention %[[Q]], %[[K]], %[[V]] {normalizer = #attn.softmax, scale = 2.500000e-01 : f32} : tensor<1x4x33x16xf32>, tensor<1x2x33x16xf32>, tensor<1x2x33x16xf32> -> tensor<1x4x33x16xf32>
func.func @gqa(%q: tensor<1x4x33x16xf32>, %k: tensor<1x2x33x16xf32>, %v: tensor<1x2x33x16xf32>) -> tensor<1x4x33x16xf32> {
  %zero = arith.constant 0.0 : f32
  %quarter = arith.constant 0.25 : f32
  %eq = tensor.empty() : tensor<1x4x33x16xf32>
  %qs = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q : tensor<1x4x33x16xf32>) outs(%eq : tensor<1x4x33x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %quarter : f32
    linalg.yield %y : f32
  } -> tensor<1x4x33x16xf32>
  %e5 = tensor.empty() : tensor<1x2x2x33x16xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x2x33x16xf32>) outs(%e5 : tensor<1x2x2x33x16xf32>) dimensions = [2]
  %kk = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x2x33x16xf32> into tensor<1x4x33x16xf32>
  %vb = linalg.broadcast ins(%v : tensor<1x2x33x16xf32>) outs(%e5 : tensor<1x2x2x33x16xf32>) dimensions = [2]
  %vv = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x2x33x16xf32> into tensor<1x4x33x16xf32>
  %es = tensor.empty() : tensor<1x4x33x33xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x4x33x33xf32>) -> tensor<1x4x33x33xf32>
  %s = linalg.generic {indexing_maps = [#q4, #k4, #s4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qs, %kk : tensor<1x4x33x16xf32>, tensor<1x4x33x16xf32>) outs(%sz : tensor<1x4x33x33xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x33x33xf32>
  %p = linalg.softmax dimension(3) ins(%s : tensor<1x4x33x33xf32>) outs(%es : tensor<1x4x33x33xf32>) -> tensor<1x4x33x33xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eq : tensor<1x4x33x16xf32>) -> tensor<1x4x33x16xf32>
  // expected-remark @below {{raised attention: linalg.softmax, scale 0.25, grouped heads (2 query heads per key/value head), Q scaled}}
  %o = linalg.generic {indexing_maps = [#p4, #v4, #o4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %vv : tensor<1x4x33x33xf32>, tensor<1x4x33x16xf32>) outs(%oz : tensor<1x4x33x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x33x16xf32>
  return %o : tensor<1x4x33x16xf32>
}

// -----

// Linear attention written in its quadratic form: elu(x) + 1 features of Q
// and K, their products normalized by the row sum. Raised to the kernel
// normalizer (no scale), which attn-reassociate then makes linear.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @linear_quadratic(
// CHECK-NOT:     linalg.
// CHECK:         attn.attention %{{.+}}, %{{.+}}, %{{.+}} {normalizer = #attn.kernel<elu_plus_one>} : tensor<4x1x64x32xf32>
func.func @linear_quadratic(%q: tensor<4x64x32xf32>, %k: tensor<4x64x32xf32>, %v: tensor<4x64x32xf32>) -> tensor<4x64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x64x32xf32>
  %fq = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q : tensor<4x64x32xf32>) outs(%e : tensor<4x64x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a = arith.addf %x, %one : f32
    %b = math.exp %x : f32
    %y = arith.select %pos, %a, %b : f32
    linalg.yield %y : f32
  } -> tensor<4x64x32xf32>
  %fk = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%k : tensor<4x64x32xf32>) outs(%e : tensor<4x64x32xf32>) {
  ^bb0(%x: f32, %o: f32):
    %pos = arith.cmpf ogt, %x, %zero : f32
    %a = arith.addf %x, %one : f32
    %b = math.exp %x : f32
    %y = arith.select %pos, %a, %b : f32
    linalg.yield %y : f32
  } -> tensor<4x64x32xf32>
  %kt0 = tensor.empty() : tensor<4x32x64xf32>
  %fkt = linalg.transpose ins(%fk : tensor<4x64x32xf32>) outs(%kt0 : tensor<4x32x64xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<4x64x64xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %s = linalg.batch_matmul ins(%fq, %fkt : tensor<4x64x32xf32>, tensor<4x32x64xf32>) outs(%sz : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %r0 = tensor.empty() : tensor<4x64xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%r0 : tensor<4x64xf32>) -> tensor<4x64xf32>
  %sum = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s : tensor<4x64x64xf32>) outs(%rz : tensor<4x64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %y = arith.addf %x, %acc : f32
    linalg.yield %y : f32
  } -> tensor<4x64xf32>
  %p = linalg.generic {indexing_maps = [#id3, #row3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %sum : tensor<4x64x64xf32>, tensor<4x64xf32>) outs(%s0 : tensor<4x64x64xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %y = arith.divf %x, %t : f32
    linalg.yield %y : f32
  } -> tensor<4x64x64xf32>
  %o0 = tensor.empty() : tensor<4x64x32xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  // expected-remark @below {{raised attention: linear attention (elu + 1 features) in quadratic form, [B*H, L, D] operands}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x64x64xf32>, tensor<4x64x32xf32>) outs(%oz : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  return %o : tensor<4x64x32xf32>
}

// -----

// relu6 attention (a clamp of the scores to [0, 6]), no factor: alpha 0.
// CHECK-LABEL: func.func @relu6(
// CHECK:         attn.attention {{.*}}normalizer = #attn.pointwise<relu6, alpha = 0.0e+00>, scale = 1.000000e+00 : f32
func.func @relu6(%q: tensor<4x64x32xf32>, %kt: tensor<4x32x64xf32>, %v: tensor<4x64x32xf32>) -> tensor<4x64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %s0 = tensor.empty() : tensor<4x64x64xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x64x32xf32>, tensor<4x32x64xf32>) outs(%sz : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.maximumf %x, %zero : f32
    %y = arith.minimumf %r, %six : f32
    linalg.yield %y : f32
  } -> tensor<4x64x64xf32>
  %o0 = tensor.empty() : tensor<4x64x32xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  // expected-remark @below {{raised attention: relu6, scale 1, K transposed, [B*H, L, D] operands}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x64x64xf32>, tensor<4x64x32xf32>) outs(%oz : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  return %o : tensor<4x64x32xf32>
}

// -----

// A causal mask computed from linalg.index (the exporters' form), in the
// scores' op or added as a tensor: raised as #attn.causal.
#id3m = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @causal_select(
// CHECK:         attn.attention {{.*}}{normalizer = #attn.softmax, pattern = #attn.causal, scale = 1.250000e-01 : f32}
// CHECK-LABEL: func.func @causal_additive(
// CHECK:         attn.attention {{.*}}{normalizer = #attn.softmax, pattern = #attn.causal, scale = 1.000000e+00 : f32}
// CHECK-NOT:     linalg.index
func.func @causal_select(%q: tensor<4x64x32xf32>, %kt: tensor<4x32x64xf32>, %v: tensor<4x64x32xf32>) -> tensor<4x64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.125 : f32
  %s0 = tensor.empty() : tensor<4x64x64xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x64x32xf32>, tensor<4x32x64xf32>) outs(%sz : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %ss = linalg.generic {indexing_maps = [#id3m, #id3m], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %scale : f32
    linalg.yield %y : f32
  } -> tensor<4x64x64xf32>
  %m = linalg.generic {indexing_maps = [#id3m, #id3m], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ss : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %c = arith.cmpi sle, %j, %i : index
    %y = arith.select %c, %x, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<4x64x64xf32>
  %p = linalg.softmax dimension(2) ins(%m : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %o0 = tensor.empty() : tensor<4x64x32xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  // expected-remark @below {{raised attention: linalg.softmax, causal mask from the indices, scale 0.125, K transposed, [B*H, L, D] operands}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x64x64xf32>, tensor<4x64x32xf32>) outs(%oz : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  return %o : tensor<4x64x32xf32>
}

func.func @causal_additive(%q: tensor<4x64x32xf32>, %kt: tensor<4x32x64xf32>, %v: tensor<4x64x32xf32>) -> tensor<4x64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.40282347E+38 : f32
  %s0 = tensor.empty() : tensor<4x64x64xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x64x32xf32>, tensor<4x32x64xf32>) outs(%sz : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %mask = linalg.generic {indexing_maps = [#id3m], iterator_types = ["parallel", "parallel", "parallel"]} outs(%s0 : tensor<4x64x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %c = arith.cmpi sge, %i, %j : index
    %y = arith.select %c, %zero, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<4x64x64xf32>
  %m = linalg.generic {indexing_maps = [#id3m, #id3m, #id3m], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) {
  ^bb0(%x: f32, %a: f32, %o: f32):
    %y = arith.addf %x, %a : f32
    linalg.yield %y : f32
  } -> tensor<4x64x64xf32>
  %p = linalg.softmax dimension(2) ins(%m : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %o0 = tensor.empty() : tensor<4x64x32xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  // expected-remark @below {{raised attention: linalg.softmax, causal mask from the indices, scale 1, K transposed, [B*H, L, D] operands}}
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x64x64xf32>, tensor<4x64x32xf32>) outs(%oz : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  return %o : tensor<4x64x32xf32>
}

// -----

// Masks before the softmax: a window from linalg.index (a constant mask
// operand, which attn-infer-mask reads as #attn.window), an additive mask
// tensor [Lq, Lk] broadcast over batch and heads, a boolean mask tensor
// [B, 1, Lq, Lk] read at head 0 (TOSA's broadcast), and a masked fill that
// is not -inf (not raised: rows with no allowed key would differ).
// RUN: attn-opt %s --split-input-file --attn-raise --attn-infer-mask 2>&1 | FileCheck %s --check-prefix=INFER
// INFER: remark: attn-infer-mask: the constant mask is #attn.window<before = 3, after = 0>
#mq = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#mk = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#ms = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#mp = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#mv = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#mo = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#lqlk = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#b1 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
// CHECK-LABEL: func.func @window_index(
// CHECK:         %[[M:.*]] = arith.constant dense<{{.*}}> : tensor<16x16xi1>
// CHECK:         attn.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%[[M]] : tensor<16x16xi1>) {normalizer = #attn.softmax, scale = 2.500000e-01 : f32}
// CHECK-NOT:     linalg.index
// CHECK-LABEL: func.func @additive_tensor(
// CHECK-SAME:    %[[A:[a-z0-9]+]]: tensor<16x16xf32>
// CHECK:         attn.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%[[A]] : tensor<16x16xf32>) {normalizer = #attn.softmax, scale = 1.000000e+00 : f32}
// CHECK-LABEL: func.func @bool_tensor(
// CHECK-SAME:    %[[B:[a-z0-9]+]]: tensor<2x1x16x16xi1>
// CHECK:         attn.attention %{{.*}}, %{{.*}}, %{{.*}} mask(%[[B]] : tensor<2x1x16x16xi1>) {normalizer = #attn.softmax, scale = 2.500000e-01 : f32}
// CHECK-LABEL: func.func @finite_fill(
// CHECK-NOT:     attn.attention
func.func @window_index(%q: tensor<2x4x16x16xf32>, %k: tensor<2x4x16x16xf32>, %v: tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %quarter = arith.constant 0.25 : f32
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<2x4x16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#mq, #mk, #ms], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%z : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %m = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<2x4x16x16xf32>) outs(%e : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 2 : index
    %j = linalg.index 3 : index
    %d = arith.subi %i, %j : index
    %c = arith.cmpi ule, %d, %c3 : index
    %sx = arith.mulf %x, %quarter : f32
    %y = arith.select %c, %sx, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%m : tensor<2x4x16x16xf32>) outs(%e : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  // expected-remark @below {{raised attention: linalg.softmax, mask from the indices (a constant), scale 0.25}}
  %o = linalg.generic {indexing_maps = [#mp, #mv, #mo], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%z : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  return %o : tensor<2x4x16x16xf32>
}

func.func @additive_tensor(%q: tensor<2x4x16x16xf32>, %k: tensor<2x4x16x16xf32>, %v: tensor<2x4x16x16xf32>, %am: tensor<16x16xf32>) -> tensor<2x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %quarter = arith.constant 0.25 : f32
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<2x4x16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#mq, #mk, #ms], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%z : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %m = linalg.generic {indexing_maps = [#id4, #lqlk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %am : tensor<2x4x16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %t: f32, %o: f32):
    %y = arith.addf %x, %t : f32
    linalg.yield %y : f32
  } -> tensor<2x4x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%m : tensor<2x4x16x16xf32>) outs(%e : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  // expected-remark @below {{raised attention: linalg.softmax, additive mask tensor, scale 1}}
  %o = linalg.generic {indexing_maps = [#mp, #mv, #mo], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%z : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  return %o : tensor<2x4x16x16xf32>
}

func.func @bool_tensor(%q: tensor<2x4x16x16xf32>, %k: tensor<2x4x16x16xf32>, %v: tensor<2x4x16x16xf32>, %bm: tensor<2x1x16x16xi1>) -> tensor<2x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %quarter = arith.constant 0.25 : f32
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<2x4x16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#mq, #mk, #ms], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%z : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %m = linalg.generic {indexing_maps = [#id4, #b1, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %bm : tensor<2x4x16x16xf32>, tensor<2x1x16x16xi1>) outs(%e : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %t: i1, %o: f32):
    %sx = arith.mulf %x, %quarter : f32
    %y = arith.select %t, %sx, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<2x4x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%m : tensor<2x4x16x16xf32>) outs(%e : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  // expected-remark @below {{raised attention: linalg.softmax, boolean mask tensor, scale 0.25}}
  %o = linalg.generic {indexing_maps = [#mp, #mv, #mo], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%z : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  return %o : tensor<2x4x16x16xf32>
}

func.func @finite_fill(%q: tensor<2x4x16x16xf32>, %k: tensor<2x4x16x16xf32>, %v: tensor<2x4x16x16xf32>, %bm: tensor<2x1x16x16xi1>) -> tensor<2x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %quarter = arith.constant 0.25 : f32
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<2x4x16x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %s = linalg.generic {indexing_maps = [#mq, #mk, #ms], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%z : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  %m = linalg.generic {indexing_maps = [#id4, #b1, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %bm : tensor<2x4x16x16xf32>, tensor<2x1x16x16xi1>) outs(%e : tensor<2x4x16x16xf32>) {
  ^bb0(%x: f32, %t: i1, %o: f32):
    %big = arith.constant -1.0e+09 : f32
    %y = arith.select %t, %x, %big : f32
    linalg.yield %y : f32
  } -> tensor<2x4x16x16xf32>
  %p = linalg.softmax dimension(3) ins(%m : tensor<2x4x16x16xf32>) outs(%e : tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  // expected-remark @below {{not raised to attn.attention: the masked scores are filled with -1e+09, not -inf (rows with no allowed key would differ)}}
  %o = linalg.generic {indexing_maps = [#mp, #mv, #mo], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32>) outs(%z : tensor<2x4x16x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %mm = arith.mulf %a, %b : f32
    %r = arith.addf %c, %mm : f32
    linalg.yield %r : f32
  } -> tensor<2x4x16x16xf32>
  return %o : tensor<2x4x16x16xf32>
}
