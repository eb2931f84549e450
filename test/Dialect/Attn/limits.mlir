// RUN: attn-opt %s -split-input-file -verify-diagnostics

/// The limits of the attn dialect (docs/Semantics.md, "Limits"): sizes
/// whose buffers cannot be allocated, sequences longer than 2^30, head
/// dimensions of 0, FAVOR+ features and block tables too large to build at
/// compile time, and composed patterns nested deeper than 32 are diagnosed
/// by the verifier, before any pass runs. Each case was a crash, a hang or
/// an out-of-memory abort (issue 18).

/// A head dimension of 0 (issue 18: SIGSEGV in the FAVOR+ lowering and the NVVM pipeline).
func.func @head_dim_zero(%q: tensor<1x1x4x0xf32>, %k: tensor<1x1x4x0xf32>, %v: tensor<1x1x4x0xf32>) {
  // expected-error @+1 {{expects head dimensions of at least 1, got 0 (query and key) and 0 (value)}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax} : tensor<1x1x4x0xf32>, tensor<1x1x4x0xf32>, tensor<1x1x4x0xf32> -> tensor<1x1x4x0xf32>
  return
}

// -----

/// A value dimension of 0.
func.func @value_dim_zero(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>, %v: tensor<1x1x4x0xf32>) {
  // expected-error @+1 {{expects head dimensions of at least 1, got 8 (query and key) and 0 (value)}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax} : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x0xf32> -> tensor<1x1x4x0xf32>
  return
}

// -----

/// FAVOR+ over a head dimension of 0.
func.func @favor_head_dim_zero(%q: tensor<1x1x4x0xf32>, %k: tensor<1x1x4x0xf32>, %v: tensor<1x1x4x0xf32>) {
  // expected-error @+1 {{expects head dimensions of at least 1}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<favor, features = 4>} : tensor<1x1x4x0xf32>, tensor<1x1x4x0xf32>, tensor<1x1x4x0xf32> -> tensor<1x1x4x0xf32>
  return
}

// -----

/// 2^31 queries (issue 18: hung in attn-block-sparse and the LLVM pipeline).
func.func @length_2_31(%q: tensor<1x1x2147483648x16xf32>, %k: tensor<1x1x2147483648x16xf32>, %v: tensor<1x1x2147483648x16xf32>) {
  // expected-error @+1 {{supports sequences of at most 2^30 (1073741824) positions, got a query length of 2147483648}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.window<before = 5, after = 5>} : tensor<1x1x2147483648x16xf32>, tensor<1x1x2147483648x16xf32>, tensor<1x1x2147483648x16xf32> -> tensor<1x1x2147483648x16xf32>
  return
}

// -----

/// 2^31 - 1 keys with a random pattern (issue 18: out-of-memory abort).
func.func @key_length_2_31_minus_1(%q: tensor<1x1x2147483647x16xf32>, %k: tensor<1x1x2147483647x16xf32>, %v: tensor<1x1x2147483647x16xf32>) {
  // expected-error @+1 {{supports sequences of at most 2^30 (1073741824) positions, got a query length of 2147483647}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.union<[#attn.global<[0]>, #attn.random<blocks = 1, block_size = 16, seed = 2>]>} : tensor<1x1x2147483647x16xf32>, tensor<1x1x2147483647x16xf32>, tensor<1x1x2147483647x16xf32> -> tensor<1x1x2147483647x16xf32>
  return
}

// -----

/// 2^40 heads (issue 18: LLVM ERROR: out of memory).
func.func @heads_2_40(%q: tensor<1x1099511627776x64x16xf32>, %k: tensor<1x1099511627776x64x16xf32>, %v: tensor<1x1099511627776x64x16xf32>) {
  // expected-error @+1 {{expects tensors of at most 2^47 bytes (the address space), but operand #0 of type 'tensor<1x1099511627776x64x16xf32>' needs 4503599627370496 bytes}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax} : tensor<1x1099511627776x64x16xf32>, tensor<1x1099511627776x64x16xf32>, tensor<1x1099511627776x64x16xf32> -> tensor<1x1099511627776x64x16xf32>
  return
}

// -----

