// A graph's multi-head attention with the heads split and merged in the
// graph (L = 77, E = 96, H = 3, causal mask from the indices), raised and
// compiled: the kernel reads the query, key and value through strided views
// of their projections and writes the merged [L, E] result directly (no
// transposed copies), checked against the graph compiled without raising.
// RUN: attn-run %s --random-inputs --seed 11 --check --remarks 2>&1 | FileCheck %s
// CHECK: remark: raised attention: linalg.softmax, causal mask from the indices
// CHECK: check result0: {{.*}} ok
// RUN: attn-opt %s --pass-pipeline="builtin.module(attn-lower-to-llvm-pipeline{vector-width=8})" --mlir-print-ir-after=attn-flash 2>&1 | FileCheck %s --check-prefix=VIEWS
// The output (allocated as [L, E]), the query, the key (K^T transposed
// back composes into one transpose) and the value: views, no copies.
// VIEWS-COUNT-4: memref.transpose {{.*}} (d0, d1, d2, d3) -> (d1, d2, d0, d3) : memref<77x3x1x32xf32> to memref<3x1x77x32xf32, strided<[32, 32, 96, 1]>>
// VIEWS-NOT: bufferization.to_buffer %transposed

func.func private @split_heads(%x: tensor<77x96xf32>) -> tensor<3x77x32xf32> {
  %h = tensor.expand_shape %x [[0], [1, 2]] output_shape [77, 3, 32] : tensor<77x96xf32> into tensor<77x3x32xf32>
  %e = tensor.empty() : tensor<3x77x32xf32>
  %t = linalg.transpose ins(%h : tensor<77x3x32xf32>) outs(%e : tensor<3x77x32xf32>) permutation = [1, 0, 2]
  return %t : tensor<3x77x32xf32>
}

func.func @attention(%q2: tensor<77x96xf32>, %k2: tensor<77x96xf32>, %v2: tensor<77x96xf32>) -> tensor<77x96xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.17677669529663687 : f32
  %q = func.call @split_heads(%q2) : (tensor<77x96xf32>) -> tensor<3x77x32xf32>
  %k = func.call @split_heads(%k2) : (tensor<77x96xf32>) -> tensor<3x77x32xf32>
  %v = func.call @split_heads(%v2) : (tensor<77x96xf32>) -> tensor<3x77x32xf32>
  %kt0 = tensor.empty() : tensor<3x32x77xf32>
  %kt = linalg.transpose ins(%k : tensor<3x77x32xf32>) outs(%kt0 : tensor<3x32x77xf32>) permutation = [0, 2, 1]
  %s0 = tensor.empty() : tensor<3x77x77xf32>
  %sz = linalg.fill ins(%zero : f32) outs(%s0 : tensor<3x77x77xf32>) -> tensor<3x77x77xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<3x77x32xf32>, tensor<3x32x77xf32>) outs(%sz : tensor<3x77x77xf32>) -> tensor<3x77x77xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<3x77x77xf32>) outs(%s0 : tensor<3x77x77xf32>) {
  ^bb0(%a: f32, %o: f32):
    %y = arith.mulf %a, %scale : f32
    linalg.yield %y : f32
  } -> tensor<3x77x77xf32>
  // The causal mask, from the loop indices.
  %ninf = arith.constant 0xFF800000 : f32
  %sm = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i, j)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ss : tensor<3x77x77xf32>) outs(%s0 : tensor<3x77x77xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %keep = arith.cmpi sle, %j, %i : index
    %y = arith.select %keep, %a, %ninf : f32
    linalg.yield %y : f32
  } -> tensor<3x77x77xf32>
  %p = linalg.softmax dimension(2) ins(%sm : tensor<3x77x77xf32>) outs(%s0 : tensor<3x77x77xf32>) -> tensor<3x77x77xf32>
  %a0 = tensor.empty() : tensor<3x77x32xf32>
  %az = linalg.fill ins(%zero : f32) outs(%a0 : tensor<3x77x32xf32>) -> tensor<3x77x32xf32>
  %att = linalg.batch_matmul ins(%p, %v : tensor<3x77x77xf32>, tensor<3x77x32xf32>) outs(%az : tensor<3x77x32xf32>) -> tensor<3x77x32xf32>
  %m0 = tensor.empty() : tensor<77x3x32xf32>
  %merged = linalg.transpose ins(%att : tensor<3x77x32xf32>) outs(%m0 : tensor<77x3x32xf32>) permutation = [1, 0, 2]
  %o2 = tensor.collapse_shape %merged [[0], [1, 2]] : tensor<77x3x32xf32> into tensor<77x96xf32>
  return %o2 : tensor<77x96xf32>
}
