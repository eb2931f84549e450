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
// REDEFINE: %{fn} = odd
// RUN: %{check}
// REDEFINE: %{fn} = odd_causal
// RUN: %{check}
// REDEFINE: %{fn} = bf16
// REDEFINE: %{tol} = --rtol 1e-2 --atol 1e-2
// RUN: %{check}
// REDEFINE: %{tol} = --rtol 1e-4 --atol 1e-5 --max-rel-err 1e-5
// The same cases at 16 lanes (where the window allows it) and through the
// reference lowering's sort and chunks (the pipeline without the kernels).
// REDEFINE: %{check} = attn-run %s --entry %{fn} --pipeline="attn-lower-to-llvm-pipeline{vector-width=16}" --random-inputs --seed 11 --save-inputs %t/%{fn} --output %t/%{fn}.npy && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy %{tol}
// REDEFINE: %{fn} = rounds
// RUN: %{check}
// REDEFINE: %{fn} = odd_causal
// RUN: %{check}
// The kernels ran (a counting sort, chunk kernels) where the shapes allow;
// single_chunk's value dim (4) and odd's chunks of 20 keep the reference
// lowering at 8 lanes.
// RUN: attn-opt %s --attn-lsh-kernels="vector-width=8" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARKS
// REMARKS: remark: attn-lsh-kernels: 1 round(s): a counting sort by bucket, then chunk kernels of 16 queries x 32 keys
// REMARKS: remark: attn-lsh-kernels: 3 round(s): a counting sort by bucket, then chunk kernels of 32 queries x 64 keys
// REMARKS: remark: attn-lsh-kernels: 2 round(s): a counting sort by bucket, then chunk kernels of 8 queries x 16 keys
// REMARKS-NOT: chunk kernels of 24
// REMARKS: remark: attn-lsh-kernels: 3 round(s): a counting sort by bucket, then chunk kernels of 24 queries x 48 keys
// REMARKS: remark: attn-lsh-kernels: 2 round(s): a counting sort by bucket, then chunk kernels of 16 queries x 32 keys

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

/// odd sizes: L = 300 in 15 chunks of 20, head dim 20, 10 buckets
func.func @odd(%qk: tensor<1x3x300x20xf32>, %value: tensor<1x3x300x8xf32>) -> tensor<1x3x300x8xf32> {
  %0 = attn.lsh_attention %qk, %value {num_hashes = 2, num_buckets = 10, chunk_size = 20, seed = 7} : tensor<1x3x300x20xf32>, tensor<1x3x300x8xf32> -> tensor<1x3x300x8xf32>
  return %0 : tensor<1x3x300x8xf32>
}

/// odd sizes, causal, 3 rounds, L = 312 in 13 chunks of 24 (a window of 48)
func.func @odd_causal(%qk: tensor<2x1x312x20xf32>, %value: tensor<2x1x312x16xf32>) -> tensor<2x1x312x16xf32> {
  %0 = attn.lsh_attention %qk, %value {num_hashes = 3, num_buckets = 16, chunk_size = 24, seed = 8, causal} : tensor<2x1x312x20xf32>, tensor<2x1x312x16xf32> -> tensor<2x1x312x16xf32>
  return %0 : tensor<2x1x312x16xf32>
}

/// bf16 operands (computed in f32, the result rounded)
func.func @bf16(%qk: tensor<1x2x64x16xbf16>, %value: tensor<1x2x64x16xbf16>) -> tensor<1x2x64x16xbf16> {
  %0 = attn.lsh_attention %qk, %value {num_hashes = 2, num_buckets = 8, chunk_size = 16, seed = 9} : tensor<1x2x64x16xbf16>, tensor<1x2x64x16xbf16> -> tensor<1x2x64x16xbf16>
  return %0 : tensor<1x2x64x16xbf16>
}
