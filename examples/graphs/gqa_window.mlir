// Grouped-query attention as a linalg graph (8 query heads on 2 key/value
// heads, broadcast as exporters write it; B = 1, L = 300, D = 64) with a
// sliding-window mask: in @gqa_window the mask tensor is computed in the
// graph from the indices (|i - j| <= 64, added as 0 / -inf); in
// @gqa_mask_tensor it is an argument (a boolean [L, L] tensor: any mask
// known only at run time). attn-lower-to-llvm-pipeline raises both: the
// first mask is evaluated at compile time and recognized as
// #attn.window<before = 64, after = 64>, so attn-block-sparse skips the
// blocks outside the band; the second is classified per block at run time.
//
//   build/bin/attn-run examples/graphs/gqa_window.mlir --entry gqa_window --random-inputs --check --remarks

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#lqlk = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#q = affine_map<(b, h, i, j, d) -> (b, h, i, d)>
#k = affine_map<(b, h, i, j, d) -> (b, h, j, d)>
#s = affine_map<(b, h, i, j, d) -> (b, h, i, j)>
#p = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
#v = affine_map<(b, h, i, d, j) -> (b, h, j, d)>
#o = affine_map<(b, h, i, d, j) -> (b, h, i, d)>

func.func @gqa_window(%query: tensor<1x8x300x64xf32>, %key: tensor<1x2x300x64xf32>, %value: tensor<1x2x300x64xf32>) -> tensor<1x8x300x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.125 : f32
  %w = arith.constant 64 : index
  // K and V heads broadcast to the query heads.
  %e5 = tensor.empty() : tensor<1x2x4x300x64xf32>
  %kb = linalg.broadcast ins(%key : tensor<1x2x300x64xf32>) outs(%e5 : tensor<1x2x4x300x64xf32>) dimensions = [2]
  %k = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x4x300x64xf32> into tensor<1x8x300x64xf32>
  %vb = linalg.broadcast ins(%value : tensor<1x2x300x64xf32>) outs(%e5 : tensor<1x2x4x300x64xf32>) dimensions = [2]
  %v = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x4x300x64xf32> into tensor<1x8x300x64xf32>
  // The window mask, 0 inside the band and -inf outside.
  %em = tensor.empty() : tensor<300x300xf32>
  %mask = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%em : tensor<300x300xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %lo = arith.subi %i, %w : index
    %hi = arith.addi %i, %w : index
    %a = arith.cmpi sge, %j, %lo : index
    %b = arith.cmpi sle, %j, %hi : index
    %in = arith.andi %a, %b : i1
    %y = arith.select %in, %zero, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<300x300xf32>
  // Scores, scaled and masked.
  %es = tensor.empty() : tensor<1x8x300x300xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x8x300x300xf32>) -> tensor<1x8x300x300xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%query, %k : tensor<1x8x300x64xf32>, tensor<1x8x300x64xf32>) outs(%sz : tensor<1x8x300x300xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x300x300xf32>
  %sm = linalg.generic {indexing_maps = [#id4, #lqlk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<1x8x300x300xf32>, tensor<300x300xf32>) outs(%es : tensor<1x8x300x300xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
    %xs = arith.mulf %x, %scale : f32
    %y = arith.addf %xs, %m : f32
    linalg.yield %y : f32
  } -> tensor<1x8x300x300xf32>
  %pr = linalg.softmax dimension(3) ins(%sm : tensor<1x8x300x300xf32>) outs(%es : tensor<1x8x300x300xf32>) -> tensor<1x8x300x300xf32>
  %eo = tensor.empty() : tensor<1x8x300x64xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x8x300x64xf32>) -> tensor<1x8x300x64xf32>
  %out = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%pr, %v : tensor<1x8x300x300xf32>, tensor<1x8x300x64xf32>) outs(%oz : tensor<1x8x300x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x300x64xf32>
  return %out : tensor<1x8x300x64xf32>
}

func.func @gqa_mask_tensor(%query: tensor<1x8x300x64xf32>, %key: tensor<1x2x300x64xf32>, %value: tensor<1x2x300x64xf32>, %mask: tensor<300x300xi1>) -> tensor<1x8x300x64xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.125 : f32
  %e5 = tensor.empty() : tensor<1x2x4x300x64xf32>
  %kb = linalg.broadcast ins(%key : tensor<1x2x300x64xf32>) outs(%e5 : tensor<1x2x4x300x64xf32>) dimensions = [2]
  %k = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x4x300x64xf32> into tensor<1x8x300x64xf32>
  %vb = linalg.broadcast ins(%value : tensor<1x2x300x64xf32>) outs(%e5 : tensor<1x2x4x300x64xf32>) dimensions = [2]
  %v = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x4x300x64xf32> into tensor<1x8x300x64xf32>
  %es = tensor.empty() : tensor<1x8x300x300xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%es : tensor<1x8x300x300xf32>) -> tensor<1x8x300x300xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%query, %k : tensor<1x8x300x64xf32>, tensor<1x8x300x64xf32>) outs(%sz : tensor<1x8x300x300xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x300x300xf32>
  // masked_fill(~mask, -inf) after the scale.
  %sm = linalg.generic {indexing_maps = [#id4, #lqlk, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<1x8x300x300xf32>, tensor<300x300xi1>) outs(%es : tensor<1x8x300x300xf32>) {
  ^bb0(%x: f32, %m: i1, %out: f32):
    %xs = arith.mulf %x, %scale : f32
    %y = arith.select %m, %xs, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<1x8x300x300xf32>
  %pr = linalg.softmax dimension(3) ins(%sm : tensor<1x8x300x300xf32>) outs(%es : tensor<1x8x300x300xf32>) -> tensor<1x8x300x300xf32>
  %eo = tensor.empty() : tensor<1x8x300x64xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x8x300x64xf32>) -> tensor<1x8x300x64xf32>
  %out = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%pr, %v : tensor<1x8x300x300xf32>, tensor<1x8x300x64xf32>) outs(%oz : tensor<1x8x300x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<1x8x300x64xf32>
  return %out : tensor<1x8x300x64xf32>
}
