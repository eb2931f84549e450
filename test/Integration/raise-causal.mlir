// A causal mask written with linalg.index, raised by the default pipeline
// after elementwise fusion merged it with the scale (select(j <= i, s * c,
// -inf)) or as an additive mask tensor; both match the unraised graph.
// RUN: attn-run %s --entry causal_select --random-inputs --seed 4 --check --remarks 2>&1 | FileCheck %s --check-prefix=SELECT
// SELECT: remark: raised attention: linalg.softmax, causal mask from the indices, scale 0.125
// SELECT: check result0: {{.*}} ok
// RUN: attn-run %s --entry causal_additive --random-inputs --seed 4 --check --remarks 2>&1 | FileCheck %s --check-prefix=ADD
// ADD: remark: raised attention: linalg.softmax, causal mask from the indices, scale 1
// ADD: check result0: {{.*}} ok

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @causal_select(%q: tensor<4x64x32xf32>, %kt: tensor<4x32x64xf32>, %v: tensor<4x64x32xf32>) -> tensor<4x64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.125 : f32
  %s0 = tensor.empty() : tensor<4x64x64xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x64x32xf32>, tensor<4x32x64xf32>) outs(%sz : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %ss = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %scale : f32
    linalg.yield %y : f32
  } -> tensor<4x64x64xf32>
  %m = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ss : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) {
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
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x64x64xf32>, tensor<4x64x32xf32>) outs(%oz : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  return %o : tensor<4x64x32xf32>
}

func.func @causal_additive(%q: tensor<4x64x32xf32>, %kt: tensor<4x32x64xf32>, %v: tensor<4x64x32xf32>) -> tensor<4x64x32xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.40282347E+38 : f32
  %s0 = tensor.empty() : tensor<4x64x64xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<4x64x32xf32>, tensor<4x32x64xf32>) outs(%sz : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %mask = linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%s0 : tensor<4x64x64xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %c = arith.cmpi sge, %i, %j : index
    %y = arith.select %c, %zero, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<4x64x64xf32>
  %m = linalg.generic {indexing_maps = [#id3, #id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<4x64x64xf32>, tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) {
  ^bb0(%x: f32, %a: f32, %o: f32):
    %y = arith.addf %x, %a : f32
    linalg.yield %y : f32
  } -> tensor<4x64x64xf32>
  %p = linalg.softmax dimension(2) ins(%m : tensor<4x64x64xf32>) outs(%s0 : tensor<4x64x64xf32>) -> tensor<4x64x64xf32>
  %o0 = tensor.empty() : tensor<4x64x32xf32>
  %oz = linalg.fill ins(%zero : f32) outs(%o0 : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  %o = linalg.batch_matmul ins(%p, %v : tensor<4x64x64xf32>, tensor<4x64x32xf32>) outs(%oz : tensor<4x64x32xf32>) -> tensor<4x64x32xf32>
  return %o : tensor<4x64x32xf32>
}
