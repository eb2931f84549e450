// bf16 dot products of pairs (bf16-dot, docs/Kernels.md "bf16 dot
// products") against the scalar reference: QK^T and PV on bf16 pairs (P
// rounded to bf16), f32 scores, softmax statistics and accumulators. On
// every CPU through the portable spelling (bf16-dot=emulated: the same
// kernels, the same pairs, the dot product as two FMAs), at 8 and 16
// lanes; with AVX512_BF16 (lit feature cpu-avx512bf16) also natively
// (vdpbf16ps). Odd lengths (a
// last key without a partner), GQA, Dv != D, causal through
// attn-block-sparse, ReLU attention with a window, bias, ALiBi, soft-cap,
// sinks and the log-sum-exp. Accuracy: FlashAttention's bar, the error
// against the exact result at most 2x that of the kernels without pairs
// (bf16 inputs computed in f32, a stricter baseline than PyTorch's bf16).
// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{fn} =
// DEFINE: %{opts} = vector-width=8
// DEFINE: %{tol} = --rtol 2e-2 --atol 2e-2
// DEFINE: %{run} = attn-run %s --entry %{fn} --random-inputs --seed 5 --remarks
// DEFINE: %{pairs} = %{run} --pipeline="attn-lower-to-llvm-pipeline{%{opts} bf16-dot=emulated}" --save-inputs %t/%{fn} --output %t/%{fn}.npy 2> %t/%{fn}.remarks > /dev/null && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy %{tol} > %t/%{fn}.err
// DEFINE: %{base} = %{run} --pipeline="attn-lower-to-llvm-pipeline{%{opts} bf16-dot=none}" --save-inputs %t/%{fn}.base --output %t/%{fn}.base.npy 2> /dev/null > /dev/null && attn-ref %s --entry %{fn} --inputs %t/%{fn}.base --compare %t/%{fn}.base.npy %{tol} > %t/%{fn}.base.err
// DEFINE: %{check} = %{pairs} && %{base} && %python %S/Inputs/error_ratio.py %t/%{fn}.err %t/%{fn}.base.err --factor 2 && FileCheck %s --check-prefix=EMULATED < %t/%{fn}.remarks
// EMULATED: bf16 dot products of pairs (emulated)
// REDEFINE: %{fn} = dense_gqa
// RUN: %{check}
// REDEFINE: %{fn} = causal
// RUN: %{check}
// REDEFINE: %{fn} = relu_window
// RUN: %{check}
// REDEFINE: %{fn} = modifiers
// RUN: %{check}
// RUN: attn-run %s --entry modifiers --random-inputs --seed 5 --pipeline="attn-lower-to-llvm-pipeline{vector-width=8 bf16-dot=emulated}" --output %t/modifiers.out.npy --output %t/modifiers.lse.npy > /dev/null
// RUN: attn-ref %s --entry modifiers --inputs %t/modifiers --compare %t/modifiers.lse.npy --lse --rtol 1e-2 --atol 1e-2
// 16 lanes (512-bit vectors, legalized on narrower CPUs).
// REDEFINE: %{opts} = vector-width=16
// REDEFINE: %{fn} = dense_gqa
// RUN: %{check}
// REDEFINE: %{fn} = causal
// RUN: %{check}
// Natively, where the CPU has AVX512_BF16 (attn-run's default where they
// pay: TargetModel::bf16DotFor, not on Intel's CPUs).
// RUN: %if cpu-avx512bf16 %{ attn-run %s --entry causal --random-inputs --seed 5 --remarks --pipeline="attn-lower-to-llvm-pipeline{bf16-dot=native}" --save-inputs %t/native --output %t/native.npy 2> %t/native.remarks > /dev/null %}
// RUN: %if cpu-avx512bf16 %{ FileCheck %s --check-prefix=NATIVE < %t/native.remarks %}
// RUN: %if cpu-avx512bf16 %{ attn-ref %s --entry causal --inputs %t/native --compare %t/native.npy %{tol} > %t/native.err %}
// RUN: %if cpu-avx512bf16 %{ %python %S/Inputs/error_ratio.py %t/native.err %t/causal.base.err --factor 2 %}
// NATIVE: bf16 dot products of pairs (vdpbf16ps)

func.func @dense_gqa(%query: tensor<2x4x77x64xbf16>, %key: tensor<2x2x77x64xbf16>, %value: tensor<2x2x77x32xbf16>) -> tensor<2x4x77x32xbf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax} : tensor<2x4x77x64xbf16>, tensor<2x2x77x64xbf16>, tensor<2x2x77x32xbf16> -> tensor<2x4x77x32xbf16>
  return %0 : tensor<2x4x77x32xbf16>
}

func.func @causal(%query: tensor<1x2x301x32xbf16>, %key: tensor<1x2x301x32xbf16>, %value: tensor<1x2x301x32xbf16>) -> tensor<1x2x301x32xbf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x2x301x32xbf16>, tensor<1x2x301x32xbf16>, tensor<1x2x301x32xbf16> -> tensor<1x2x301x32xbf16>
  return %0 : tensor<1x2x301x32xbf16>
}

func.func @relu_window(%query: tensor<1x2x150x48xbf16>, %key: tensor<1x2x151x48xbf16>, %value: tensor<1x2x151x48xbf16>) -> tensor<1x2x150x48xbf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.window<before = 20, after = 5>} : tensor<1x2x150x48xbf16>, tensor<1x2x151x48xbf16>, tensor<1x2x151x48xbf16> -> tensor<1x2x150x48xbf16>
  return %0 : tensor<1x2x150x48xbf16>
}

func.func @modifiers(%query: tensor<1x2x90x32xbf16>, %key: tensor<1x2x90x32xbf16>, %value: tensor<1x2x90x32xbf16>, %bias: tensor<1x2x90x90xbf16>, %slopes: tensor<2xf32>, %sinks: tensor<2xf32>) -> (tensor<1x2x90x32xbf16>, tensor<1x2x90xf32>) {
  %0, %1 = attn.attention %query, %key, %value bias(%bias : tensor<1x2x90x90xbf16>) alibi_slopes(%slopes : tensor<2xf32>) sinks(%sinks : tensor<2xf32>) {normalizer = #attn.softmax, pattern = #attn.causal, softcap = 5.0 : f32} : tensor<1x2x90x32xbf16>, tensor<1x2x90x32xbf16>, tensor<1x2x90x32xbf16> -> tensor<1x2x90x32xbf16>, tensor<1x2x90xf32>
  return %0, %1 : tensor<1x2x90x32xbf16>, tensor<1x2x90xf32>
}
