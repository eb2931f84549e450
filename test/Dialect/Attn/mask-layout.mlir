// RUN: attn-opt %s --test-attn-mask-layout="block-q=16 block-k=16" -o /dev/null | FileCheck %s

/// The mask library's tile classification (`#` full, `+` partial, `.` empty)
/// for each pattern kind, as every pass sees it.

// CHECK-LABEL: mask layout 64x64 in tiles of 16x16
// CHECK-NEXT: head 0:
// CHECK-NEXT: +...
// CHECK-NEXT: #+..
// CHECK-NEXT: ##+.
// CHECK-NEXT: ###+
func.func @causal(%q: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return %0 : tensor<1x1x64x16xf32>
}

/// Queries aligned to the end of the keys: 32 queries over 64 keys.
// CHECK-LABEL: mask layout 32x64 in tiles of 16x16
// CHECK-NEXT: head 0:
// CHECK-NEXT: ##+.
// CHECK-NEXT: ###+
func.func @causal_lq_lt_lk(%q: tensor<1x1x32x16xf32>, %k: tensor<1x1x64x16xf32>) -> tensor<1x1x32x16xf32> {
  %0 = attn.attention %q, %k, %k {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x1x32x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x32x16xf32>
  return %0 : tensor<1x1x32x16xf32>
}

/// Sliding window of 16 on each side plus global token 0, with a ragged
/// last tile (72 = 4 * 16 + 8).
// CHECK-LABEL: mask layout 72x72 in tiles of 16x16
// CHECK-NEXT: head 0:
// CHECK-NEXT: #++++
// CHECK-NEXT: +#+..
// CHECK-NEXT: ++#+.
// CHECK-NEXT: +.+#+
// CHECK-NEXT: +..+#
func.func @window_global(%q: tensor<1x1x72x16xf32>) -> tensor<1x1x72x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax,
      pattern = #attn.union<[#attn.window<before = 16, after = 16>, #attn.global<[0]>]>}
      : tensor<1x1x72x16xf32>, tensor<1x1x72x16xf32>, tensor<1x1x72x16xf32> -> tensor<1x1x72x16xf32>
  return %0 : tensor<1x1x72x16xf32>
}

/// An explicit block layout and per-head patterns (heads 0 and 1 differ;
/// head 1's picture is printed once for heads 1..).
// CHECK-LABEL: mask layout 64x64 in tiles of 16x16
// CHECK-NEXT: head 0:
// CHECK-NEXT: ##..
// CHECK-NEXT: ##..
// CHECK-NEXT: ..##
// CHECK-NEXT: ..##
// CHECK-NEXT: head 1:
// CHECK-NEXT: ++++
// CHECK-NEXT: ++++
// CHECK-NEXT: ++++
// CHECK-NEXT: ++++
// CHECK-NOT: head
func.func @per_head(%q: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax,
      pattern = #attn.per_head<[#attn.block<size = 32, layout = ["10", "01"]>, #attn.strided<stride = 4>]>}
      : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return %0 : tensor<1x2x64x16xf32>
}
