// Kernels of the C ABI tests (library.test): dynamic sizes with grouped
// heads, a static function, a varlen batch.

// Causal softmax, B and L dynamic, 4 query heads over 2 key/value heads.
func.func @causal(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x16xf32>
  return %0 : tensor<?x4x?x16xf32>
}

// Sliding-window softmax on static shapes (odd length).
func.func @window(%q: tensor<1x2x67x8xf32>, %k: tensor<1x2x67x8xf32>, %v: tensor<1x2x67x8xf32>) -> tensor<1x2x67x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.window<before = 8, after = 0>}
      : tensor<1x2x67x8xf32>, tensor<1x2x67x8xf32>, tensor<1x2x67x8xf32> -> tensor<1x2x67x8xf32>
  return %0 : tensor<1x2x67x8xf32>
}

// A padded varlen batch: the lengths are checked at run time.
func.func @padded(%q: tensor<2x2x?x8xf32>, %k: tensor<2x2x?x8xf32>, %v: tensor<2x2x?x8xf32>, %lengths: tensor<2xi32>) -> tensor<2x2x?x8xf32> {
  %0 = attn.attention %q, %k, %v query_lengths(%lengths : tensor<2xi32>) key_lengths(%lengths : tensor<2xi32>) {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32>, tensor<2x2x?x8xf32> -> tensor<2x2x?x8xf32>
  return %0 : tensor<2x2x?x8xf32>
}

// A paged key/value cache (decode): pages of 4 rows, a page table per
// sequence; the entries in use and the pools' page counts are checked at
// run time.
func.func @paged(%query: tensor<2x4x1x16xf32>, %key: tensor<?x2x4x16xf32>, %value: tensor<?x2x4x8xf32>, %pt: tensor<2x3xi32>, %lk: tensor<2xi32>) -> tensor<2x4x1x8xf32> {
  %0 = attn.attention %query, %key, %value key_lengths(%lk : tensor<2xi32>) page_table(%pt : tensor<2x3xi32>) {normalizer = #attn.softmax}
    : tensor<2x4x1x16xf32>, tensor<?x2x4x16xf32>, tensor<?x2x4x8xf32> -> tensor<2x4x1x8xf32>
  return %0 : tensor<2x4x1x8xf32>
}

// Packed sequences (cumulative offsets, checked at run time).
func.func @packed(%query: tensor<1x4x?x16xf32>, %key: tensor<1x2x?x16xf32>, %value: tensor<1x2x?x8xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value query_offsets(%cq : tensor<?xi32>) key_offsets(%ck : tensor<?xi32>) {normalizer = #attn.softmax, pattern = #attn.causal}
    : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32> -> tensor<1x4x?x8xf32>
  return %0 : tensor<1x4x?x8xf32>
}

// A strided slice: its copy into the result goes through memrefCopy (the
// run-time support has it; the JIT takes it from libmlir_c_runner_utils).
func.func @strided(%x: tensor<4x6xf32>) -> tensor<2x3xf32> {
  %0 = tensor.extract_slice %x[1, 0] [2, 3] [2, 2] : tensor<4x6xf32> to tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
