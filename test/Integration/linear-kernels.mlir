// The fused linear-attention kernels (attn-linear-kernels: the feature map
// applied as phi(K)^T V, the key sum and phi(Q) S / (phi(Q) z) read their
// rows) against the scalar reference's quadratic form: elu+1 and relu,
// odd lengths (77, 300, Lq != Lk), grouped-query heads, Dv != D, a gate,
// the op's scale (input_scale of the maps), eps, bf16 inputs, key chunks run
// in parallel and summed (few heads, Lk = 1000), at 8 and 16 lanes; FAVOR+
// features (seeded, and from a projection operand, with the op's scale and
// GQA; several blocks of W^T and of S; tiles of queries, whole and
// partial, and a single query). The remarks prove the fused kernels
// ran.
// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{fn} =
// DEFINE: %{opts} = vector-width=8
// DEFINE: %{tol} = --rtol 1e-4 --atol 1e-5
// DEFINE: %{check} = attn-run %s --entry %{fn} --pipeline="attn-lower-to-llvm-pipeline{%{opts}}" --remarks --random-inputs --seed 9 --save-inputs %t/%{fn} --output %t/%{fn}.npy 2> %t/%{fn}.log > /dev/null && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy %{tol} && FileCheck %s --check-prefix=FUSED < %t/%{fn}.log
// FUSED: remark: attn-linear-kernels: phi(K)^T V and the key sum fused with the feature map
// FUSED: remark: attn-linear-kernels: phi(Q) S / (phi(Q) z) fused with the feature map
// REDEFINE: %{fn} = elu_gqa
// RUN: %{check}
// REDEFINE: %{fn} = relu_scaled_gate
// RUN: %{check}
// REDEFINE: %{fn} = chunks
// RUN: %{check}
// REDEFINE: %{opts} = vector-width=16
// RUN: %{check}
// REDEFINE: %{fn} = relu_scaled_gate
// RUN: %{check}
// REDEFINE: %{opts} = vector-width=8
// REDEFINE: %{tol} = --rtol 1e-2 --atol 1e-2
// REDEFINE: %{fn} = elu_bf16
// RUN: %{check}
// REDEFINE: %{tol} = --rtol 1e-4 --atol 1e-5
// REDEFINE: %{fn} = favor
// RUN: %{check}
// REDEFINE: %{fn} = favor_projection
// RUN: %{check}
// REDEFINE: %{fn} = favor_chunks
// RUN: %{check}
// REDEFINE: %{fn} = favor_blocks
// RUN: %{check}
// REDEFINE: %{fn} = favor_decode
// REDEFINE: %{opts} = vector-width=8 reassociate=linear
// RUN: %{check}
// REDEFINE: %{fn} = favor_blocks
// REDEFINE: %{opts} = vector-width=16
// RUN: %{check}
// REDEFINE: %{fn} = favor_chunks
// RUN: %{check}

func.func @elu_gqa(%query: tensor<2x4x77x32xf32>, %key: tensor<2x2x300x32xf32>, %value: tensor<2x2x300x24xf32>) -> tensor<2x4x77x24xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>} : tensor<2x4x77x32xf32>, tensor<2x2x300x32xf32>, tensor<2x2x300x24xf32> -> tensor<2x4x77x24xf32>
  return %0 : tensor<2x4x77x24xf32>
}

func.func @relu_scaled_gate(%query: tensor<1x3x300x16xf32>, %key: tensor<1x3x77x16xf32>, %value: tensor<1x3x77x32xf32>, %gate: tensor<1x3x300x32xf32>) -> tensor<1x3x300x32xf32> {
  %0 = attn.attention %query, %key, %value gate(%gate : tensor<1x3x300x32xf32>) {normalizer = #attn.kernel<relu, eps = 1.0e-3>, scale = 0.25 : f32} : tensor<1x3x300x16xf32>, tensor<1x3x77x16xf32>, tensor<1x3x77x32xf32> -> tensor<1x3x300x32xf32>
  return %0 : tensor<1x3x300x32xf32>
}

func.func @chunks(%query: tensor<1x2x100x16xf32>, %key: tensor<1x1x1000x16xf32>, %value: tensor<1x1x1000x16xf32>) -> tensor<1x2x100x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>} : tensor<1x2x100x16xf32>, tensor<1x1x1000x16xf32>, tensor<1x1x1000x16xf32> -> tensor<1x2x100x16xf32>
  return %0 : tensor<1x2x100x16xf32>
}