/// A head dimension of INT64_MAX (issue 18: SmallVector unable to grow).
func.func @head_dim_int64_max(%q: tensor<2x4x77x9223372036854775807xf32>, %k: tensor<2x4x77x9223372036854775807xf32>, %v: tensor<2x4x77x9223372036854775807xf32>) {
  // expected-error @+1 {{needs more than 2^63 bytes}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax} : tensor<2x4x77x9223372036854775807xf32>, tensor<2x4x77x9223372036854775807xf32>, tensor<2x4x77x9223372036854775807xf32> -> tensor<2x4x77x9223372036854775807xf32>
  return
}

// -----

/// 2^31 FAVOR+ features (issue 18: out-of-memory abort).
func.func @favor_features(%q: tensor<1x1x64x16xf32>, %k: tensor<1x1x64x16xf32>, %v: tensor<1x1x64x16xf32>) {
  // expected-error @+1 {{favor feature map needs 0 < features <= 65536, got 2147483648}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<favor, features = 2147483648>} : tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32>, tensor<1x1x64x16xf32> -> tensor<1x1x64x16xf32>
  return
}

// -----

/// A FAVOR+ projection drawn at compile time of more than 2^24 entries.
func.func @favor_projection(%q: tensor<1x1x4x512xf32>, %k: tensor<1x1x4x512xf32>, %v: tensor<1x1x4x512xf32>) {
  // expected-error @+1 {{has a FAVOR+ projection of 65536 x 512 (features x head dim), more than the 16777216 entries a compile-time projection may have (pass it as the projection operand)}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<favor, features = 65536>} : tensor<1x1x4x512xf32>, tensor<1x1x4x512xf32>, tensor<1x1x4x512xf32> -> tensor<1x1x4x512xf32>
  return
}

// -----

/// A random pattern whose table would have more than 2^24 blocks.
func.func @random_table(%q: tensor<1x1x4194304x1xf32>, %k: tensor<1x1x4194304x1xf32>, %v: tensor<1x1x4194304x1xf32>) {
  // expected-error @+1 {{random pattern over 262144 x 262144 blocks of 16: its table is built at compile time and may have at most 16777216 blocks}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.random<blocks = 1, block_size = 16, seed = 2>} : tensor<1x1x4194304x1xf32>, tensor<1x1x4194304x1xf32>, tensor<1x1x4194304x1xf32> -> tensor<1x1x4194304x1xf32>
  return
}

// -----

/// A random block size of INT64_MAX: one block (its ceil-division used to overflow).
func.func @random_block_int64_max(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>, %v: tensor<1x1x8x4xf32>) {
  // expected-error @+1 {{random pattern asks for 2 key blocks per row but there are only 1 blocks of 9223372036854775807 keys}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.random<blocks = 2, block_size = 9223372036854775807, seed = 2>} : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return
}

// -----

/// Composed patterns 33 deep (the parser stops at the 33rd list; this one parses 32 lists around a leaf, and the verifier counts the leaf).
func.func @depth_33(%q: tensor<1x1x8x4xf32>, %k: tensor<1x1x8x4xf32>, %v: tensor<1x1x8x4xf32>) {
  // expected-error @+1 {{mask patterns may nest at most 32 deep}}
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.intersect<[#attn.window<before = 1, after = 1>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>, #attn.causal]>} : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32> -> tensor<1x1x8x4xf32>
  return
}

// -----

/// Memory plus segment longer than 2^30 positions.
func.func @relative_too_long(%q: tensor<1x1x8x4xf32>, %mem: tensor<1x1x1073741824x4xf32>, %r: tensor<1x1073741832x4xf32>, %u: tensor<1x4xf32>) {
  // expected-error @+1 {{supports sequences of at most 2^30 (1073741824) positions, got memory and segment of 1073741832}}
  %0 = attn.relative_attention %q, %q, %q, %r, %u, %u memory(%mem, %mem : tensor<1x1x1073741824x4xf32>, tensor<1x1x1073741824x4xf32>)
      : tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1x8x4xf32>, tensor<1x1073741832x4xf32>,
        tensor<1x4xf32>, tensor<1x4xf32> -> tensor<1x1x8x4xf32>
  return
}
