// RUN: attn-opt %s --test-attn-print-block-layout="block-q=16 block-k=16" -o /dev/null | FileCheck %s

/// The block-layout analysis for each pattern kind: the picture (`#` full,
/// `+` partial, `.` empty) and the compressed lists the kernels iterate.

/// Sliding window of 16 on each side plus global token 0, 72 = 4 * 16 + 8 (ragged last block).
// CHECK-LABEL: block layout 72x72 in blocks of 16x16: 19 of 25 blocks visited, 5 full
// CHECK-NEXT: heads 0:
// CHECK-NEXT: #++++
// CHECK-NEXT: +#+..
// CHECK-NEXT: ++#+.
// CHECK-NEXT: +.+#+
// CHECK-NEXT: +..+#
// CHECK-NEXT: full offsets [0, 1, 2, 3, 4, 5]
// CHECK-NEXT: full blocks [0, 1, 2, 3, 4]
// CHECK-NEXT: partial offsets [0, 4, 6, 9, 12, 14]
// CHECK-NEXT: partial blocks [1, 2, 3, 4, 0, 2, 0, 1, 3, 0, 2, 4, 0, 3]

/// Dilated window looking back 32 positions, every second key.
// CHECK-LABEL: block layout 64x64 in blocks of 16x16: 9 of 16 blocks visited, 0 full
// CHECK-NEXT: heads 0:
// CHECK-NEXT: +...
// CHECK-NEXT: ++..
// CHECK-NEXT: +++.
// CHECK-NEXT: .+++
// CHECK-NEXT: full offsets [0, 0, 0, 0, 0]
// CHECK-NEXT: full blocks []
// CHECK-NEXT: partial offsets [0, 1, 3, 6, 9]
// CHECK-NEXT: partial blocks [0, 0, 1, 0, 1, 2, 1, 2, 3]

/// Global tokens 20 and 21: their query block sees every key block, every query block sees their key block.
// CHECK-LABEL: block layout 64x64 in blocks of 16x16: 7 of 16 blocks visited, 0 full
// CHECK-NEXT: heads 0:
// CHECK-NEXT: .+..
// CHECK-NEXT: ++++
// CHECK-NEXT: .+..
// CHECK-NEXT: .+..
// CHECK-NEXT: full offsets [0, 0, 0, 0, 0]
// CHECK-NEXT: full blocks []
// CHECK-NEXT: partial offsets [0, 1, 5, 6, 7]
// CHECK-NEXT: partial blocks [1, 0, 1, 2, 3, 1, 1]

/// Causal strided (Sparse Transformer): every block on or below the diagonal holds some multiple of 16.
// CHECK-LABEL: block layout 64x64 in blocks of 16x16: 10 of 16 blocks visited, 0 full
// CHECK-NEXT: heads 0:
// CHECK-NEXT: +...
// CHECK-NEXT: ++..
// CHECK-NEXT: +++.
// CHECK-NEXT: ++++
// CHECK-NEXT: full offsets [0, 0, 0, 0, 0]
// CHECK-NEXT: full blocks []
// CHECK-NEXT: partial offsets [0, 1, 3, 6, 10]
// CHECK-NEXT: partial blocks [0, 0, 1, 0, 1, 2, 0, 1, 2, 3]

/// Fixed: own 32-block, plus the summary cells 24..31 and 56..63.
// CHECK-LABEL: block layout 64x64 in blocks of 16x16: 12 of 16 blocks visited, 8 full
// CHECK-NEXT: heads 0:
// CHECK-NEXT: ##.+
// CHECK-NEXT: ##.+
// CHECK-NEXT: .+##
// CHECK-NEXT: .+##
// CHECK-NEXT: full offsets [0, 2, 4, 6, 8]
// CHECK-NEXT: full blocks [0, 1, 0, 1, 2, 3, 2, 3]
// CHECK-NEXT: partial offsets [0, 1, 2, 3, 4]
// CHECK-NEXT: partial blocks [3, 3, 1, 1]

