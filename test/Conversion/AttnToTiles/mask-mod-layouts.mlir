// RUN: attn-opt %s --attn-block-sparse="kernels=false vector-width=16 block-q=16 block-k=16" 2>/dev/null | FileCheck %s
// RUN: attn-opt %s --attn-block-sparse="kernels=false vector-width=16 block-q=16 block-k=16" 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: attn-opt %s --attn-block-sparse="kernels=false vector-width=16 block-q=16 block-k=16" 2>/dev/null | attn-opt | FileCheck %s

/// The interval analysis of mask regions (ModRegion.h) against the built-in
/// patterns: a region spelling causal, a sliding window, a dilated window,
/// per-head patterns, a window with global tokens, or causal attention of a
/// query chunk at the end of the keys (the region adds Lk - Lq itself)
/// gets exactly the block layout of the pattern it spells (captured from
/// the pattern's op, matched on the region's). The second run checks the
/// remark; the third that the layouts verify (the verifier recomputes each
/// from the region).

// REMARK: remark: attn-block-sparse: tiles of 16 queries x 16 keys, 16 lanes; visiting 56 of 98 key blocks (42 full){{$}}
// REMARK: remark: attn-block-sparse: tiles of 16 queries x 16 keys, 16 lanes; visiting 56 of 98 key blocks (42 full); mask_mod (reads query, key) classified by interval analysis at compile time
// REMARK: mask_mod (reads head, query, key) classified by interval analysis at compile time

