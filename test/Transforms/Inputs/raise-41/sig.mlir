func.func @sigmoid_attn(%q: tensor<8x128x64xf32>, %k: tensor<8x128x64xf32>, %v: tensor<8x128x64xf32>) -> tensor<8x128x64xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %scale = arith.constant 0.125 : f32
  %et = tensor.empty() : tensor<8x64x128xf32>
  %kt = linalg.transpose ins(%k : tensor<8x128x64xf32>) outs(%et : tensor<8x64x128xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x128x128xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<8x128x64xf32>, tensor<8x64x128xf32>) outs(%zs : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<8x128x128xf32>) outs(%es : tensor<8x128x128xf32>) {
  ^bb0(%x: f32, %o: f32):
    %xs = arith.mulf %x, %scale : f32
    %n = arith.negf %xs : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %y = arith.divf %one, %d : f32
    linalg.yield %y : f32
  } -> tensor<8x128x128xf32>
  %eo = tensor.empty() : tensor<8x128x64xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<8x128x64xf32>) -> tensor<8x128x64xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<8x128x128xf32>, tensor<8x128x64xf32>) outs(%zo : tensor<8x128x64xf32>) -> tensor<8x128x64xf32>
  return %o : tensor<8x128x64xf32>
}
