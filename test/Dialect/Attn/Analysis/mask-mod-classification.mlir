// RUN: attn-opt %s --test-attn-print-block-layout="block-q=16 block-k=16" -o /dev/null | FileCheck %s

/// The interval analysis of mask regions, block by block (`#` full, `+`
/// partial, `.` empty). Sound and, for the integer arithmetic of these
/// regions, exact at block granularity.

/// Prefix-LM: the first 20 keys for every query, causal after. Block 0 of
/// every row is full (keys 0..15 < 20); block 1 is partial in the first
/// rows (keys 16..19 only) and on the diagonal.
// CHECK-LABEL: block layout 100x100 in blocks of 16x16: 58 of 98 blocks visited, 44 full
// CHECK-NEXT: heads 0 1:
// CHECK-NEXT: #+.....
// CHECK-NEXT: #+.....
// CHECK-NEXT: ##+....
// CHECK-NEXT: ###+...
// CHECK-NEXT: ####+..
// CHECK-NEXT: #####+.
// CHECK-NEXT: ######+
func.func @prefix_lm(%q: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c20 = arith.constant 20 : index
        %p = arith.cmpi ult, %j, %c20 : index
        %c = arith.cmpi ule, %j, %i : index
        %ok = arith.ori %p, %c : i1
        attn.yield %ok : i1
      }
  return %o : tensor<1x2x100x16xf32>
}

/// Document ids read from a capture: unknown at compile time, so every
/// block the causal part allows is partial (the kernels classify them again
/// at run time over the ids); the blocks above the diagonal are empty.
// CHECK-LABEL: block layout 64x64 in blocks of 16x16: 10 of 16 blocks visited, 0 full
// CHECK-NEXT: heads 0:
// CHECK-NEXT: +...
// CHECK-NEXT: ++..
// CHECK-NEXT: +++.
// CHECK-NEXT: ++++
func.func @documents(%q: tensor<1x1x64x16xf32>, %doc: tensor<1x64xi32>) -> tensor<1x1x64x16xf32> {
  %o = attn.attention %q, %q, %q captures(%doc : tensor<1x64xi32>) {normalizer = #attn.softmax}
      : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<1x64xi32>):
        %x = tensor.extract %d[%b, %i] : tensor<1x64xi32>
        %y = tensor.extract %d[%b, %j] : tensor<1x64xi32>
        %same = arith.cmpi eq, %x, %y : i32
        %c = arith.cmpi ule, %j, %i : index
        %ok = arith.andi %same, %c : i1
        attn.yield %ok : i1
      }
  return %o : tensor<1x1x64x16xf32>
}

/// Batch-dependent (the first batch row sees 32 keys, the others all):
/// the layout holds for every row, so keys 32.. are partial, not empty.
// CHECK-LABEL: block layout 64x64 in blocks of 16x16: 16 of 16 blocks visited, 8 full
// CHECK-NEXT: heads 0:
// CHECK-NEXT: ##++
// CHECK-NEXT: ##++
// CHECK-NEXT: ##++
// CHECK-NEXT: ##++
func.func @per_batch(%q: tensor<3x1x64x16xf32>) -> tensor<3x1x64x16xf32> {
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<3x1x64x16xf32>, tensor<3x1x64x16xf32>, tensor<3x1x64x16xf32> -> tensor<3x1x64x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c0 = arith.constant 0 : index
        %c32 = arith.constant 32 : index
        %first = arith.cmpi eq, %b, %c0 : index
        %near = arith.cmpi ult, %j, %c32 : index
        %t = arith.constant true
        %all = arith.select %first, %near, %t : i1
        attn.yield %all : i1
      }
  return %o : tensor<3x1x64x16xf32>
}

/// Blocks of a band by floor division: queries and keys in the same block
/// of 32 (`i floordiv 32 == j floordiv 32`): full on the diagonal blocks of
/// 32, empty elsewhere.
// CHECK-LABEL: block layout 64x64 in blocks of 16x16: 8 of 16 blocks visited, 8 full
// CHECK-NEXT: heads 0:
// CHECK-NEXT: ##..
// CHECK-NEXT: ##..
// CHECK-NEXT: ..##
// CHECK-NEXT: ..##
func.func @local_blocks(%q: tensor<1x1x64x16xf32>) -> tensor<1x1x64x16xf32> {
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c32 = arith.constant 32 : index
        %bi = arith.floordivsi %i, %c32 : index
        %bj = arith.floordivsi %j, %c32 : index
        %ok = arith.cmpi eq, %bi, %bj : index
        attn.yield %ok : i1
      }
  return %o : tensor<1x1x64x16xf32>
}

/// A float computation is outside the analysis: every block partial (the
/// kernels mask each element; never a wrong full or empty block).
// CHECK-LABEL: block layout 32x32 in blocks of 16x16: 4 of 4 blocks visited, 0 full
// CHECK-NEXT: heads 0:
// CHECK-NEXT: ++
// CHECK-NEXT: ++
func.func @float_mask(%q: tensor<1x1x32x16xf32>) -> tensor<1x1x32x16xf32> {
  %o = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32>, tensor<1x1x32x16xf32> -> tensor<1x1x32x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %ii = arith.index_cast %i : index to i64
        %f = arith.sitofp %ii : i64 to f32
        %s = math.sqrt %f : f32
        %c = arith.constant 3.0 : f32
        %ok = arith.cmpf ogt, %s, %c : f32
        attn.yield %ok : i1
      }
  return %o : tensor<1x1x32x16xf32>
}
