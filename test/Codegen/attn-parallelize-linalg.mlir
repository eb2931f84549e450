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

/// Dynamic sizes: the chunked loop's tile size is computed at run time,
/// max(1, ceil(n / 4)) (a zero tile size would mean "not tiled"), and ops
/// under an scf.if (the run-time checks' guard) count as outermost; ops in
/// loops do not.
// CHECK-LABEL: func @dynamic
// CHECK-SAME: (%[[A:.+]]: tensor<?x3x?x8xf32>, %[[C:.+]]: i1)
// CHECK: scf.if %[[C]]
// CHECK:   %[[N:.+]] = tensor.dim %[[A]], %c2
// CHECK:   %[[T:.+]] = arith.ceildivui %[[N]], %c4
// CHECK:   %[[STEP:.+]] = arith.maxui %[[T]], %c1
// CHECK:   scf.forall (%{{.+}}, %{{.+}}, %{{.+}}) = (0, 0, 0) to (%{{.+}}, 3, %{{.+}}) step (1, 1, %[[STEP]])
// CHECK: scf.for
// CHECK-NOT: scf.forall
// CHECK:   linalg.generic
func.func @dynamic(%a: tensor<?x3x?x8xf32>, %c: i1) -> (tensor<?x3x?x8xf32>, tensor<?x3x?x8xf32>) {
  %0 = scf.if %c -> (tensor<?x3x?x8xf32>) {
    %1 = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, i, d)>],
                         iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%a : tensor<?x3x?x8xf32>) outs(%a : tensor<?x3x?x8xf32>) {
    ^bb0(%x: f32, %y: f32):
      %e = math.exp %x : f32
      linalg.yield %e : f32
    } -> tensor<?x3x?x8xf32>
    scf.yield %1 : tensor<?x3x?x8xf32>
  } else {
    scf.yield %a : tensor<?x3x?x8xf32>
  }
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %a) -> (tensor<?x3x?x8xf32>) {
    %2 = linalg.generic {indexing_maps = [affine_map<(b, h, i, d) -> (b, h, i, d)>, affine_map<(b, h, i, d) -> (b, h, i, d)>],
                         iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
        ins(%acc : tensor<?x3x?x8xf32>) outs(%acc : tensor<?x3x?x8xf32>) {
    ^bb0(%x: f32, %y: f32):
      %e = math.exp %x : f32
      linalg.yield %e : f32
    } -> tensor<?x3x?x8xf32>
    scf.yield %2 : tensor<?x3x?x8xf32>
  }
  return %0, %r : tensor<?x3x?x8xf32>, tensor<?x3x?x8xf32>
}
