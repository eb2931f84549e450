// A pre-norm Transformer encoder block written as linalg ops, the way a
// framework exporter spells it: layer norm, Q/K/V projections, heads split
// by expand_shape + transpose, causal scaled dot-product attention (the
// mask from linalg.index comparisons) with linalg.softmax, heads merged, output projection, residual, layer norm,
// a GELU MLP, residual. L = 64 tokens, E = 32, H = 4 heads of D = 8.
//
//   build/bin/attn-run examples/graphs/transformer_block.mlir --random-inputs --check --remarks
//
// attn-lower-to-llvm-pipeline raises the attention (remark) and compiles
// the rest of the graph; --check compares with the graph compiled without
// raising.

#id2 = affine_map<(i, e) -> (i, e)>
#row2 = affine_map<(i, e) -> (i)>
#col2 = affine_map<(i, e) -> (e)>

// Layer norm over E (no affine parameters), eps = 1e-5.
func.func private @layer_norm(%x: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 32.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %r0 = tensor.empty() : tensor<64xf32>
  %rz = linalg.fill ins(%zero : f32) outs(%r0 : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x32xf32>) outs(%rz : tensor<64xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %mean = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%sum : tensor<64xf32>) outs(%r0 : tensor<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.divf %a, %n : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  %sq = linalg.generic {indexing_maps = [#id2, #row2, #row2], iterator_types = ["parallel", "reduction"]} ins(%x, %mean : tensor<64x32xf32>, tensor<64xf32>) outs(%rz : tensor<64xf32>) {
  ^bb0(%a: f32, %m: f32, %acc: f32):
    %d = arith.subf %a, %m : f32
    %d2 = arith.mulf %d, %d : f32
    %s = arith.addf %d2, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %e0 = tensor.empty() : tensor<64x32xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row2, #row2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %mean, %sq : tensor<64x32xf32>, tensor<64xf32>, tensor<64xf32>) outs(%e0 : tensor<64x32xf32>) {
  ^bb0(%a: f32, %m: f32, %s: f32, %o: f32):
    %var = arith.divf %s, %n : f32
    %ve = arith.addf %var, %eps : f32
    %r = math.rsqrt %ve : f32
    %d = arith.subf %a, %m : f32
    %v = arith.mulf %d, %r : f32
    linalg.yield %v : f32
  } -> tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}

func.func private @project(%x: tensor<64x32xf32>, %w: tensor<32x32xf32>) -> tensor<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = linalg.matmul ins(%x, %w : tensor<64x32xf32>, tensor<32x32xf32>) outs(%z : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}

// [64, 32] -> [4, 64, 8]: split E into heads, heads first.
func.func private @split_heads(%x: tensor<64x32xf32>) -> tensor<4x64x8xf32> {
  %h = tensor.expand_shape %x [[0], [1, 2]] output_shape [64, 4, 8] : tensor<64x32xf32> into tensor<64x4x8xf32>
  %e = tensor.empty() : tensor<4x64x8xf32>
  %t = linalg.transpose ins(%h : tensor<64x4x8xf32>) outs(%e : tensor<4x64x8xf32>) permutation = [1, 0, 2]
  return %t : tensor<4x64x8xf32>
}

func.func private @add(%a: tensor<64x32xf32>, %b: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %e = tensor.empty() : tensor<64x32xf32>
  %y = linalg.add ins(%a, %b : tensor<64x32xf32>, tensor<64x32xf32>) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}

func.func @transformer_block(%x: tensor<64x32xf32>, %wq: tensor<32x32xf32>, %wk: tensor<32x32xf32>, %wv: tensor<32x32xf32>, %wo: tensor<32x32xf32>, %w1: tensor<32x128xf32>, %w2: tensor<128x32xf32>) -> tensor<64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.353553385 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.707106769 : f32

  // Attention.
  %ln1 = func.call @layer_norm(%x) : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %q2 = func.call @project(%ln1, %wq) : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  %k2 = func.call @project(%ln1, %wk) : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  %v2 = func.call @project(%ln1, %wv) : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  %q = func.call @split_heads(%q2) : (tensor<64x32xf32>) -> tensor<4x64x8xf32>
  %k = func.call @split_heads(%k2) : (tensor<64x32xf32>) -> tensor<4x64x8xf32>
  %v = func.call @split_heads(%v2) : (tensor<64x32xf32>) -> tensor<4x64x8xf32>
  %kt0 = tensor.empty() : tensor<4x8x64xf32>
  %kt = linalg.transpose ins(%k : tensor<4x64x8xf32>) outs(%kt0 : tensor<4x8x64xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<4x64x64xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x64x8xf32>, tensor<4x8x64xf32>) outs(%sz : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = arith.mulf %a, %scale : f32
    linalg.yield %y : f32
  } -> tensor<4x64x64xf32>
  // The causal mask, from the loop indices.
  %ninf = arith.constant 0xFF800000 : f32
  %sm = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ss : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %keep = arith.cmpi sle, %j, %i : index
    %y = arith.select %keep, %a, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<4x64x64xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %a0 = tensor.empty() : tensor<4x64x8xf32>
  %az = linalg.fill ins(%zero : f32) outs(%a0 : tensor<4x64x8xf32>) -> tensor<4x64x8xf32>
  %att = linalg.batch_matmul ins(%p, %v : tensor<4x64x64xf32>, tensor<4x64x8xf32>) outs(%az : tensor<4x64x8xf32>) -> tensor<4x64x8xf32>
  %m0 = tensor.empty() : tensor<64x4x8xf32>
  %merged = linalg.transpose ins(%att : tensor<4x64x8xf32>) outs(%m0 : tensor<64x4x8xf32>) permutation = [1, 0, 2]
  %o2 = tensor.collapse_shape %merged [[0], [1, 2]] : tensor<64x4x8xf32> into tensor<64x32xf32>
  %proj = func.call @project(%o2, %wo) : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  %x1 = func.call @add(%x, %proj) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>

  // MLP with the exact GELU.
  %ln2 = func.call @layer_norm(%x1) : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %h0 = tensor.empty() : tensor<64x128xf32>
  %hz = linalg.fill ins(%zero : f32) outs(%h0 : tensor<64x128xf32>) -> tensor<64x128xf32>
  %h = linalg.matmul ins(%ln2, %w1 : tensor<64x32xf32>, tensor<32x128xf32>) outs(%hz : tensor<64x128xf32>) -> tensor<64x128xf32>
  %g = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<64x128xf32>) outs(%h0 : tensor<64x128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %u = arith.mulf %a, %rsqrt2 : f32
    %erf = math.erf %u : f32
    %t = arith.addf %erf, %one : f32
    %ah = arith.mulf %a, %half : f32
    %y = arith.mulf %ah, %t : f32
    linalg.yield %y : f32
  } -> tensor<64x128xf32>
  %y0 = tensor.empty() : tensor<64x32xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%y0 : tensor<64x32xf32>) -> tensor<64x32xf32>
  %y = linalg.matmul ins(%g, %w2 : tensor<64x128xf32>, tensor<128x32xf32>) outs(%yz : tensor<64x32xf32>) -> tensor<64x32xf32>
  %out = func.call @add(%x1, %y) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  return %out : tensor<64x32xf32>
}