// CHECK-LABEL: func.func @causal_pattern
// CHECK: layout = [[CAUSAL:#attn.block_layout<[^>]*>]]
func.func @causal_pattern(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  %o = attn.attention %q, %k, %k {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
  return %o : tensor<1x2x100x16xf32>
}

// CHECK-LABEL: func.func @causal_region
// CHECK: layout = [[CAUSAL]]
func.func @causal_region(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  %o = attn.attention %q, %k, %k {normalizer = #attn.softmax}
      : tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %ok = arith.cmpi ule, %j, %i : index
        attn.yield %ok : i1
      }
  return %o : tensor<1x2x100x16xf32>
}

// CHECK-LABEL: func.func @window_pattern
// CHECK: layout = [[WINDOW:#attn.block_layout<[^>]*>]]
func.func @window_pattern(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  %o = attn.attention %q, %k, %k {normalizer = #attn.softmax, pattern = #attn.window<before = 20, after = 5>}
      : tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
  return %o : tensor<1x2x100x16xf32>
}

// CHECK-LABEL: func.func @window_region
// CHECK: layout = [[WINDOW]]
func.func @window_region(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  %o = attn.attention %q, %k, %k {normalizer = #attn.softmax}
      : tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %i, %j : index
        %c20 = arith.constant 20 : index
        %cm5 = arith.constant -5 : index
        %lo = arith.cmpi sle, %d, %c20 : index
        %hi = arith.cmpi sge, %d, %cm5 : index
        %ok = arith.andi %lo, %hi : i1
        attn.yield %ok : i1
      }
  return %o : tensor<1x2x100x16xf32>
}

// CHECK-LABEL: func.func @dilated_pattern
// CHECK: layout = [[DILATED:#attn.block_layout<[^>]*>]]
func.func @dilated_pattern(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  %o = attn.attention %q, %k, %k {normalizer = #attn.softmax, pattern = #attn.dilated<before = 32, after = 0, dilation = 2>}
      : tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
  return %o : tensor<1x2x100x16xf32>
}

// CHECK-LABEL: func.func @dilated_region
// CHECK: layout = [[DILATED]]
func.func @dilated_region(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  %o = attn.attention %q, %k, %k {normalizer = #attn.softmax}
      : tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %d = arith.subi %i, %j : index
        %c0 = arith.constant 0 : index
        %c2 = arith.constant 2 : index
        %c32 = arith.constant 32 : index
        %back = arith.cmpi sge, %d, %c0 : index
        %near = arith.cmpi sle, %d, %c32 : index
        %r = arith.remsi %d, %c2 : index
        %even = arith.cmpi eq, %r, %c0 : index
        %w = arith.andi %back, %near : i1
        %ok = arith.andi %w, %even : i1
        attn.yield %ok : i1
      }
  return %o : tensor<1x2x100x16xf32>
}

// CHECK-LABEL: func.func @per_head_pattern
// CHECK: layout = [[PER_HEAD:#attn.block_layout<[^>]*>]]
func.func @per_head_pattern(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  %o = attn.attention %q, %k, %k {normalizer = #attn.softmax, pattern = #attn.per_head<[#attn.causal, #attn.window<before = 8, after = 8>]>}
      : tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
  return %o : tensor<1x2x100x16xf32>
}

// CHECK-LABEL: func.func @per_head_region
// CHECK: layout = [[PER_HEAD]]
func.func @per_head_region(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  %o = attn.attention %q, %k, %k {normalizer = #attn.softmax}
      : tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c0 = arith.constant 0 : index
        %first = arith.cmpi eq, %h, %c0 : index
        %causal = arith.cmpi ule, %j, %i : index
        %d = arith.subi %i, %j : index
        %a = math.absi %d : index
        %c8 = arith.constant 8 : index
        %win = arith.cmpi sle, %a, %c8 : index
        %ok = arith.select %first, %causal, %win : i1
        attn.yield %ok : i1
      }
  return %o : tensor<1x2x100x16xf32>
}

// CHECK-LABEL: func.func @global_window_pattern
// CHECK: layout = [[GLOBAL_WINDOW:#attn.block_layout<[^>]*>]]
func.func @global_window_pattern(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  %o = attn.attention %q, %k, %k {normalizer = #attn.softmax, pattern = #attn.union<[#attn.window<before = 4, after = 4>, #attn.global<[0, 1]>]>}
      : tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
  return %o : tensor<1x2x100x16xf32>
}

// CHECK-LABEL: func.func @global_window_region
// CHECK: layout = [[GLOBAL_WINDOW]]
func.func @global_window_region(%q: tensor<1x2x100x16xf32>, %k: tensor<1x2x100x16xf32>) -> tensor<1x2x100x16xf32> {
  %o = attn.attention %q, %k, %k {normalizer = #attn.softmax}
      : tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x100x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c2 = arith.constant 2 : index
        %gq = arith.cmpi ult, %i, %c2 : index
        %gk = arith.cmpi ult, %j, %c2 : index
        %g = arith.ori %gq, %gk : i1
        %d = arith.subi %i, %j : index
        %a = math.absi %d : index
        %c4 = arith.constant 4 : index
        %w = arith.cmpi sle, %a, %c4 : index
        %ok = arith.ori %g, %w : i1
        attn.yield %ok : i1
      }
  return %o : tensor<1x2x100x16xf32>
}

// CHECK-LABEL: func.func @causal_chunk_pattern
// CHECK: layout = [[CAUSAL_CHUNK:#attn.block_layout<[^>]*>]]
func.func @causal_chunk_pattern(%q: tensor<1x2x40x16xf32>, %k: tensor<1x2x100x16xf32>) -> tensor<1x2x40x16xf32> {
  %o = attn.attention %q, %k, %k {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x2x40x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x40x16xf32>
  return %o : tensor<1x2x40x16xf32>
}

// CHECK-LABEL: func.func @causal_chunk_region
// CHECK: layout = [[CAUSAL_CHUNK]]
func.func @causal_chunk_region(%q: tensor<1x2x40x16xf32>, %k: tensor<1x2x100x16xf32>) -> tensor<1x2x40x16xf32> {
  %o = attn.attention %q, %k, %k {normalizer = #attn.softmax}
      : tensor<1x2x40x16xf32>, tensor<1x2x100x16xf32>, tensor<1x2x100x16xf32> -> tensor<1x2x40x16xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c60 = arith.constant 60 : index
        %pos = arith.addi %i, %c60 : index
        %ok = arith.cmpi ule, %j, %pos : index
        attn.yield %ok : i1
      }
  return %o : tensor<1x2x40x16xf32>
}

