// Reformer LSH attention against the scalar reference: hashing, stable sort, chunks with look-back, self exclusion, causal, rounds.
// DEFINE: %{tol} = --rtol 1e-4 --atol 1e-5 --max-rel-err 1e-5
// DEFINE: %{fn} =
// DEFINE: %{check} = attn-run %s --entry %{fn} --random-inputs --seed 11 --save-inputs %t/%{fn} --output %t/%{fn}.npy && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy %{tol}
// RUN: rm -rf %t && mkdir -p %t
// REDEFINE: %{fn} = one_round
// RUN: %{check}
// REDEFINE: %{fn} = rounds
// RUN: %{check}
// REDEFINE: %{fn} = causal
// RUN: %{check}
// REDEFINE: %{fn} = single_chunk
// RUN: %{check}

/// one hash round, 8 buckets, chunks of 16
func.func @one_round(%qk: tensor<2x2x64x16xf32>, %value: tensor<2x2x64x8xf32>) -> tensor<2x2x64x8xf32> {
  %0 = attn.lsh_attention %qk, %value {num_hashes = 1, num_buckets = 8, chunk_size = 16, seed = 3} : tensor<2x2x64x16xf32>, tensor<2x2x64x8xf32> -> tensor<2x2x64x8xf32>
  return %0 : tensor<2x2x64x8xf32>
}

/// three rounds combined by log-sum-exp
func.func @rounds(%qk: tensor<1x2x96x16xf32>, %value: tensor<1x2x96x16xf32>) -> tensor<1x2x96x16xf32> {
  %0 = attn.lsh_attention %qk, %value {num_hashes = 3, num_buckets = 6, chunk_size = 32, seed = 4} : tensor<1x2x96x16xf32>, tensor<1x2x96x16xf32> -> tensor<1x2x96x16xf32>
  return %0 : tensor<1x2x96x16xf32>
}

/// causal: a query sees earlier positions of its chunk and the previous one; the first position sees only itself
func.func @causal(%qk: tensor<2x1x48x8xf32>, %value: tensor<2x1x48x8xf32>) -> tensor<2x1x48x8xf32> {
  %0 = attn.lsh_attention %qk, %value {num_hashes = 2, num_buckets = 4, chunk_size = 8, seed = 5, causal} : tensor<2x1x48x8xf32>, tensor<2x1x48x8xf32> -> tensor<2x1x48x8xf32>
  return %0 : tensor<2x1x48x8xf32>
}

/// one chunk: every query sees all other positions
func.func @single_chunk(%qk: tensor<1x2x24x8xf32>, %value: tensor<1x2x24x4xf32>) -> tensor<1x2x24x4xf32> {
  %0 = attn.lsh_attention %qk, %value {num_hashes = 2, num_buckets = 2, chunk_size = 24, seed = 6, scale = 0.3 : f32} : tensor<1x2x24x8xf32>, tensor<1x2x24x4xf32> -> tensor<1x2x24x4xf32>
  return %0 : tensor<1x2x24x4xf32>
}
