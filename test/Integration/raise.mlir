// Attention written as linalg ops (attn-raise's forms), raised and
// compiled, against the same graph compiled without raising (attn-run
// --check compares with the reference pipeline, which does not raise: the
// graph's own linalg ops lowered to loops). Remarks say what was raised.
// DEFINE: %{fn} =
// DEFINE: %{run} = attn-run %s --entry %{fn} --random-inputs --seed 3 --check --remarks --pipeline="func.func(attn-raise),attn-lower-to-llvm-pipeline{vector-width=8 vector-registers=16}" 2>&1 | FileCheck %s --check-prefix=%{fn}
// REDEFINE: %{fn} = named_3d
// RUN: %{run}
// named_3d: remark: raised attention: linalg.softmax, scale 0.125, K transposed, [B*H, L, D] operands
// named_3d: check result0: {{.*}} ok
// REDEFINE: %{fn} = generic_4d
// RUN: %{run}
// generic_4d: remark: raised attention: softmax decomposed into max, exp, sum, div, scale 0.25
// generic_4d: check result0: {{.*}} ok
// REDEFINE: %{fn} = relu
// RUN: %{run}
// relu: remark: raised attention: relu times Lk^-alpha (3 elementwise ops), scale 0.125, K transposed, [B*H, L, D] operands
// relu: check result0: {{.*}} ok
// REDEFINE: %{fn} = linear_quadratic
// RUN: %{run}
// linear_quadratic: remark: raised attention: linear attention (elu + 1 features) in quadratic form
// linear_quadratic: check result0: {{.*}} ok
// REDEFINE: %{fn} = relu6
// RUN: %{run}
// relu6: remark: raised attention: relu6, scale 1
// relu6: check result0: {{.*}} ok
// REDEFINE: %{fn} = gqa
// RUN: %{run}
// gqa: remark: raised attention: linalg.softmax, scale 0.25, grouped heads (2 query heads per key/value head), Q scaled
// gqa: check result0: {{.*}} ok

// torch-mlir's form: [B*H, L, D] batch_matmul with K transposed, the scores
// multiplied by a constant, linalg.softmax, batch_matmul.
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
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x128x128xf32>, tensor<8x128x64xf32>) outs(%oz : tensor<8x128x64xf32>) -> tensor<8x128x64xf32>
  return %o : tensor<8x128x64xf32>
}

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
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %v : tensor<2x4x37x50xf32>, tensor<2x4x50x8xf32>) outs(%oz : tensor<2x4x37x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<2x4x37x8xf32>
  return %o : tensor<2x4x37x8xf32>
}

// ReLU attention: relu of the scaled scores times 1/8 = 64^-0.5 (Lk = 64).
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
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x64x64xf32>, tensor<4x64x32xf32>) outs(%oz : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  return %o : tensor<4x64x32xf32>
}

// Grouped-query attention as exporters write it: K and V heads broadcast
// ([B, 2, L, D] -> [B, 2, 2, L, D] -> [B, 4, L, D]); the scale on Q.
#q4 = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k4 = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s4 = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p4 = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v4 = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o4 = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#id4 = affine_map<(b, h, i, d) -> (b, h, i, d)>
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
  %o = linalg.generic {indexing_maps = [#p4, #v4, #o4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%p, %vv : tensor<1x4x33x33xf32>, tensor<1x4x33x16xf32>) outs(%oz : tensor<1x4x33x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %c, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x4x33x16xf32>
  return %o : tensor<1x4x33x16xf32>
}

// Linear attention written in its quadratic form: elu(x) + 1 features of Q
// and K, their products normalized by the row sum. Raised to the kernel
// normalizer (no scale), which attn-reassociate then makes linear.
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row3 = affine_map<(d0, d1, d2) -> (d0, d1)>
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
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x64x64xf32>, tensor<4x64x32xf32>) outs(%oz : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  return %o : tensor<4x64x32xf32>
}

// relu6 attention (a clamp of the scores to [0, 6]), no factor: alpha 0.
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
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x64x64xf32>, tensor<4x64x32xf32>) outs(%oz : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  return %o : tensor<4x64x32xf32>
}
