// RUN: attn-opt %s -split-input-file --attn-differentiate -verify-diagnostics

// expected-error @+1 {{attn-differentiate: @two has 2 attn.attention ops; it differentiates a function with one}}
func.func @two(%q: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %a = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  %b = attn.attention %a, %q, %q {normalizer = #attn.softmax}
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  return %b : tensor<1x1x4x4xf32>
}

// -----

// expected-error @+1 {{attn-differentiate: @not_returned does not return the output of its attn.attention}}
func.func @not_returned(%q: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %a = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  %b = arith.addf %a, %q : tensor<1x1x4x4xf32>
  return %b : tensor<1x1x4x4xf32>
}

// -----

func.func @paged(%q: tensor<1x1x4x4xf32>, %pool: tensor<2x1x4x4xf32>,
                 %pt: tensor<1x1xi32>, %len: tensor<1xi32>) -> tensor<1x1x4x4xf32> {
  // expected-error @+1 {{over a paged KV cache has no gradient (a page_table is for inference): @paged is not differentiated}}
  %o = attn.attention %q, %pool, %pool key_lengths(%len : tensor<1xi32>)
      page_table(%pt : tensor<1x1xi32>) {normalizer = #attn.softmax}
      : tensor<1x1x4x4xf32>, tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>
      -> tensor<1x1x4x4xf32>
  return %o : tensor<1x1x4x4xf32>
}

// -----

// expected-error @+1 {{attn-differentiate: cannot add @taken_grad: the name is taken}}
func.func @taken(%q: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  %a = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  return %a : tensor<1x1x4x4xf32>
}
func.func @taken_grad() {
  return
}

// -----

// expected-error @+1 {{attn-differentiate: @two_kinds has several attention ops; it differentiates a function with one}}
func.func @two_kinds(%q: tensor<1x1x4x4xf32>, %e: tensor<2x4xf32>) -> tensor<1x1x4x4xf32> {
  %a = attn.lowrank_attention %q, %q, %q, %e, %e : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> -> tensor<1x1x4x4xf32>
  %b = attn.attention %a, %q, %q {normalizer = #attn.softmax}
      : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32> -> tensor<1x1x4x4xf32>
  return %b : tensor<1x1x4x4xf32>
}

// -----

// expected-error @+1 {{attn-differentiate: @unreturned_lowrank does not return the output of its attn.lowrank_attention (in its body's block)}}
func.func @unreturned_lowrank(%q: tensor<1x1x4x4xf32>, %e: tensor<2x4xf32>) -> tensor<1x1x4x4xf32> {
  %a = attn.lowrank_attention %q, %q, %q, %e, %e : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> -> tensor<1x1x4x4xf32>
  return %q : tensor<1x1x4x4xf32>
}

// -----

func.func @lsh(%q: tensor<1x4x64x16xf32>) -> tensor<1x4x64x16xf32> {
  // expected-error @+1 {{'attn.lsh_attention' op has no gradient yet (attn-differentiate takes attn.attention, attn.lowrank_attention and attn.relative_attention): @lsh is not differentiated}}
  %0 = attn.lsh_attention %q, %q {num_hashes = 2, num_buckets = 8, chunk_size = 16} : tensor<1x4x64x16xf32>, tensor<1x4x64x16xf32> -> tensor<1x4x64x16xf32>
  return %0 : tensor<1x4x64x16xf32>
}

// -----

// expected-error @+1 {{attn-differentiate: @mixed has several attention ops; it differentiates a function with one}}
func.func @mixed(%q: tensor<1x2x8x4xf32>, %r: tensor<2x8x4xf32>, %u: tensor<2x4xf32>) -> tensor<1x2x8x4xf32> {
  %a = attn.attention %q, %q, %q {normalizer = #attn.softmax}
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  %b = attn.relative_attention %a, %q, %q, %r, %u, %u
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> -> tensor<1x2x8x4xf32>
  return %b : tensor<1x2x8x4xf32>
}
