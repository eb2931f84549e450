// Attribute values at their limits compile in seconds and bounded memory:
// the compiler's work follows what the op computes, not the values (issue
// 40). LSH with 2^21 buckets (its rotation constant at the verifier's 2^24
// entries; test/Dialect/Attn/invalid.mlir has the limit's diagnostic) and
// a window reaching back 2^30 - 1 keys over 2^20 rows (its key range a
// run-time interval, not per-block code). Hash counts: lsh-many-hashes.mlir;
// feature counts: favor-features.mlir; long causal and window patterns:
// long-sequences.mlir.
//
// RUN: attn-opt %s --attn-lower-to-llvm-pipeline -o /dev/null

func.func @buckets(%qk: tensor<1x2x64x16xf32>, %value: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  %0 = attn.lsh_attention %qk, %value {num_hashes = 1, num_buckets = 2097152, chunk_size = 16, seed = 3} : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return %0 : tensor<1x2x64x16xf32>
}

func.func @window(%q: tensor<1x1x1048576x16xf32>) -> tensor<1x1x1048576x16xf32> {
  %0 = attn.attention %q, %q, %q {normalizer = #attn.softmax, pattern = #attn.window<before = 1073741823, after = 3>}
      : tensor<1x1x1048576x16xf32>, tensor<1x1x1048576x16xf32>, tensor<1x1x1048576x16xf32> -> tensor<1x1x1048576x16xf32>
  return %0 : tensor<1x1x1048576x16xf32>
}
