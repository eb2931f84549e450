// RUN: attn-opt %s --attn-infer-mask="block-q=2 block-k=2" --split-input-file --verify-diagnostics | FileCheck %s

/// a causal mask
// CHECK-LABEL: func.func @causal
// CHECK-NOT: arith.constant
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax, pattern = #attn.causal}
func.func @causal(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {
  %m = arith.constant dense<[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]> : tensor<8x8xi1>
  // expected-remark @+1 {{attn-infer-mask: the constant mask is #attn.causal; 2 x 2 blocks: visiting 10 of 16 (6 full)}}
  %0 = attn.attention %q, %k, %k mask(%m : tensor<8x8xi1>) {normalizer = #attn.softmax} : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return %0 : tensor<1x1x8x4xf32>
}

// -----

/// causal with fewer queries than keys (aligned to the end)
// CHECK-LABEL: func.func @causal_lq_lk
// CHECK-NOT: arith.constant
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax, pattern = #attn.causal}
func.func @causal_lq_lk(%q: tensor<1x1x4x4xf32>, %k: tensor<1x1x8x4xf32>) -> tensor<1x1x4x4xf32> {
  %m = arith.constant dense<[[true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]]> : tensor<4x8xi1>
  // expected-remark @+1 {{attn-infer-mask: the constant mask is #attn.causal; 2 x 2 blocks: visiting 7 of 8 (5 full)}}
  %0 = attn.attention %q, %k, %k mask(%m : tensor<4x8xi1>) {normalizer = #attn.softmax} : tensor<1x1x4x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

/// a band: a window
// CHECK-LABEL: func.func @window
// CHECK-NOT: arith.constant
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax, pattern = #attn.window<before = 2, after = 1>}
func.func @window(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {
  %m = arith.constant dense<[[true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [false, true, true, true, true, false, false, false], [false, false, true, true, true, true, false, false], [false, false, false, true, true, true, true, false], [false, false, false, false, true, true, true, true], [false, false, false, false, false, true, true, true]]> : tensor<8x8xi1>
  // expected-remark @+1 {{attn-infer-mask: the constant mask is #attn.window<before = 2, after = 1>; 2 x 2 blocks: visiting 10 of 16 (4 full)}}
  %0 = attn.attention %q, %k, %k mask(%m : tensor<8x8xi1>) {normalizer = #attn.softmax} : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return %0 : tensor<1x1x8x4xf32>
}

// -----

/// every second key of a band: dilated
// CHECK-LABEL: func.func @dilated
// CHECK-NOT: arith.constant
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax, pattern = #attn.dilated<before = 4, after = 4, dilation = 2>}
func.func @dilated(%q: tensor<1x1x12x4xf32>, %k: tensor<1x1x12x4xf32>) -> tensor<1x1x12x4xf32> {
  %m = arith.constant dense<[[true, false, true, false, true, false, false, false, false, false, false, false], [false, true, false, true, false, true, false, false, false, false, false, false], [true, false, true, false, true, false, true, false, false, false, false, false], [false, true, false, true, false, true, false, true, false, false, false, false], [true, false, true, false, true, false, true, false, true, false, false, false], [false, true, false, true, false, true, false, true, false, true, false, false], [false, false, true, false, true, false, true, false, true, false, true, false], [false, false, false, true, false, true, false, true, false, true, false, true], [false, false, false, false, true, false, true, false, true, false, true, false], [false, false, false, false, false, true, false, true, false, true, false, true], [false, false, false, false, false, false, true, false, true, false, true, false], [false, false, false, false, false, false, false, true, false, true, false, true]]> : tensor<12x12xi1>
  // expected-remark @+1 {{attn-infer-mask: the constant mask is #attn.dilated<before = 4, after = 4, dilation = 2>; 2 x 2 blocks: visiting 24 of 36 (0 full)}}
  %0 = attn.attention %q, %k, %k mask(%m : tensor<12x12xi1>) {normalizer = #attn.softmax} : tensor<1x1x12x4xf32>, tensor<1x1x12x4xf32>, tensor<1x1x12x4xf32> -> tensor<1x1x12x4xf32>
  return %0 : tensor<1x1x12x4xf32>
}

// -----

/// global tokens
// CHECK-LABEL: func.func @global
// CHECK-NOT: arith.constant
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax, pattern = #attn.global<[0, 5]>}
func.func @global(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {
  %m = arith.constant dense<[[true, true, true, true, true, true, true, true], [true, false, false, false, false, true, false, false], [true, false, false, false, false, true, false, false], [true, false, false, false, false, true, false, false], [true, false, false, false, false, true, false, false], [true, true, true, true, true, true, true, true], [true, false, false, false, false, true, false, false], [true, false, false, false, false, true, false, false]]> : tensor<8x8xi1>
  // expected-remark @+1 {{attn-infer-mask: the constant mask is #attn.global<[0, 5]>; 2 x 2 blocks: visiting 12 of 16 (0 full)}}
  %0 = attn.attention %q, %k, %k mask(%m : tensor<8x8xi1>) {normalizer = #attn.softmax} : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return %0 : tensor<1x1x8x4xf32>
}

// -----

/// Longformer: a window and a global token
// CHECK-LABEL: func.func @window_global
// CHECK-NOT: arith.constant
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax, pattern = #attn.union<[#attn.window<before = 1, after = 1>, #attn.global<[0]>]>}
func.func @window_global(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {
  %m = arith.constant dense<[[true, true, true, true, true, true, true, true], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, false, true, true, true, false, false, false], [true, false, false, true, true, true, false, false], [true, false, false, false, true, true, true, false], [true, false, false, false, false, true, true, true], [true, false, false, false, false, false, true, true]]> : tensor<8x8xi1>
  // expected-remark @+1 {{attn-infer-mask: the constant mask is #attn.union<[#attn.window<before = 1, after = 1>, #attn.global<[0]>]>; 2 x 2 blocks: visiting 14 of 16 (4 full)}}
  %0 = attn.attention %q, %k, %k mask(%m : tensor<8x8xi1>) {normalizer = #attn.softmax} : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return %0 : tensor<1x1x8x4xf32>
}

// -----

/// the Sparse Transformer's causal strided head
// CHECK-LABEL: func.func @strided
// CHECK-NOT: arith.constant
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.strided<stride = 3>]>}
func.func @strided(%q: tensor<1x1x9x4xf32>, %k: tensor<1x1x9x4xf32>) -> tensor<1x1x9x4xf32> {
  %m = arith.constant dense<[[true, false, false, false, false, false, false, false, false], [false, true, false, false, false, false, false, false, false], [false, false, true, false, false, false, false, false, false], [true, false, false, true, false, false, false, false, false], [false, true, false, false, true, false, false, false, false], [false, false, true, false, false, true, false, false, false], [true, false, false, true, false, false, true, false, false], [false, true, false, false, true, false, false, true, false], [false, false, true, false, false, true, false, false, true]]> : tensor<9x9xi1>
  // expected-remark @+1 {{attn-infer-mask: the constant mask is #attn.intersect<[#attn.causal, #attn.strided<stride = 3>]>; 2 x 2 blocks: visiting 13 of 25 (1 full)}}
  %0 = attn.attention %q, %k, %k mask(%m : tensor<9x9xi1>) {normalizer = #attn.softmax} : tensor<1x1x9x4xf32>, tensor<1x1x9x4xf32>, tensor<1x1x9x4xf32> -> tensor<1x1x9x4xf32>
  return %0 : tensor<1x1x9x4xf32>
}

// -----

/// the Sparse Transformer's fixed pattern
// CHECK-LABEL: func.func @fixed
// CHECK-NOT: arith.constant
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax, pattern = #attn.fixed<stride = 4, c = 1>}
func.func @fixed(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {
  %m = arith.constant dense<[[true, true, true, true, false, false, false, true], [true, true, true, true, false, false, false, true], [true, true, true, true, false, false, false, true], [true, true, true, true, false, false, false, true], [false, false, false, true, true, true, true, true], [false, false, false, true, true, true, true, true], [false, false, false, true, true, true, true, true], [false, false, false, true, true, true, true, true]]> : tensor<8x8xi1>
  // expected-remark @+1 {{attn-infer-mask: the constant mask is #attn.fixed<stride = 4, c = 1>; 2 x 2 blocks: visiting 12 of 16 (8 full)}}
  %0 = attn.attention %q, %k, %k mask(%m : tensor<8x8xi1>) {normalizer = #attn.softmax} : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return %0 : tensor<1x1x8x4xf32>
}

// -----

/// uniform 2x2 blocks: #attn.block of size 2
// CHECK-LABEL: func.func @block
// CHECK-NOT: arith.constant
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax, pattern = #attn.block<size = 2, layout = ["1001", "0010", "0100", "1001"]>}
func.func @block(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32> {
  %m = arith.constant dense<[[true, true, false, false, false, false, true, true], [true, true, false, false, false, false, true, true], [false, false, false, false, true, true, false, false], [false, false, false, false, true, true, false, false], [false, false, true, true, false, false, false, false], [false, false, true, true, false, false, false, false], [true, true, false, false, false, false, true, true], [true, true, false, false, false, false, true, true]]> : tensor<8x8xi1>
  // expected-remark @+1 {{attn-infer-mask: the constant mask is #attn.block<size = 2, layout = ["1001", "0010", "0100", "1001"]>; 2 x 2 blocks: visiting 6 of 16 (6 full)}}
  %0 = attn.attention %q, %k, %k mask(%m : tensor<8x8xi1>) {normalizer = #attn.softmax} : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return %0 : tensor<1x1x8x4xf32>
}

// -----

/// an irregular mask: #attn.block of size 1 (element by element)
// CHECK-LABEL: func.func @irregular
// CHECK-NOT: arith.constant
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax, pattern = #attn.block<size = 1, layout = ["011110", "101111", "110111", "111011", "111101", "011110"]>}
func.func @irregular(%q: tensor<1x1x6x4xf32>, %k: tensor<1x1x6x4xf32>) -> tensor<1x1x6x4xf32> {
  %m = arith.constant dense<[[false, true, true, true, true, false], [true, false, true, true, true, true], [true, true, false, true, true, true], [true, true, true, false, true, true], [true, true, true, true, false, true], [false, true, true, true, true, false]]> : tensor<6x6xi1>
  // expected-remark @+1 {{attn-infer-mask: the constant mask is #attn.block<size = 1, layout = ["011110", "101111", "110111", "111011", "111101", "011110"]>; 2 x 2 blocks: visiting 9 of 9 (4 full)}}
  %0 = attn.attention %q, %k, %k mask(%m : tensor<6x6xi1>) {normalizer = #attn.softmax} : tensor<1x1x6x4xf32>, tensor<1x1x6x4xf32>, tensor<1x1x6x4xf32> -> tensor<1x1x6x4xf32>
  return %0 : tensor<1x1x6x4xf32>
}

// -----

/// heads with different masks: #attn.per_head
// CHECK-LABEL: func.func @per_head
// CHECK-NOT: arith.constant
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax, pattern = #attn.per_head<[#attn.causal, #attn.window<before = 1, after = 0>]>}
func.func @per_head(%q: tensor<1x2x8x4xf32>, %k: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %m = arith.constant dense<[[[[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [true, true, true, false, false, false, false, false], [true, true, true, true, false, false, false, false], [true, true, true, true, true, false, false, false], [true, true, true, true, true, true, false, false], [true, true, true, true, true, true, true, false], [true, true, true, true, true, true, true, true]], [[true, false, false, false, false, false, false, false], [true, true, false, false, false, false, false, false], [false, true, true, false, false, false, false, false], [false, false, true, true, false, false, false, false], [false, false, false, true, true, false, false, false], [false, false, false, false, true, true, false, false], [false, false, false, false, false, true, true, false], [false, false, false, false, false, false, true, true]]]]> : tensor<1x2x8x8xi1>
  // expected-remark @+1 {{attn-infer-mask: the constant mask is #attn.per_head<[#attn.causal, #attn.window<before = 1, after = 0>]>; 2 x 2 blocks: visiting 17 of 32 (6 full)}}
  %0 = attn.attention %q, %k, %k mask(%m : tensor<1x2x8x8xi1>) {normalizer = #attn.softmax} : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}

// -----

/// an additive mask of 0 and -inf, intersected with the op's pattern
// CHECK-LABEL: func.func @additive
// CHECK-NOT: arith.constant
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.window<before = 1, after = 1>, #attn.causal]>}
func.func @additive(%q: tensor<1x1x4x4xf32>, %k: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %m = arith.constant dense<[[0.0, 0xFF800000, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0, 0.0]]> : tensor<4x4xf32>
  // expected-remark @+1 {{attn-infer-mask: the constant mask is #attn.causal; 2 x 2 blocks: visiting 3 of 4 (0 full)}}
  %0 = attn.attention %q, %k, %k mask(%m : tensor<4x4xf32>) {normalizer = #attn.softmax, pattern = #attn.window<before = 1, after = 1>} : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

/// finite non-zero entries become a bias
// CHECK-LABEL: func.func @additive_values
// CHECK: %[[B:.*]] = arith.constant dense<{{\[\[\[\[}}5.000000e-01, 0.000000e+00
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} bias(%[[B]] : tensor<1x1x4x4xf32>) {normalizer = #attn.softmax, pattern = #attn.causal}
func.func @additive_values(%q: tensor<1x1x4x4xf32>, %k: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %m = arith.constant dense<[[0.5, 0xFF800000, 0xFF800000, 0xFF800000], [0.5, 0.5, 0xFF800000, 0xFF800000], [0.5, 0.5, 0.5, 0xFF800000], [0.5, 0.5, 0.5, 0.5]]> : tensor<4x4xf32>
  // expected-remark @+1 {{attn-infer-mask: the constant mask is #attn.causal, its finite entries a bias; 2 x 2 blocks: visiting 3 of 4 (1 full)}}
  %0 = attn.attention %q, %k, %k mask(%m : tensor<4x4xf32>) {normalizer = #attn.softmax} : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

/// a mask allowing everything disappears
// CHECK-LABEL: func.func @all_true
// CHECK-NOT: arith.constant
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} {normalizer = #attn.softmax} :
func.func @all_true(%q: tensor<1x1x4x4xf32>, %k: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %m = arith.constant dense<[[true, true, true, true], [true, true, true, true], [true, true, true, true], [true, true, true, true]]> : tensor<4x4xi1>
  // expected-remark @+1 {{attn-infer-mask: the constant mask is every key}}
  %0 = attn.attention %q, %k, %k mask(%m : tensor<4x4xi1>) {normalizer = #attn.softmax} : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  return %0 : tensor<1x1x4x4xf32>
}

// -----

/// A mask that differs across the batch is kept (patterns do not depend on
/// the batch).
// CHECK-LABEL: func.func @per_batch
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} mask(
func.func @per_batch(%q: tensor<2x1x2x4xf32>) -> tensor<2x1x2x4xf32> {
  %m = arith.constant dense<[[[[true, false], [true, true]]], [[[true, true], [true, true]]]]> : tensor<2x1x2x2xi1>
  // expected-remark @+1 {{attn-infer-mask: kept the constant mask: it differs across the batch (patterns do not)}}
  %0 = attn.attention %q, %q, %q mask(%m : tensor<2x1x2x2xi1>) {normalizer = #attn.softmax} : tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32>, tensor<2x1x2x4xf32> -> tensor<2x1x2x4xf32>
  return %0 : tensor<2x1x2x4xf32>
}

// -----

/// Finite non-zero entries with a bias already there: kept.
// CHECK-LABEL: func.func @values_and_bias
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} bias(%{{.*}}) mask(
func.func @values_and_bias(%q: tensor<1x1x2x4xf32>, %b: tensor<1x1x2x2xf32>) -> tensor<1x1x2x4xf32> {
  %m = arith.constant dense<[[0.5, 0xFF800000], [0.0, 0.0]]> : tensor<2x2xf32>
  // expected-remark @+1 {{attn-infer-mask: kept the constant mask: its finite non-zero entries would become a bias, and the op has one}}
  %0 = attn.attention %q, %q, %q bias(%b : tensor<1x1x2x2xf32>) mask(%m : tensor<2x2xf32>) {normalizer = #attn.softmax} : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x4xf32>
  return %0 : tensor<1x1x2x4xf32>
}

// -----

/// A mask that is not a constant is left to the kernels' run-time
/// classification (no remark here).
// CHECK-LABEL: func.func @runtime
// CHECK: attn.attention %{{.*}}, %{{.*}}, %{{.*}} mask(
func.func @runtime(%q: tensor<1x1x2x4xf32>, %m: tensor<2x2xi1>) -> tensor<1x1x2x4xf32> {
  %0 = attn.attention %q, %q, %q mask(%m : tensor<2x2xi1>) {normalizer = #attn.softmax} : tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32>, tensor<1x1x2x4xf32> -> tensor<1x1x2x4xf32>
  return %0 : tensor<1x1x2x4xf32>
}
