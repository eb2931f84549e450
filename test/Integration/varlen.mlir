// Varlen batches against the scalar reference (attn-ref reads the lengths
// and offsets): padded batches (query_lengths / key_lengths, B = 6 with
// query lengths 0, 1, 300 (full), 17, 70, 9 and key lengths 5, 1, 300, 130,
// 33, 0: an empty sequence, a single token, a full one, a sequence without
// keys) and packed batches (FlashAttention's cu_seqlens: six sequences with
// the same lengths one after the other, rows past the last offset left
// over), for every normalizer, with patterns, segments and a gate. The
// buffers have dynamic lengths. Padded query rows and rows outside every
// sequence must be zeros (attn-ref checks every element). Then random
// lengths and offsets at several sizes from one compilation.
// RUN: rm -rf %t && mkdir -p %t/in
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/lq.npy --dtype '<i4' --shape 6 --values 0,1,300,17,70,9
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/lk.npy --dtype '<i4' --shape 6 --values 5,1,300,130,33,0
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/cq.npy --dtype '<i4' --shape 7 --values 0,0,1,301,318,388,397
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/ck.npy --dtype '<i4' --shape 7 --values 0,5,6,306,436,469,469
// DEFINE: %{fn} =
// DEFINE: %{args} =
// DEFINE: %{check} = attn-run %s --entry %{fn} --random-inputs --seed 3 %{args} --save-inputs %t/%{fn} --output %t/%{fn}.npy > %t/%{fn}.out && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy --rtol 1e-4 --atol 1e-5
// DEFINE: %{padded} = --input lq=%t/in/lq.npy --input lk=%t/in/lk.npy --shape query=6x4x300x16 --shape key=6x2x300x16 --shape value=6x2x300x8
// DEFINE: %{packed} = --input cq=%t/in/cq.npy --input ck=%t/in/ck.npy --shape query=1x4x400x16 --shape key=1x2x480x16 --shape value=1x2x480x8
// REDEFINE: %{fn} = padded_softmax
// REDEFINE: %{args} = %{padded}
// RUN: %{check}
// REDEFINE: %{fn} = padded_causal_softmax
// REDEFINE: %{args} = %{padded}
// RUN: %{check}
// REDEFINE: %{fn} = padded_relu
// REDEFINE: %{args} = %{padded}
// RUN: %{check}
// REDEFINE: %{fn} = padded_causal_kernel
// REDEFINE: %{args} = %{padded}
// RUN: %{check}
// REDEFINE: %{fn} = padded_window_global
// REDEFINE: %{args} = %{padded}
// RUN: %{check}
// REDEFINE: %{fn} = padded_segments_relu
// REDEFINE: %{args} = %{padded} --shape segments=6x300
// RUN: %{check}
// REDEFINE: %{fn} = packed_softmax
// REDEFINE: %{args} = %{packed}
// RUN: %{check}
// REDEFINE: %{fn} = packed_causal_softmax
// REDEFINE: %{args} = %{packed}
// RUN: %{check}
// REDEFINE: %{fn} = packed_causal_gelu
// REDEFINE: %{args} = %{packed}
// RUN: %{check}
// REDEFINE: %{fn} = packed_kernel
// REDEFINE: %{args} = %{packed}
// RUN: %{check}
// REDEFINE: %{fn} = packed_dilated_gated
// REDEFINE: %{args} = %{packed} --shape gate=1x4x400x8
// RUN: %{check}

/// Padding holds NaN (query rows past each sequence, key and value rows past
/// the keys): no lowering reads it into a result (the fused kernels, the
/// reference lowering of --check, the emulated GPU kernels); attn-ref fails
/// on any non-finite element.
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/nq.npy --shape 2,4,40,16 --random 1 --nan-rows 30
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/nk.npy --shape 2,2,50,16 --random 2 --nan-rows 33
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/nv.npy --shape 2,2,50,8 --random 3 --nan-rows 33
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/nlq.npy --dtype '<i4' --shape 2 --values 30,17
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/nlk.npy --dtype '<i4' --shape 2 --values 33,10
// DEFINE: %{nan} = --input query=%t/in/nq.npy --input key=%t/in/nk.npy --input value=%t/in/nv.npy --input lq=%t/in/nlq.npy --input lk=%t/in/nlk.npy
// RUN: attn-run %s --entry nan_padding %{nan} --check --save-inputs %t/nan --output %t/nan.npy | FileCheck %s --check-prefix=FINITE
// RUN: attn-ref %s --entry nan_padding --inputs %t/nan --compare %t/nan.npy
// RUN: attn-run %s --entry nan_padding %{nan} --target=gpu-emulator --output %t/nan_gpu.npy | FileCheck %s --check-prefix=FINITE
// RUN: attn-ref %s --entry nan_padding --inputs %t/nan --compare %t/nan_gpu.npy
// FINITE: result result0: 2x4x40x8xf32 mean={{[-0-9.e]+}} max_abs={{[0-9.e-]+}}{{$}}


