// RUN: attn-opt %s | FileCheck %s
// RUN: attn-opt %s | attn-opt | FileCheck %s

/// The score and mask regions of attn.attention (FlexAttention's score_mod
/// and mask_mod) round-trip, with captured tensors as trailing arguments.

// CHECK-LABEL: func.func @prefix_lm
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax}
// CHECK-SAME: mask_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: index, %{{.*}}: index, %[[Q:.*]]: index, %[[K:.*]]: index):
// CHECK: arith.cmpi ult, %[[K]]
// CHECK: attn.yield %{{.*}} : i1
func.func @prefix_lm(%q: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c8 = arith.constant 8 : index
        %p = arith.cmpi ult, %j, %c8 : index
        %c = arith.cmpi ule, %j, %i : index
        %ok = arith.ori %p, %c : i1
        attn.yield %ok : i1
      }
  return %o : tensor<1x2x40x16xf32>
}

// CHECK-LABEL: func.func @documents_and_bias
// CHECK: captures(%{{.*}}, %{{.*}} : tensor<2x40xi32>, tensor<2x79xf32>)
// CHECK-SAME: mask_mod {
// CHECK: tensor.extract
// CHECK: } score_mod {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: tensor<2x40xi32>, %{{.*}}: tensor<2x79xf32>):
// CHECK: attn.yield %{{.*}} : f32
func.func @documents_and_bias(%q: tensor<2x2x40x16xf32>, %doc: tensor<2x40xi32>,
                              %table: tensor<2x79xf32>) -> tensor<2x2x40x16xf32> {
  %o = attn.attention %q, %q, %q captures(%doc, %table : tensor<2x40xi32>, tensor<2x79xf32>)
      {normalizer = #attn.pointwise<relu>, pattern = #attn.causal}
      : tensor<2x2x40x16xf32>, tensor<2x2x40x16xf32>, tensor<2x2x40x16xf32> -> tensor<2x2x40x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<2x40xi32>, %t: tensor<2x79xf32>):
        %x = tensor.extract %d[%b, %i] : tensor<2x40xi32>
        %y = tensor.extract %d[%b, %j] : tensor<2x40xi32>
        %same = arith.cmpi eq, %x, %y : i32
        attn.yield %same : i1
      }
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %d: tensor<2x40xi32>, %t: tensor<2x79xf32>):
        %c39 = arith.constant 39 : index
        %r = arith.subi %i, %j : index
        %at = arith.addi %r, %c39 : index
        %bias = tensor.extract %t[%h, %at] : tensor<2x79xf32>
        %y = arith.addf %s, %bias : f32
        attn.yield %y : f32
      }
  return %o : tensor<2x2x40x16xf32>
}
