// RUN: attn-opt %s --attn-project-lowrank --verify-diagnostics | FileCheck %s

/// Keys and values projected by E and F (contractions over the key position,
/// in f32), then dense softmax attention over the projected rows with the
/// op's default scale 1/sqrt(16); grouped-query heads carry over.
// CHECK-DAG: #[[PROJ:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d2, d3)>
// CHECK-DAG: #[[X:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-LABEL: func @gqa
// CHECK-SAME: (%[[Q:.+]]: tensor<2x4x77x16xf32>, %[[K:.+]]: tensor<2x2x77x16xf32>, %[[V:.+]]: tensor<2x2x77x8xf32>, %[[E:.+]]: tensor<12x77xf32>, %[[F:.+]]: tensor<12x77xf32>)
// CHECK: %[[ZK:.+]] = linalg.fill {{.*}} -> tensor<2x2x12x16xf32>
// CHECK: %[[KP:.+]] = linalg.generic {indexing_maps = [#[[PROJ]], #[[X]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%[[E]], %[[K]] : tensor<12x77xf32>, tensor<2x2x77x16xf32>) outs(%[[ZK]] : tensor<2x2x12x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[VP:.+]] = linalg.generic {{.*}} ins(%[[F]], %[[V]] : tensor<12x77xf32>, tensor<2x2x77x8xf32>) outs({{.*}} : tensor<2x2x12x8xf32>)
// CHECK: %[[O:.+]] = attn.attention %[[Q]], %[[KP]], %[[VP]] {normalizer = #attn.softmax, scale = 2.500000e-01 : f32} : tensor<2x4x77x16xf32>, tensor<2x2x12x16xf32>, tensor<2x2x12x8xf32> -> tensor<2x4x77x8xf32>
// CHECK: return %[[O]]
func.func @gqa(%q: tensor<2x4x77x16xf32>, %k: tensor<2x2x77x16xf32>, %v: tensor<2x2x77x8xf32>, %e: tensor<12x77xf32>, %f: tensor<12x77xf32>) -> tensor<2x4x77x8xf32> {
  // expected-remark @+1 {{attn-project-lowrank: keys and values projected to 12 rows (tiled contractions), then dense softmax attention over them}}
  %0 = attn.lowrank_attention %q, %k, %v, %e, %f : tensor<2x4x77x16xf32>, tensor<2x2x77x16xf32>, tensor<2x2x77x8xf32>, tensor<12x77xf32>, tensor<12x77xf32> -> tensor<2x4x77x8xf32>
  return %0 : tensor<2x4x77x8xf32>
}

/// bf16: the projections compute in f32 (extended inside their bodies), Q is
/// extended to f32, the attention runs in f32 and its result is truncated
/// back; an explicit scale is kept.
// CHECK-LABEL: func @bf16
// CHECK: %[[KP:.+]] = linalg.generic {{.*}} outs({{.*}} : tensor<1x2x8x8xf32>)
// CHECK: arith.extf {{.*}} : bf16 to f32
// CHECK: %[[VP:.+]] = linalg.generic {{.*}} outs({{.*}} : tensor<1x2x8x8xf32>)
// CHECK: %[[QF:.+]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<1x2x30x8xbf16>) outs({{.*}} : tensor<1x2x30x8xf32>)
// CHECK: %[[O:.+]] = attn.attention %[[QF]], %[[KP]], %[[VP]] {normalizer = #attn.softmax, scale = 5.000000e-01 : f32} : tensor<1x2x30x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32> -> tensor<1x2x30x8xf32>
// CHECK: %[[R:.+]] = linalg.generic {{.*}} ins(%[[O]] : tensor<1x2x30x8xf32>) outs({{.*}} : tensor<1x2x30x8xbf16>)
// CHECK: arith.truncf
// CHECK: return %[[R]]
func.func @bf16(%q: tensor<1x2x30x8xbf16>, %k: tensor<1x2x30x8xbf16>, %v: tensor<1x2x30x8xbf16>, %e: tensor<8x30xbf16>, %f: tensor<8x30xbf16>) -> tensor<1x2x30x8xbf16> {
  // expected-remark @+1 {{projected to 8 rows}}
  %0 = attn.lowrank_attention %q, %k, %v, %e, %f {scale = 0.5 : f32} : tensor<1x2x30x8xbf16>, tensor<1x2x30x8xbf16>, tensor<1x2x30x8xbf16>, tensor<8x30xbf16>, tensor<8x30xbf16> -> tensor<1x2x30x8xbf16>
  return %0 : tensor<1x2x30x8xbf16>
}

/// Other ops are left alone.
// CHECK-LABEL: func @other
// CHECK: attn.attention
// CHECK-NOT: linalg.generic
func.func @other(%q: tensor<1x1x16x8xf32>) -> tensor<1x1x16x8xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax} : tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32> -> tensor<1x1x16x8xf32>
  return %0 : tensor<1x1x16x8xf32>
}
