// A NaN or an infinity in Q or K reaches only the rows that see it (issue
// 40), for every normalizer family (softmax, pointwise relu and sigmoid,
// kernelized elu+1, relu and FAVOR+) and for causal and window patterns:
// query rows from 25 on are bad in Q, or keys from 25 on in K, and rows
// 0..24, which see no bad key (and are no bad query), must stay finite
// (nan_rows.py --confined; what rows from 25 hold is not checked: an
// infinite score may well give a finite row). On the CPU kernels and,
// for NaN keys, on the GPU emulator. nan-scores.mlir checks that NaN keys
// make the rows that see them NaN.
// (A NaN in V still reaches earlier rows through the zero weights of
// masked keys in partially masked blocks, 0 x NaN: not yet confined.)
// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{npy} = %python %S/../Runner/Inputs/make_npy.py
// RUN: %{npy} %t/q.npy --shape 1,2,40,16 --random 1
// RUN: %{npy} %t/k.npy --shape 1,2,40,16 --random 2
// RUN: %{npy} %t/v.npy --shape 1,2,40,16 --random 3
// RUN: %{npy} %t/q_nan.npy --shape 1,2,40,16 --random 1 --nan-rows 25
// RUN: %{npy} %t/q_inf.npy --shape 1,2,40,16 --random 1 --nan-rows 25 --bad-value=inf
// RUN: %{npy} %t/k_nan.npy --shape 1,2,40,16 --random 2 --nan-rows 25
// RUN: %{npy} %t/k_inf.npy --shape 1,2,40,16 --random 2 --nan-rows 25 --bad-value=-inf
// DEFINE: %{fn} =
// DEFINE: %{q} =
// DEFINE: %{k} =
// DEFINE: %{target} = cpu
// DEFINE: %{check} = attn-run %s --entry %{fn} --target=%{target} --input query=%t/%{q}.npy --input key=%t/%{k}.npy --input value=%t/v.npy --output %t/out.npy > /dev/null && %python %S/Inputs/nan_rows.py %t/out.npy --first-nan 25 --confined
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
