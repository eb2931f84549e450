// The log-sum-exp result of softmax attention (FlashAttention's
// softmax_lse) against the scalar reference, with the attention result
// checked alongside: the prefill tile kernels (dense, causal through
// attn-block-sparse, rows with no allowed key: -inf), decode tiles and
// split-KV (the merged maximum and sum), sinks (their term included),
// padded cache lengths (a sequence of length 0: every row -inf), the
// reference lowering and, on the GPU emulator, the reference lowering the
// GPU pipeline falls back to (remark).
// RUN: rm -rf %t && mkdir -p %t/in
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/lk.npy --dtype '<i4' --shape 3 --values 0,45,200
// DEFINE: %{fn} =
// DEFINE: %{args} =
// DEFINE: %{run} = attn-run %s --entry %{fn} --random-inputs --seed 3 %{args} --save-inputs %t/%{fn} --output %t/%{fn}.npy --output %t/%{fn}.lse.npy --remarks 2> %t/%{fn}.remarks > %t/%{fn}.out && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy --rtol 1e-4 --atol 1e-5 && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.lse.npy --lse --rtol 1e-5 --atol 1e-5
// DEFINE: %{check} = %{run} && FileCheck %s --check-prefix=%{fn} < %t/%{fn}.remarks
// REDEFINE: %{fn} = dense
// RUN: %{check}
// dense: remark: attn-flash:
// REDEFINE: %{fn} = window_empty_rows
// RUN: %{check}
// window_empty_rows: remark: attn-block-sparse:
// REDEFINE: %{fn} = decode_sinks
// RUN: %{check}
// decode_sinks: remark: attn-flash: decode:
// REDEFINE: %{fn} = split
// RUN: %{check}
// split: remark: attn-flash: decode: {{.*}} split-KV
// REDEFINE: %{fn} = cache_lengths
// REDEFINE: %{args} = --input lk=%t/in/lk.npy --shape key=3x2x200x16 --shape value=3x2x200x16
// RUN: %{check}
// cache_lengths: remark: attn-flash: decode: {{.*}} key blocks classified at run time
// REDEFINE: %{args} = --reference
// REDEFINE: %{fn} = window_empty_rows
// RUN: %{run}
// REDEFINE: %{args} = --reference --input lk=%t/in/lk.npy --shape key=3x2x200x16 --shape value=3x2x200x16
// REDEFINE: %{fn} = cache_lengths
// RUN: %{run}
// REDEFINE: %{args} = --target gpu-emulator
// REDEFINE: %{fn} = dense
// RUN: %{run}
// RUN: FileCheck %s --check-prefix=GPU < %t/dense.remarks
// GPU: remark: convert-attn-to-gpu: left for the reference lowering: the GPU kernels do not write the log-sum-exp result

func.func @dense(%query: tensor<2x4x77x32xf32>, %key: tensor<2x2x77x32xf32>, %value: tensor<2x2x77x32xf32>) -> (tensor<2x4x77x32xf32>, tensor<2x4x77xf32>) {
  %0, %1 = attn.attention %query, %key, %value {normalizer = #attn.softmax} : tensor<2x4x77x32xf32>, tensor<2x2x77x32xf32>, tensor<2x2x77x32xf32> -> tensor<2x4x77x32xf32>, tensor<2x4x77xf32>
  return %0, %1 : tensor<2x4x77x32xf32>, tensor<2x4x77xf32>
}

// Queries 0..49 see no key (the first row of blocks is empty).
func.func @window_empty_rows(%query: tensor<1x2x150x16xf32>, %key: tensor<1x2x150x16xf32>, %value: tensor<1x2x150x16xf32>) -> (tensor<1x2x150x16xf32>, tensor<1x2x150xf32>) {
  %0, %1 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.block<size = 50, layout = ["000", "110", "011"]>} : tensor<1x2x150x16xf32>, tensor<1x2x150x16xf32>, tensor<1x2x150x16xf32> -> tensor<1x2x150x16xf32>, tensor<1x2x150xf32>
  return %0, %1 : tensor<1x2x150x16xf32>, tensor<1x2x150xf32>
}

func.func @decode_sinks(%query: tensor<2x8x3x32xf32>, %key: tensor<2x2x301x32xf32>, %value: tensor<2x2x301x32xf32>, %sinks: tensor<8xf32>) -> (tensor<2x8x3x32xf32>, tensor<2x8x3xf32>) {
  %0, %1 = attn.attention %query, %key, %value sinks(%sinks : tensor<8xf32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<2x8x3x32xf32>, tensor<2x2x301x32xf32>, tensor<2x2x301x32xf32> -> tensor<2x8x3x32xf32>, tensor<2x8x3xf32>
  return %0, %1 : tensor<2x8x3x32xf32>, tensor<2x8x3xf32>
}

func.func @split(%query: tensor<1x4x1x32xf32>, %key: tensor<1x1x1999x32xf32>, %value: tensor<1x1x1999x32xf32>) -> (tensor<1x4x1x32xf32>, tensor<1x4x1xf32>) {
  %0, %1 = attn.attention %query, %key, %value {normalizer = #attn.softmax} : tensor<1x4x1x32xf32>, tensor<1x1x1999x32xf32>, tensor<1x1x1999x32xf32> -> tensor<1x4x1x32xf32>, tensor<1x4x1xf32>
  return %0, %1 : tensor<1x4x1x32xf32>, tensor<1x4x1xf32>
}

func.func @cache_lengths(%query: tensor<3x4x2x16xf32>, %key: tensor<3x2x?x16xf32>, %value: tensor<3x2x?x16xf32>, %lk: tensor<3xi32>) -> (tensor<3x4x2x16xf32>, tensor<3x4x2xf32>) {
  %0, %1 = attn.attention %query, %key, %value key_lengths(%lk : tensor<3xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<3x4x2x16xf32>, tensor<3x2x?x16xf32>, tensor<3x2x?x16xf32> -> tensor<3x4x2x16xf32>, tensor<3x4x2xf32>
  return %0, %1 : tensor<3x4x2x16xf32>, tensor<3x4x2xf32>
}