/// Random lengths (in [0, Lq] and [0, Lk]) and offsets at several sizes, one
/// compilation.
// RUN: attn-run %s --entry random_padded --random-inputs --seed 9 --shape query=3x4x1x16,2x4x65x16,4x4x200x16 --shape key=3x2x1x16,2x2x65x16,4x2x77x16 --shape value=3x2x1x8,2x2x65x8,4x2x77x8 --save-inputs %t/random_padded --output %t/random_padded.npy > %t/random_padded.out
// RUN: attn-ref %s --entry random_padded --inputs %t/random_padded --compare %t/random_padded.npy --runs 3
// RUN: attn-run %s --entry packed_causal_softmax --random-inputs --seed 9 --shape query=1x4x1x16,1x4x130x16,1x4x300x16 --shape key=1x2x1x16,1x2x100x16,1x2x300x16 --shape value=1x2x1x8,1x2x100x8,1x2x300x8 --shape cq=2,5,9 --shape ck=2,5,9 --save-inputs %t/random_packed --output %t/random_packed.npy > %t/random_packed.out
// RUN: attn-ref %s --entry packed_causal_softmax --inputs %t/random_packed --compare %t/random_packed.npy --runs 3


func.func @padded_softmax(%query: tensor<6x4x?x16xf32>, %key: tensor<6x2x?x16xf32>, %value: tensor<6x2x?x8xf32>, %lq: tensor<6xi32>, %lk: tensor<6xi32>) -> tensor<6x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value query_lengths(%lq : tensor<6xi32>) key_lengths(%lk : tensor<6xi32>) {normalizer = #attn.softmax}
    : tensor<6x4x?x16xf32>, tensor<6x2x?x16xf32>, tensor<6x2x?x8xf32> -> tensor<6x4x?x8xf32>
  return %0 : tensor<6x4x?x8xf32>
}

func.func @padded_causal_softmax(%query: tensor<6x4x?x16xf32>, %key: tensor<6x2x?x16xf32>, %value: tensor<6x2x?x8xf32>, %lq: tensor<6xi32>, %lk: tensor<6xi32>) -> tensor<6x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value query_lengths(%lq : tensor<6xi32>) key_lengths(%lk : tensor<6xi32>) {normalizer = #attn.softmax, pattern = #attn.causal}
    : tensor<6x4x?x16xf32>, tensor<6x2x?x16xf32>, tensor<6x2x?x8xf32> -> tensor<6x4x?x8xf32>
  return %0 : tensor<6x4x?x8xf32>
}

func.func @padded_relu(%query: tensor<6x4x?x16xf32>, %key: tensor<6x2x?x16xf32>, %value: tensor<6x2x?x8xf32>, %lq: tensor<6xi32>, %lk: tensor<6xi32>) -> tensor<6x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value query_lengths(%lq : tensor<6xi32>) key_lengths(%lk : tensor<6xi32>) {normalizer = #attn.pointwise<relu>}
    : tensor<6x4x?x16xf32>, tensor<6x2x?x16xf32>, tensor<6x2x?x8xf32> -> tensor<6x4x?x8xf32>
  return %0 : tensor<6x4x?x8xf32>
}

func.func @padded_causal_kernel(%query: tensor<6x4x?x16xf32>, %key: tensor<6x2x?x16xf32>, %value: tensor<6x2x?x8xf32>, %lq: tensor<6xi32>, %lk: tensor<6xi32>) -> tensor<6x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value query_lengths(%lq : tensor<6xi32>) key_lengths(%lk : tensor<6xi32>) {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal}
    : tensor<6x4x?x16xf32>, tensor<6x2x?x16xf32>, tensor<6x2x?x8xf32> -> tensor<6x4x?x8xf32>
  return %0 : tensor<6x4x?x8xf32>
}

