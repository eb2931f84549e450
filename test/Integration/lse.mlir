// The log-sum-exp result of softmax attention (FlashAttention's
// softmax_lse) against the scalar reference, with the attention result
// checked alongside: the prefill tile kernels (dense, causal through
// attn-block-sparse, rows with no allowed key: -inf), decode tiles and
// split-KV (the merged maximum and sum), sinks (their term included),
// padded cache lengths (a sequence of length 0: every row -inf), the
// reference lowering and, on the GPU emulator, the GPU kernels: SIMT with
// one and with two threads per row (the row's threads combine their sums,
// the first stores), mma.sync (a quad's four lanes hold a row), rows with
// no key, sinks and cache lengths.
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
// Rows with no allowed key but a sink: their log-sum-exp is the sink's
// logit (their output 0).
// REDEFINE: %{fn} = sinks_empty_rows
// RUN: %{check}
// sinks_empty_rows: remark: attn-block-sparse:
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
// REDEFINE: %{args} = --reference
// REDEFINE: %{fn} = sinks_empty_rows
// RUN: %{run}
// REDEFINE: %{args} = --target gpu-emulator
// RUN: %{run}
// REDEFINE: %{fn} = dense
// RUN: %{run}
// RUN: FileCheck %s --check-prefix=GPU-SIMT < %t/dense.remarks
// GPU-SIMT: remark: convert-attn-to-gpu: SIMT kernel {{.*}}, 1 thread(s) per query row
// REDEFINE: %{fn} = window_empty_rows
// RUN: %{run}
// REDEFINE: %{fn} = decode_sinks
// RUN: %{run}
// REDEFINE: %{fn} = wide_causal
// RUN: %{run}
// RUN: FileCheck %s --check-prefix=GPU-WIDE < %t/wide_causal.remarks
// GPU-WIDE: remark: convert-attn-to-gpu: SIMT kernel {{.*}}, 2 thread(s) per query row
// REDEFINE: %{args} = --target gpu-emulator --input lk=%t/in/lk.npy --shape key=3x2x200x16 --shape value=3x2x200x16
// REDEFINE: %{fn} = cache_lengths
// RUN: %{run}
// f16 through mma.sync: the attention within f16's tolerance, the LSE (f32
// statistics of f16 scores) within 1e-3.
// RUN: attn-run %s --entry mma_f16 --target gpu-emulator --random-inputs --seed 3 --save-inputs %t/mma_f16 --output %t/mma_f16.npy --output %t/mma_f16.lse.npy --remarks 2> %t/mma_f16.remarks
// RUN: attn-ref %s --entry mma_f16 --inputs %t/mma_f16 --compare %t/mma_f16.npy --rtol 1e-2 --atol 1e-2
// RUN: attn-ref %s --entry mma_f16 --inputs %t/mma_f16 --compare %t/mma_f16.lse.npy --lse --rtol 1e-3 --atol 1e-3
// RUN: FileCheck %s --check-prefix=GPU-MMA < %t/mma_f16.remarks
// GPU-MMA: remark: convert-attn-to-gpu: mma.sync kernel

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

func.func @sinks_empty_rows(%query: tensor<1x2x150x16xf32>, %key: tensor<1x2x150x16xf32>, %value: tensor<1x2x150x16xf32>, %sinks: tensor<2xf32>) -> (tensor<1x2x150x16xf32>, tensor<1x2x150xf32>) {
  %0, %1 = attn.attention %query, %key, %value sinks(%sinks : tensor<2xf32>) {normalizer = #attn.softmax, pattern = #attn.block<size = 50, layout = ["000", "110", "011"]>} : tensor<1x2x150x16xf32>, tensor<1x2x150x16xf32>, tensor<1x2x150x16xf32> -> tensor<1x2x150x16xf32>, tensor<1x2x150xf32>
  return %0, %1 : tensor<1x2x150x16xf32>, tensor<1x2x150xf32>
}

// D = 128: two SIMT threads per row on the GPU.
func.func @wide_causal(%query: tensor<1x2x70x128xf32>, %key: tensor<1x2x70x128xf32>, %value: tensor<1x2x70x128xf32>, %sinks: tensor<2xf32>) -> (tensor<1x2x70x128xf32>, tensor<1x2x70xf32>) {
  %0, %1 = attn.attention %query, %key, %value sinks(%sinks : tensor<2xf32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x2x70x128xf32>, tensor<1x2x70x128xf32>, tensor<1x2x70x128xf32> -> tensor<1x2x70x128xf32>, tensor<1x2x70xf32>
  return %0, %1 : tensor<1x2x70x128xf32>, tensor<1x2x70xf32>
}

// Rows 0..49 see no key (-inf).
func.func @mma_f16(%query: tensor<2x4x100x64xf16>, %key: tensor<2x2x100x64xf16>, %value: tensor<2x2x100x64xf16>) -> (tensor<2x4x100x64xf16>, tensor<2x4x100xf32>) {
  %0, %1 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.block<size = 50, layout = ["00", "11"]>} : tensor<2x4x100x64xf16>, tensor<2x2x100x64xf16>, tensor<2x2x100x64xf16> -> tensor<2x4x100x64xf16>, tensor<2x4x100xf32>
  return %0, %1 : tensor<2x4x100x64xf16>, tensor<2x4x100xf32>
}
