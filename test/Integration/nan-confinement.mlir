// A NaN or an infinity in Q, K or V reaches only the rows that see it
// (issue 40), for every normalizer family (softmax, pointwise relu and
// sigmoid, kernelized elu+1, relu and FAVOR+) and for causal and window
// patterns: query rows from 25 on are bad in Q, or keys from 25 on in K
// or V, and rows 0..24, which see no bad key (and are no bad query), must
// stay finite (nan_rows.py --confined; what rows from 25 hold is not
// checked: an infinite score may well give a finite row). On the CPU
// kernels (f32, bf16 pairs native and emulated, a grouped decode tile),
// the reference lowering and the GPU emulator. A bad value is the hard
// case: a masked key's weight is 0, and 0 x NaN is NaN, so every kernel
// drops the values of zero weights in partially masked blocks (and in the
// diagonal blocks of the causal linear form). nan-scores.mlir checks that
// NaN keys make the rows that see them NaN.
// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{npy} = %python %S/../Runner/Inputs/make_npy.py
// RUN: %{npy} %t/q.npy --shape 1,2,40,16 --random 1
// RUN: %{npy} %t/k.npy --shape 1,2,40,16 --random 2
// RUN: %{npy} %t/v.npy --shape 1,2,40,16 --random 3
// RUN: %{npy} %t/q_nan.npy --shape 1,2,40,16 --random 1 --nan-rows 25
// RUN: %{npy} %t/q_inf.npy --shape 1,2,40,16 --random 1 --nan-rows 25 --bad-value=inf
// RUN: %{npy} %t/k_nan.npy --shape 1,2,40,16 --random 2 --nan-rows 25
// RUN: %{npy} %t/k_inf.npy --shape 1,2,40,16 --random 2 --nan-rows 25 --bad-value=-inf
// RUN: %{npy} %t/v_nan.npy --shape 1,2,40,16 --random 3 --nan-rows 25
// RUN: %{npy} %t/v_inf.npy --shape 1,2,40,16 --random 3 --nan-rows 25 --bad-value=inf
// RUN: %{npy} %t/q_bf16.npy --dtype bf16 --shape 1,2,40,16 --random 1
// RUN: %{npy} %t/k_bf16.npy --dtype bf16 --shape 1,2,40,16 --random 2
// RUN: %{npy} %t/v_nan_bf16.npy --dtype bf16 --shape 1,2,40,16 --random 3 --nan-rows 25
// RUN: %{npy} %t/q_decode.npy --shape 1,8,4,16 --random 1
// RUN: %{npy} %t/v_decode.npy --shape 1,2,40,16 --random 3 --nan-rows 38
// DEFINE: %{fn} =
// DEFINE: %{q} =
// DEFINE: %{k} =
// DEFINE: %{v} = v
// DEFINE: %{flags} =
// DEFINE: %{first} = 25
// DEFINE: %{target} = cpu
// DEFINE: %{check} = attn-run %s --entry %{fn} --target=%{target} %{flags} --input query=%t/%{q}.npy --input key=%t/%{k}.npy --input value=%t/%{v}.npy --output %t/out.npy > /dev/null && %python %S/Inputs/nan_rows.py %t/out.npy --first-nan %{first} --confined
// REDEFINE: %{fn} = softmax_causal
// REDEFINE: %{q} = q_nan
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{q} = q_inf
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k_nan
// RUN: %{check}
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k_inf
// RUN: %{check}
// REDEFINE: %{fn} = softmax_window
// REDEFINE: %{q} = q_nan
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{q} = q_inf
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k_nan
// RUN: %{check}
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k_inf
// RUN: %{check}
// REDEFINE: %{fn} = relu_causal
// REDEFINE: %{q} = q_nan
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{q} = q_inf
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k_nan
// RUN: %{check}
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k_inf
// RUN: %{check}
// REDEFINE: %{fn} = sigmoid_causal
// REDEFINE: %{q} = q_nan
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{q} = q_inf
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k_nan
// RUN: %{check}
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k_inf
// RUN: %{check}
// REDEFINE: %{fn} = linear_causal
// REDEFINE: %{q} = q_nan
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{q} = q_inf
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k_nan
// RUN: %{check}
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k_inf
// RUN: %{check}
// REDEFINE: %{fn} = linear_relu_causal
// REDEFINE: %{q} = q_nan
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{q} = q_inf
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k_nan
// RUN: %{check}
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k_inf
// RUN: %{check}
// REDEFINE: %{fn} = favor_causal
// REDEFINE: %{q} = q_nan
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{q} = q_inf
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k_nan
// RUN: %{check}
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k_inf
// RUN: %{check}
// REDEFINE: %{fn} = softmax_dense
// REDEFINE: %{q} = q_nan
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{q} = q_inf
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{fn} = linear_dense
// REDEFINE: %{q} = q_nan
// REDEFINE: %{k} = k
// RUN: %{check}
// REDEFINE: %{q} = q_inf
// REDEFINE: %{k} = k
// RUN: %{check}
// NaN and inf in V (rows 0..24 see none of keys 25..39).
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k
// REDEFINE: %{v} = v_nan
// REDEFINE: %{fn} = softmax_causal
// RUN: %{check}
// REDEFINE: %{fn} = softmax_window
// RUN: %{check}
// REDEFINE: %{fn} = relu_causal
// RUN: %{check}
// REDEFINE: %{fn} = sigmoid_causal
// RUN: %{check}
// REDEFINE: %{fn} = linear_causal
// RUN: %{check}
// REDEFINE: %{fn} = linear_relu_causal
// RUN: %{check}
// REDEFINE: %{fn} = favor_causal
// RUN: %{check}
// REDEFINE: %{fn} = softmax_causal_bf16
// REDEFINE: %{q} = q_bf16
// REDEFINE: %{k} = k_bf16
// REDEFINE: %{v} = v_nan_bf16
// RUN: %{check}
// REDEFINE: %{flags} = --pipeline="attn-lower-to-llvm-pipeline{bf16-dot=emulated}"
// RUN: %{check}
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k
// REDEFINE: %{v} = v_nan
// REDEFINE: %{flags} = --reference
// REDEFINE: %{fn} = softmax_causal
// RUN: %{check}
// REDEFINE: %{fn} = relu_causal
// RUN: %{check}
// REDEFINE: %{fn} = linear_causal
// RUN: %{check}
// REDEFINE: %{flags} =
// REDEFINE: %{v} = v_inf
// REDEFINE: %{fn} = softmax_causal
// RUN: %{check}
// REDEFINE: %{fn} = relu_causal
// RUN: %{check}
// REDEFINE: %{fn} = linear_causal
// RUN: %{check}
// REDEFINE: %{fn} = favor_causal
// RUN: %{check}
// A grouped decode tile (4 queries of 4 heads per key/value head, causal
// from key 36): values from key 38 on are NaN, queries 0 and 1 see keys up
// to 36 and 37.
// REDEFINE: %{fn} = decode_causal
// REDEFINE: %{q} = q_decode
// REDEFINE: %{v} = v_decode
// REDEFINE: %{first} = 2
// RUN: %{check}
// REDEFINE: %{first} = 25
// REDEFINE: %{q} = q
// REDEFINE: %{v} = v
// REDEFINE: %{target} = gpu-emulator
// REDEFINE: %{q} = q
// REDEFINE: %{k} = k_nan
// REDEFINE: %{fn} = softmax_causal
// RUN: %{check}
// REDEFINE: %{fn} = softmax_window
// RUN: %{check}
// REDEFINE: %{fn} = relu_causal
// RUN: %{check}
// REDEFINE: %{fn} = sigmoid_causal
// RUN: %{check}
// REDEFINE: %{fn} = linear_causal
// RUN: %{check}
// REDEFINE: %{fn} = linear_relu_causal
// RUN: %{check}
// REDEFINE: %{fn} = favor_causal
// RUN: %{check}
// REDEFINE: %{k} = k
// REDEFINE: %{v} = v_nan
// REDEFINE: %{fn} = softmax_causal
// RUN: %{check}
// REDEFINE: %{fn} = softmax_window
// RUN: %{check}
// REDEFINE: %{fn} = relu_causal
// RUN: %{check}
// REDEFINE: %{fn} = sigmoid_causal
// RUN: %{check}
// REDEFINE: %{fn} = linear_causal
// RUN: %{check}
// REDEFINE: %{fn} = linear_relu_causal
// RUN: %{check}
// REDEFINE: %{fn} = favor_causal
// RUN: %{check}

