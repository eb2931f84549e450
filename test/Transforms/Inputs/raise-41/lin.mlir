#id = affine_map<(b, i, d) -> (b, i, d)>
#row = affine_map<(b, i, d) -> (b, i)>
func.func @linear_quadratic(%q: tensor<8x128x64xf32>, %k: tensor<8x128x64xf32>, %v: tensor<8x128x64xf32>) -> tensor<8x128x64xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e3 = tensor.empty() : tensor<8x128x64xf32>
  %pq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q : tensor<8x128x64xf32>) outs(%e3 : tensor<8x128x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %p = arith.cmpf ogt, %x, %zero : f32
    %a = arith.addf %x, %one : f32
    %e = math.exp %x : f32
    %y = arith.select %p, %a, %e : f32
    linalg.yield %y : f32
  } -> tensor<8x128x64xf32>
  %pk = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%k : tensor<8x128x64xf32>) outs(%e3 : tensor<8x128x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %p = arith.cmpf ogt, %x, %zero : f32
    %a = arith.addf %x, %one : f32
    %e = math.exp %x : f32
    %y = arith.select %p, %a, %e : f32
    linalg.yield %y : f32
  } -> tensor<8x128x64xf32>
  %et = tensor.empty() : tensor<8x64x128xf32>
  %kt = linalg.transpose ins(%pk : tensor<8x128x64xf32>) outs(%et : tensor<8x64x128xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<8x128x128xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %a = linalg.batch_matmul ins(%pq, %kt : tensor<8x128x64xf32>, tensor<8x64x128xf32>) outs(%zs : tensor<8x128x128xf32>) -> tensor<8x128x128xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x128x64xf32>) -> tensor<8x128x64xf32>
  %num = linalg.batch_matmul ins(%a, %v : tensor<8x128x128xf32>, tensor<8x128x64xf32>) outs(%zo : tensor<8x128x64xf32>) -> tensor<8x128x64xf32>
  %er = tensor.empty() : tensor<8x128xf32>
  %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<8x128xf32>) -> tensor<8x128xf32>
  %den = linalg.reduce ins(%a : tensor<8x128x128xf32>) outs(%zr : tensor<8x128xf32>) dimensions = [2]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  %o = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%num, %den : tensor<8x128x64xf32>, tensor<8x128xf32>) outs(%e3 : tensor<8x128x64xf32>) {
  ^bb0(%n: f32, %d: f32, %o: f32):
    %y = arith.divf %n, %d : f32
    linalg.yield %y : f32
  } -> tensor<8x128x64xf32>
  return %o : tensor<8x128x64xf32>
}