/// BigBird random: one key block per query block, from the documented generator.
// CHECK-LABEL: block layout 64x64 in blocks of 16x16: 4 of 16 blocks visited, 4 full
// CHECK-NEXT: heads 0:
// CHECK-NEXT: ..#.
// CHECK-NEXT: ...#
// CHECK-NEXT: ...#
// CHECK-NEXT: .#..
// CHECK-NEXT: full offsets [0, 1, 2, 3, 4]
// CHECK-NEXT: full blocks [2, 3, 3, 1]
// CHECK-NEXT: partial offsets [0, 0, 0, 0, 0]
// CHECK-NEXT: partial blocks []

/// Explicit block layout of 32 x 32 blocks seen through 16 x 16 blocks.
// CHECK-LABEL: block layout 64x64 in blocks of 16x16: 12 of 16 blocks visited, 12 full
// CHECK-NEXT: heads 0:
// CHECK-NEXT: ##..
// CHECK-NEXT: ##..
// CHECK-NEXT: ####
// CHECK-NEXT: ####
// CHECK-NEXT: full offsets [0, 2, 4, 8, 12]
// CHECK-NEXT: full blocks [0, 1, 0, 1, 0, 1, 2, 3, 0, 1, 2, 3]
// CHECK-NEXT: partial offsets [0, 0, 0, 0, 0]
// CHECK-NEXT: partial blocks []

/// Per-head: head 0 causal, head 1 the diagonal only; two layouts.
// CHECK-LABEL: block layout 64x64 in blocks of 16x16: 14 of 32 blocks visited, 6 full
// CHECK-NEXT: heads 0:
// CHECK-NEXT: +...
// CHECK-NEXT: #+..
// CHECK-NEXT: ##+.
// CHECK-NEXT: ###+
// CHECK-NEXT: full offsets [0, 0, 1, 3, 6]
// CHECK-NEXT: full blocks [0, 0, 1, 0, 1, 2]
// CHECK-NEXT: partial offsets [0, 1, 2, 3, 4]
// CHECK-NEXT: partial blocks [0, 1, 2, 3]
// CHECK-NEXT: heads 1:
// CHECK-NEXT: +...
// CHECK-NEXT: .+..
// CHECK-NEXT: ..+.
// CHECK-NEXT: ...+
// CHECK-NEXT: full offsets [0, 0, 0, 0, 0]
// CHECK-NEXT: full blocks []
// CHECK-NEXT: partial offsets [0, 1, 2, 3, 4]
// CHECK-NEXT: partial blocks [0, 1, 2, 3]

func.func @f(%q: tensor<1x2x64x8xf32>, %q72: tensor<1x1x72x8xf32>, %q1: tensor<1x1x64x8xf32>) {
  %0 = attn.attention %q72, %q72, %q72 {normalizer = #attn.softmax, pattern = #attn.union<[#attn.window<before = 16, after = 16>, #attn.global<[0]>]>}
      : tensor<1x1x72x8xf32>, tensor<1x1x72x8xf32>, tensor<1x1x72x8xf32> -> tensor<1x1x72x8xf32>
  %1 = attn.attention %q1, %q1, %q1 {normalizer = #attn.softmax, pattern = #attn.dilated<before = 32, after = 0, dilation = 2>}
      : tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32> -> tensor<1x1x64x8xf32>
  %2 = attn.attention %q1, %q1, %q1 {normalizer = #attn.softmax, pattern = #attn.global<[20, 21]>}
      : tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32> -> tensor<1x1x64x8xf32>
  %3 = attn.attention %q1, %q1, %q1 {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.strided<stride = 16>]>}
      : tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32> -> tensor<1x1x64x8xf32>
  %4 = attn.attention %q1, %q1, %q1 {normalizer = #attn.softmax, pattern = #attn.fixed<stride = 32, c = 8>}
      : tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32> -> tensor<1x1x64x8xf32>
  %5 = attn.attention %q1, %q1, %q1 {normalizer = #attn.softmax, pattern = #attn.random<blocks = 1, block_size = 16, seed = 3>}
      : tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32> -> tensor<1x1x64x8xf32>
  %6 = attn.attention %q1, %q1, %q1 {normalizer = #attn.softmax, pattern = #attn.block<size = 32, layout = ["10", "11"]>}
      : tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32>, tensor<1x1x64x8xf32> -> tensor<1x1x64x8xf32>
  %7 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.per_head<[#attn.causal, #attn.window<before = 0, after = 0>]>}
      : tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32>, tensor<1x2x64x8xf32> -> tensor<1x2x64x8xf32>
  return
}
