// Softmax attention against the scalar reference: every mask pattern kind, compositions, segments, Lq != Lk, fully masked rows, bias, gate, qk-layernorm, GQA and MQA.
// DEFINE: %{tol} = --rtol 1e-4 --atol 1e-5 --max-rel-err 1e-5
// DEFINE: %{fn} =
// DEFINE: %{check} = attn-run %s --entry %{fn} --random-inputs --seed 7 --save-inputs %t/%{fn} --output %t/%{fn}.npy && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy %{tol}
// RUN: rm -rf %t && mkdir -p %t
// REDEFINE: %{fn} = dense
// RUN: %{check}
// REDEFINE: %{fn} = causal
// RUN: %{check}
// REDEFINE: %{fn} = window
// RUN: %{check}
// REDEFINE: %{fn} = dilated
// RUN: %{check}
// REDEFINE: %{fn} = global
// RUN: %{check}
// REDEFINE: %{fn} = strided
// RUN: %{check}
// REDEFINE: %{fn} = fixed
// RUN: %{check}
// REDEFINE: %{fn} = random
// RUN: %{check}
// REDEFINE: %{fn} = block
// RUN: %{check}
// REDEFINE: %{fn} = union
// RUN: %{check}
// REDEFINE: %{fn} = per_head
// RUN: %{check}
// REDEFINE: %{fn} = segments
// RUN: %{check}
// REDEFINE: %{fn} = lq_lt_lk
// RUN: %{check}
// REDEFINE: %{fn} = lq_gt_lk
// RUN: %{check}
// REDEFINE: %{fn} = masked_rows
// RUN: %{check}
// REDEFINE: %{fn} = segments_lq_lk
// RUN: %{check}
// REDEFINE: %{fn} = bias_gate_norm
// RUN: %{check}
// REDEFINE: %{fn} = mqa
// RUN: %{check}

/// dense softmax, grouped-query heads
func.func @dense(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// causal
func.func @causal(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// sliding window
func.func @window(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 5, after = 3>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// dilated window
func.func @dilated(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.dilated<before = 12, after = 8, dilation = 3>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// global tokens alone
func.func @global(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.global<[0, 5, 6, 66]>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// causal strided
func.func @strided(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.strided<stride = 7>]>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// Sparse Transformer fixed, ragged last block
func.func @fixed(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.fixed<stride = 16, c = 3>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// BigBird random blocks
func.func @random(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.random<blocks = 2, block_size = 16, seed = 9>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// explicit block layout
func.func @block(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.block<size = 32, layout = ["110", "010", "101"]>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// BigBird-like union
func.func @union(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.union<[#attn.window<before = 4, after = 4>, #attn.global<[0, 1]>, #attn.random<blocks = 1, block_size = 16, seed = 3>]>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// one pattern per query head (GQA)
func.func @per_head(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.per_head<[#attn.causal, #attn.window<before = 8, after = 0>, #attn.intersect<[#attn.causal, #attn.strided<stride = 4>]>, #attn.fixed<stride = 8, c = 2>]>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// document mask of packed sequences, causal
func.func @segments(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>, %ids: tensor<2x67xi32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value segments(%ids : tensor<2x67xi32>) {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// 29 queries aligned to the end of 67 keys
func.func @lq_lt_lk(%query: tensor<2x4x29x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>) -> tensor<2x4x29x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<2x4x29x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x29x8xf32>
  return %0 : tensor<2x4x29x8xf32>
}

/// 50 queries over 30 keys: the first 20 rows are fully masked (zeros)
func.func @lq_gt_lk(%query: tensor<2x4x50x16xf32>, %key: tensor<2x2x30x16xf32>, %value: tensor<2x2x30x8xf32>) -> tensor<2x4x50x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<2x4x50x16xf32>, tensor<2x2x30x16xf32>, tensor<2x2x30x8xf32> -> tensor<2x4x50x8xf32>
  return %0 : tensor<2x4x50x8xf32>
}

/// an all-zero layout row: queries 32..63 see nothing and give zeros
func.func @masked_rows(%query: tensor<2x4x70x16xf32>, %key: tensor<2x2x50x16xf32>, %value: tensor<2x2x50x8xf32>) -> tensor<2x4x70x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.block<size = 32, layout = ["10", "00", "01"]>}
      : tensor<2x4x70x16xf32>, tensor<2x2x50x16xf32>, tensor<2x2x50x8xf32> -> tensor<2x4x70x8xf32>
  return %0 : tensor<2x4x70x8xf32>
}

/// separate query and key segment ids
func.func @segments_lq_lk(%query: tensor<2x4x29x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>, %qids: tensor<2x29xi64>, %kids: tensor<2x67xi64>) -> tensor<2x4x29x8xf32> {
  %0 = attn.attention %query, %key, %value segments(%qids : tensor<2x29xi64>) key_segments(%kids : tensor<2x67xi64>) {normalizer = #attn.softmax, pattern = #attn.segments}
      : tensor<2x4x29x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x29x8xf32>
  return %0 : tensor<2x4x29x8xf32>
}

/// bias broadcast over the batch, gate, qk-layernorm, explicit scale
func.func @bias_gate_norm(%query: tensor<2x4x67x16xf32>, %key: tensor<2x2x67x16xf32>, %value: tensor<2x2x67x8xf32>, %bias: tensor<1x4x67x67xf32>, %gate: tensor<2x4x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value bias(%bias : tensor<1x4x67x67xf32>) gate(%gate : tensor<2x4x67x8xf32>) {normalizer = #attn.softmax, pattern = #attn.causal, qk_norm_eps = 1.0e-5 : f32, scale = 0.3 : f32}
      : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

/// multi-query attention (one key/value head)
func.func @mqa(%query: tensor<2x4x67x16xf32>, %key: tensor<2x1x67x16xf32>, %value: tensor<2x1x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 9, after = 9>}
      : tensor<2x4x67x16xf32>, tensor<2x1x67x16xf32>, tensor<2x1x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}