func.func @elu_bf16(%query: tensor<1x2x77x32xbf16>, %key: tensor<1x2x77x32xbf16>, %value: tensor<1x2x77x32xbf16>) -> tensor<1x2x77x32xbf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>} : tensor<1x2x77x32xbf16>, tensor<1x2x77x32xbf16>, tensor<1x2x77x32xbf16> -> tensor<1x2x77x32xbf16>
  return %0 : tensor<1x2x77x32xbf16>
}

func.func @favor(%query: tensor<1x2x77x16xf32>, %key: tensor<1x2x300x16xf32>, %value: tensor<1x2x300x16xf32>) -> tensor<1x2x77x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<favor, features = 32, seed = 3>} : tensor<1x2x77x16xf32>, tensor<1x2x300x16xf32>, tensor<1x2x300x16xf32> -> tensor<1x2x77x16xf32>
  return %0 : tensor<1x2x77x16xf32>
}

func.func @favor_projection(%query: tensor<2x4x77x16xf32>, %key: tensor<2x2x77x16xf32>, %value: tensor<2x2x77x32xf32>, %w: tensor<48x16xf32>) -> tensor<2x4x77x32xf32> {
  %0 = attn.attention %query, %key, %value projection(%w : tensor<48x16xf32>) {normalizer = #attn.kernel<favor, features = 48>, scale = 0.25 : f32} : tensor<2x4x77x16xf32>, tensor<2x2x77x16xf32>, tensor<2x2x77x32xf32> -> tensor<2x4x77x32xf32>
  return %0 : tensor<2x4x77x32xf32>
}

// One head, Lk = 1000: three key chunks, the last block of each short.
func.func @favor_chunks(%query: tensor<1x1x50x16xf32>, %key: tensor<1x1x1000x16xf32>, %value: tensor<1x1x1000x16xf32>) -> tensor<1x1x50x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<favor, features = 16, seed = 5>, scale = 0.25 : f32} : tensor<1x1x50x16xf32>, tensor<1x1x1000x16xf32>, tensor<1x1x1000x16xf32> -> tensor<1x1x50x16xf32>
  return %0 : tensor<1x1x50x16xf32>
}

// 96 features, Dv = 128: W^T in 4 blocks of 24 features at 8 lanes (one of
// 96 at 16), O = phi(Q) S in 3 blocks of 32 features (32 x 128 floats of
// S each), 300 queries: two full tiles of 128 and a partial one.
func.func @favor_blocks(%query: tensor<1x2x300x16xf32>, %key: tensor<1x2x77x16xf32>, %value: tensor<1x2x77x128xf32>) -> tensor<1x2x300x128xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<favor, features = 96, seed = 7>, scale = 0.25 : f32} : tensor<1x2x300x16xf32>, tensor<1x2x77x16xf32>, tensor<1x2x77x128xf32> -> tensor<1x2x300x128xf32>
  return %0 : tensor<1x2x300x128xf32>
}

// One query (a decode step; the linear form forced, the cost model keeps
// the quadratic one): a tile of 4 rows, the query's features and three
// copies.
func.func @favor_decode(%query: tensor<1x2x1x16xf32>, %key: tensor<1x2x300x16xf32>, %value: tensor<1x2x300x16xf32>) -> tensor<1x2x1x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<favor, features = 32, seed = 11>} : tensor<1x2x1x16xf32>, tensor<1x2x300x16xf32>, tensor<1x2x300x16xf32> -> tensor<1x2x1x16xf32>
  return %0 : tensor<1x2x1x16xf32>
}
