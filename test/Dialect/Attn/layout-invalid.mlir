// RUN: attn-opt %s -split-input-file -verify-diagnostics

// The `layout` attribute of attn.attention: the verifier checks it against
// the shapes and recomputes it from the pattern.

/// A layout that marks a partial block full would change the results: the
/// verifier recomputes the pattern's layout.
func.func @wrong_layout(%q: tensor<1x1x32x8xf32>) -> tensor<1x1x32x8xf32> {
  // expected-error @+1 {{has a layout that does not match its pattern: block (0, 0) of head 0 is full here but partial by the pattern}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.causal,
      layout = #attn.block_layout<block_q = 16, block_k = 16, query_blocks = 2, key_blocks = 2,
               full_offsets = [0, 1, 2], full_blocks = [0, 0], partial_offsets = [0, 0, 1], partial_blocks = [1], heads = [0]>}
      : tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32> -> tensor<1x1x32x8xf32>
  return %0 : tensor<1x1x32x8xf32>
}

// -----

func.func @wrong_grid(%q: tensor<1x1x32x8xf32>) -> tensor<1x1x32x8xf32> {
  // expected-error @+1 {{expects a layout of 2x2 blocks for 32 queries and 32 keys in blocks of 16x16, got 1x2}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax,
      layout = #attn.block_layout<block_q = 16, block_k = 16, query_blocks = 1, key_blocks = 2,
               full_offsets = [0, 2], full_blocks = [0, 1], partial_offsets = [0, 0], partial_blocks = [], heads = [0]>}
      : tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32> -> tensor<1x1x32x8xf32>
  return %0 : tensor<1x1x32x8xf32>
}

// -----

func.func @wrong_heads(%q: tensor<1x2x32x8xf32>) -> tensor<1x2x32x8xf32> {
  // expected-error @+1 {{expects a layout entry for each of the 2 query heads, got 1}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax,
      layout = #attn.block_layout<block_q = 32, block_k = 32, query_blocks = 1, key_blocks = 1,
               full_offsets = [0, 1], full_blocks = [0], partial_offsets = [0, 0], partial_blocks = [], heads = [0]>}
      : tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32> -> tensor<1x2x32x8xf32>
  return %0 : tensor<1x2x32x8xf32>
}

// -----

func.func @kernel_normalizer(%q: tensor<1x1x32x8xf32>) -> tensor<1x1x32x8xf32> {
  // expected-error @+1 {{has a block layout, which applies only to softmax and pointwise attention}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.kernel<relu>,
      layout = #attn.block_layout<block_q = 32, block_k = 32, query_blocks = 1, key_blocks = 1,
               full_offsets = [0, 1], full_blocks = [0], partial_offsets = [0, 0], partial_blocks = [], heads = [0]>}
      : tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32> -> tensor<1x1x32x8xf32>
  return %0 : tensor<1x1x32x8xf32>
}

// -----

func.func @both_full_and_partial(%q: tensor<1x1x32x8xf32>) -> tensor<1x1x32x8xf32> {
  // expected-error @+2 {{invalid block layout: block (0, 0) is both full and partial}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax,
      layout = #attn.block_layout<block_q = 32, block_k = 32, query_blocks = 1, key_blocks = 1,
               full_offsets = [0, 1], full_blocks = [0], partial_offsets = [0, 1], partial_blocks = [0], heads = [0]>}
      : tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32> -> tensor<1x1x32x8xf32>
  return %0 : tensor<1x1x32x8xf32>
}

// -----

func.func @bad_offsets(%q: tensor<1x1x32x8xf32>) -> tensor<1x1x32x8xf32> {
  // expected-error @+2 {{invalid block layout: expects full and partial offsets of (query_blocks + 1) entries per layout}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax,
      layout = #attn.block_layout<block_q = 32, block_k = 32, query_blocks = 1, key_blocks = 1,
               full_offsets = [0, 1, 1], full_blocks = [0], partial_offsets = [0, 0], partial_blocks = [], heads = [0]>}
      : tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32> -> tensor<1x1x32x8xf32>
  return %0 : tensor<1x1x32x8xf32>
}

// -----

func.func @dynamic_layout(%q: tensor<1x1x?x8xf32>) -> tensor<1x1x?x8xf32> {
  // expected-error @+1 {{has a block layout, which needs static query and key lengths (with dynamic lengths the kernels classify blocks at run time)}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax,
      layout = #attn.block_layout<block_q = 32, block_k = 32, query_blocks = 1, key_blocks = 1,
               full_offsets = [0, 1], full_blocks = [0], partial_offsets = [0, 0], partial_blocks = [], heads = [0]>}
      : tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32>, tensor<1x1x?x8xf32> -> tensor<1x1x?x8xf32>
  return %0 : tensor<1x1x?x8xf32>
}

// -----

/// A block count of INT64_MAX (found by attn-opt-fuzz: signed overflow in
/// the verifier's split of the offsets, under UBSan).
func.func @huge_grid(%q: tensor<1x1x32x8xf32>) -> tensor<1x1x32x8xf32> {
  // expected-error @+2 {{block layout sizes must be at most 2^30 (1073741824), got 9223372036854775807}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.causal,
      layout = #attn.block_layout<block_q = 16, block_k = 16, query_blocks = 9223372036854775807, key_blocks = 2,
               full_offsets = [0, 1, 2], full_blocks = [0, 0], partial_offsets = [0, 0, 1], partial_blocks = [1], heads = [0]>}
      : tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32> -> tensor<1x1x32x8xf32>
  return %0 : tensor<1x1x32x8xf32>
}

// -----

// An offset in the middle beyond the blocks (found by attn-opt-fuzz: the
// verifier read past the block list before it saw the offsets decrease).
func.func @offset_beyond_blocks(%q: tensor<1x1x32x8xf32>) -> tensor<1x1x32x8xf32> {
  // expected-error @+2 {{invalid block layout: full offsets must not decrease}}
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax,
      layout = #attn.block_layout<block_q = 16, block_k = 16, query_blocks = 2, key_blocks = 2,
               full_offsets = [0, 5, 1], full_blocks = [0], partial_offsets = [0, 0, 0], partial_blocks = [], heads = [0]>}
      : tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32>, tensor<1x1x32x8xf32> -> tensor<1x1x32x8xf32>
  return %0 : tensor<1x1x32x8xf32>
}
