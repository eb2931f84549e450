// RUN: attn-opt %s --pass-pipeline='builtin.module(func.func(attn-parallelize-linalg{chunks=4}))' | FileCheck %s

/// The leading parallel loops (before the reduction) become an scf.forall:
/// size 1 for the outer ones, 64 / 4 = 16 for the last; the reduction and
/// the innermost loop stay in the tiled generic.
// CHECK-LABEL: func @contraction
// CHECK: scf.forall (%[[B:.+]], %[[H:.+]], %[[I:.+]]) = (0, 0, 0) to (2, 3, 64) step (1, 1, 16) shared_outs(%[[OUT:.+]] = %{{.*}}) -> (tensor<2x3x64x32xf32>)
// CHECK:   %[[LHS:.+]] = tensor.extract_slice %{{.*}}[%[[B]], %[[H]], %[[I]], 0] [1, 1, 16, 8] [1, 1, 1, 1]
// CHECK:   %[[ACC:.+]] = tensor.extract_slice %[[OUT]][%[[B]], %[[H]], %[[I]], 0] [1, 1, 16, 32] [1, 1, 1, 1]
// CHECK:   %[[TILE:.+]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[LHS]], %{{.*}} : tensor<1x1x16x8xf32>, tensor<1x1x8x32xf32>) outs(%[[ACC]] : tensor<1x1x16x32xf32>)
// CHECK:   scf.forall.in_parallel
// CHECK:     tensor.parallel_insert_slice %[[TILE]] into %[[OUT]][%[[B]], %[[H]], %[[I]], 0] [1, 1, 16, 32]
#lhs = affine_map<(b, h, i, d, j) -> (b, h, i, d)>
#rhs = affine_map<(b, h, i, d, j) -> (b, h, d, j)>
#out = affine_map<(b, h, i, d, j) -> (b, h, i, j)>
func.func @contraction(%a: tensor<2x3x64x8xf32>, %b: tensor<2x3x8x32xf32>,
                       %c: tensor<2x3x64x32xf32>) -> tensor<2x3x64x32xf32> {
  %0 = linalg.generic {indexing_maps = [#lhs, #rhs, #out],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%a, %b : tensor<2x3x64x8xf32>, tensor<2x3x8x32xf32>) outs(%c : tensor<2x3x64x32xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x3x64x32xf32>
  return %0 : tensor<2x3x64x32xf32>
}

/// A 1-D op has no outer loop to spread over threads and is left alone.
// CHECK-LABEL: func @one_dim
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
func.func @one_dim(%a: tensor<64xf32>) -> tensor<64xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%a : tensor<64xf32>) outs(%a : tensor<64xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  } -> tensor<64xf32>
  return %0 : tensor<64xf32>
}
