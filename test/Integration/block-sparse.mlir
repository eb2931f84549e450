// Block-sparse kernels (attn-block-sparse, in blocks of 32 x 16) against the
// dense masked scalar reference, f32, normwise relative error <= 1e-5: every
// pattern kind and composition, softmax and relu, L = 130 (ragged blocks),
// grouped-query heads, segment ids (the runtime layout), fully masked rows.
// The remark proves the block-sparse path was taken.
// DEFINE: %{fn} =
// DEFINE: %{check} = attn-run %s --entry %{fn} --pipeline 'attn-block-sparse{block-q=32 block-k=16},attn-lower-to-llvm-pipeline' --remarks --random-inputs --seed 13 --save-inputs %t/%{fn} --output %t/%{fn}.npy 2> %t/%{fn}.log && FileCheck %s --check-prefix=SPARSE --input-file %t/%{fn}.log && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy --rtol 1e-3 --atol 1e-4 --max-rel-err 1e-5
// SPARSE: remark: attn-block-sparse: tiles of 32 queries x 16 keys
// RUN: rm -rf %t && mkdir -p %t
// REDEFINE: %{fn} = causal_softmax
// RUN: %{check}
// REDEFINE: %{fn} = causal_relu
// RUN: %{check}
// REDEFINE: %{fn} = window_softmax
// RUN: %{check}
// REDEFINE: %{fn} = window_relu
// RUN: %{check}
// REDEFINE: %{fn} = dilated_softmax
// RUN: %{check}
// REDEFINE: %{fn} = dilated_relu
// RUN: %{check}
// REDEFINE: %{fn} = global_softmax
// RUN: %{check}
// REDEFINE: %{fn} = global_relu
// RUN: %{check}
// REDEFINE: %{fn} = strided_softmax
// RUN: %{check}
// REDEFINE: %{fn} = strided_relu
// RUN: %{check}
// REDEFINE: %{fn} = fixed_softmax
// RUN: %{check}
// REDEFINE: %{fn} = fixed_relu
// RUN: %{check}
// REDEFINE: %{fn} = random_softmax
// RUN: %{check}
// REDEFINE: %{fn} = random_relu
// RUN: %{check}
// REDEFINE: %{fn} = block_softmax
// RUN: %{check}
// REDEFINE: %{fn} = block_relu
// RUN: %{check}
// REDEFINE: %{fn} = bigbird_softmax
// RUN: %{check}
// REDEFINE: %{fn} = bigbird_relu
// RUN: %{check}
// REDEFINE: %{fn} = per_head_softmax
// RUN: %{check}
// REDEFINE: %{fn} = per_head_relu
// RUN: %{check}
// REDEFINE: %{fn} = segments_softmax
// RUN: %{check}
// REDEFINE: %{fn} = segments_relu
// RUN: %{check}
// REDEFINE: %{fn} = masked_rows_softmax
// RUN: %{check}
// REDEFINE: %{fn} = masked_rows_relu
// RUN: %{check}

func.func @causal_softmax(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @causal_relu(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.causal}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @window_softmax(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 20, after = 5>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @window_relu(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.window<before = 20, after = 5>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @dilated_softmax(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.dilated<before = 40, after = 10, dilation = 3>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @dilated_relu(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.dilated<before = 40, after = 10, dilation = 3>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @global_softmax(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.union<[#attn.window<before = 8, after = 8>, #attn.global<[0, 1, 77]>]>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @global_relu(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.union<[#attn.window<before = 8, after = 8>, #attn.global<[0, 1, 77]>]>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @strided_softmax(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.strided<stride = 17>]>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @strided_relu(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.intersect<[#attn.causal, #attn.strided<stride = 17>]>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @fixed_softmax(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.fixed<stride = 32, c = 4>]>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @fixed_relu(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.intersect<[#attn.causal, #attn.fixed<stride = 32, c = 4>]>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @random_softmax(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.random<blocks = 2, block_size = 32, seed = 11>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @random_relu(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.random<blocks = 2, block_size = 32, seed = 11>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @block_softmax(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.block<size = 48, layout = ["100", "010", "011"]>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @block_relu(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.block<size = 48, layout = ["100", "010", "011"]>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @bigbird_softmax(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.union<[#attn.window<before = 16, after = 16>, #attn.global<[0]>, #attn.random<blocks = 1, block_size = 16, seed = 2>]>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @bigbird_relu(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.union<[#attn.window<before = 16, after = 16>, #attn.global<[0]>, #attn.random<blocks = 1, block_size = 16, seed = 2>]>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @per_head_softmax(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.per_head<[#attn.causal, #attn.window<before = 8, after = 0>, #attn.intersect<[#attn.causal, #attn.strided<stride = 5>]>, #attn.block<size = 64, layout = ["100", "110", "011"]>]>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @per_head_relu(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.per_head<[#attn.causal, #attn.window<before = 8, after = 0>, #attn.intersect<[#attn.causal, #attn.strided<stride = 5>]>, #attn.block<size = 64, layout = ["100", "110", "011"]>]>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @segments_softmax(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>, %ids: tensor<2x130xi32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value segments(%ids : tensor<2x130xi32>) {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

func.func @segments_relu(%query: tensor<2x4x130x16xf32>, %key: tensor<2x2x130x16xf32>, %value: tensor<2x2x130x8xf32>, %ids: tensor<2x130xi32>) -> tensor<2x4x130x8xf32> {
  %0 = attn.attention %query, %key, %value segments(%ids : tensor<2x130xi32>) {normalizer = #attn.pointwise<relu>, pattern = #attn.intersect<[#attn.causal, #attn.segments]>}
      : tensor<2x4x130x16xf32>, tensor<2x2x130x16xf32>, tensor<2x2x130x8xf32> -> tensor<2x4x130x8xf32>
  return %0 : tensor<2x4x130x8xf32>
}

/// 90 queries over 50 keys, causal: the first 40 rows see nothing (zeros).
func.func @masked_rows_softmax(%query: tensor<2x4x90x16xf32>, %key: tensor<2x2x50x16xf32>, %value: tensor<2x2x50x8xf32>) -> tensor<2x4x90x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<2x4x90x16xf32>, tensor<2x2x50x16xf32>, tensor<2x2x50x8xf32> -> tensor<2x4x90x8xf32>
  return %0 : tensor<2x4x90x8xf32>
}

/// 90 queries over 50 keys, causal: the first 40 rows see nothing (zeros).
func.func @masked_rows_relu(%query: tensor<2x4x90x16xf32>, %key: tensor<2x2x50x16xf32>, %value: tensor<2x2x50x8xf32>) -> tensor<2x4x90x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.causal}
      : tensor<2x4x90x16xf32>, tensor<2x2x50x16xf32>, tensor<2x2x50x8xf32> -> tensor<2x4x90x8xf32>
  return %0 : tensor<2x4x90x8xf32>
}