func.func @padded_window_global(%query: tensor<6x4x?x16xf32>, %key: tensor<6x2x?x16xf32>, %value: tensor<6x2x?x8xf32>, %lq: tensor<6xi32>, %lk: tensor<6xi32>) -> tensor<6x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value query_lengths(%lq : tensor<6xi32>) key_lengths(%lk : tensor<6xi32>) {normalizer = #attn.softmax, pattern = #attn.union<[#attn.window<before = 16, after = 0>, #attn.global<[0, 2, 100]>]>}
    : tensor<6x4x?x16xf32>, tensor<6x2x?x16xf32>, tensor<6x2x?x8xf32> -> tensor<6x4x?x8xf32>
  return %0 : tensor<6x4x?x8xf32>
}

func.func @padded_segments_relu(%query: tensor<6x4x?x16xf32>, %key: tensor<6x2x?x16xf32>, %value: tensor<6x2x?x8xf32>, %lq: tensor<6xi32>, %lk: tensor<6xi32>, %segments: tensor<6x?xi32>) -> tensor<6x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value segments(%segments : tensor<6x?xi32>) query_lengths(%lq : tensor<6xi32>) key_lengths(%lk : tensor<6xi32>) {normalizer = #attn.pointwise<relu2>, pattern = #attn.intersect<[#attn.causal, #attn.segments]>}
    : tensor<6x4x?x16xf32>, tensor<6x2x?x16xf32>, tensor<6x2x?x8xf32> -> tensor<6x4x?x8xf32>
  return %0 : tensor<6x4x?x8xf32>
}

func.func @packed_softmax(%query: tensor<1x4x?x16xf32>, %key: tensor<1x2x?x16xf32>, %value: tensor<1x2x?x8xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value query_offsets(%cq : tensor<?xi32>) key_offsets(%ck : tensor<?xi32>) {normalizer = #attn.softmax}
    : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32> -> tensor<1x4x?x8xf32>
  return %0 : tensor<1x4x?x8xf32>
}

func.func @packed_causal_softmax(%query: tensor<1x4x?x16xf32>, %key: tensor<1x2x?x16xf32>, %value: tensor<1x2x?x8xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value query_offsets(%cq : tensor<?xi32>) key_offsets(%ck : tensor<?xi32>) {normalizer = #attn.softmax, pattern = #attn.causal}
    : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32> -> tensor<1x4x?x8xf32>
  return %0 : tensor<1x4x?x8xf32>
}

func.func @packed_causal_gelu(%query: tensor<1x4x?x16xf32>, %key: tensor<1x2x?x16xf32>, %value: tensor<1x2x?x8xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value query_offsets(%cq : tensor<?xi32>) key_offsets(%ck : tensor<?xi32>) {normalizer = #attn.pointwise<gelu, alpha = 0.5>, pattern = #attn.causal}
    : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32> -> tensor<1x4x?x8xf32>
  return %0 : tensor<1x4x?x8xf32>
}

func.func @packed_kernel(%query: tensor<1x4x?x16xf32>, %key: tensor<1x2x?x16xf32>, %value: tensor<1x2x?x8xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value query_offsets(%cq : tensor<?xi32>) key_offsets(%ck : tensor<?xi32>) {normalizer = #attn.kernel<elu_plus_one>}
    : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32> -> tensor<1x4x?x8xf32>
  return %0 : tensor<1x4x?x8xf32>
}

func.func @packed_dilated_gated(%query: tensor<1x4x?x16xf32>, %key: tensor<1x2x?x16xf32>, %value: tensor<1x2x?x8xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>, %gate: tensor<1x4x?x8xf32>) -> tensor<1x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value gate(%gate : tensor<1x4x?x8xf32>) query_offsets(%cq : tensor<?xi32>) key_offsets(%ck : tensor<?xi32>) {normalizer = #attn.softmax, pattern = #attn.dilated<before = 30, after = 30, dilation = 2>}
    : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32> -> tensor<1x4x?x8xf32>
  return %0 : tensor<1x4x?x8xf32>
}

func.func @random_padded(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>, %lq: tensor<?xi32>, %lk: tensor<?xi32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value query_lengths(%lq : tensor<?xi32>) key_lengths(%lk : tensor<?xi32>) {normalizer = #attn.softmax, pattern = #attn.causal}
    : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}

func.func @nan_padding(%query: tensor<2x4x?x16xf32>, %key: tensor<2x2x?x16xf32>, %value: tensor<2x2x?x8xf32>, %lq: tensor<2xi32>, %lk: tensor<2xi32>) -> tensor<2x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value query_lengths(%lq : tensor<2xi32>) key_lengths(%lk : tensor<2xi32>) {normalizer = #attn.softmax, pattern = #attn.window<before = 12, after = 3>}
    : tensor<2x4x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x8xf32> -> tensor<2x4x?x8xf32>
  return %0 : tensor<2x4x?x8xf32>
}