func.func @softmax_causal(%query: tensor<1x2x40x16xf32>, %key: tensor<1x2x40x16xf32>, %value: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}

func.func @softmax_window(%query: tensor<1x2x40x16xf32>, %key: tensor<1x2x40x16xf32>, %value: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 3, after = 0>} : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}

func.func @relu_causal(%query: tensor<1x2x40x16xf32>, %key: tensor<1x2x40x16xf32>, %value: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.causal} : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}

func.func @sigmoid_causal(%query: tensor<1x2x40x16xf32>, %key: tensor<1x2x40x16xf32>, %value: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<sigmoid>, pattern = #attn.causal} : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}

func.func @linear_causal(%query: tensor<1x2x40x16xf32>, %key: tensor<1x2x40x16xf32>, %value: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal} : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}

func.func @linear_relu_causal(%query: tensor<1x2x40x16xf32>, %key: tensor<1x2x40x16xf32>, %value: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<relu>, pattern = #attn.causal} : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}

func.func @favor_causal(%query: tensor<1x2x40x16xf32>, %key: tensor<1x2x40x16xf32>, %value: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<favor, features = 24, seed = 1>, pattern = #attn.causal} : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}

func.func @softmax_dense(%query: tensor<1x2x40x16xf32>, %key: tensor<1x2x40x16xf32>, %value: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax} : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}

func.func @linear_dense(%query: tensor<1x2x40x16xf32>, %key: tensor<1x2x40x16xf32>, %value: tensor<1x2x40x16xf32>) -> tensor<1x2x40x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>} : tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x2x40x16xf32>
  return %0 : tensor<1x2x40x16xf32>
}

func.func @softmax_causal_bf16(%query: tensor<1x2x40x16xbf16>, %key: tensor<1x2x40x16xbf16>, %value: tensor<1x2x40x16xbf16>) -> tensor<1x2x40x16xbf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x2x40x16xbf16>, tensor<1x2x40x16xbf16>, tensor<1x2x40x16xbf16> -> tensor<1x2x40x16xbf16>
  return %0 : tensor<1x2x40x16xbf16>
}

func.func @decode_causal(%query: tensor<1x8x4x16xf32>, %key: tensor<1x2x40x16xf32>, %value: tensor<1x2x40x16xf32>) -> tensor<1x8x4x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x8x4x16xf32>, tensor<1x2x40x16xf32>, tensor<1x2x40x16xf32> -> tensor<1x8x4x16xf32>
  return %0 : tensor<1x8x4x16xf32>
}
