// The linear form of kernelized attention's gradient (convert-attn-grad-to-
// linalg{linear-kernelized}, the CPU pipeline's choice): four masked sums,
// attn.chunked_linear without the denominator for causal and segment
// patterns (the suffix sums on reversed sequences; the causal ones through
// attn-linear-kernels' fused kernel with the operands as the features) or
// contractions through a (Dv + 1) x F state without a mask. Checked against
// the independent float64 reference (attn-ref --grad): elu+1, relu with
// eps, qk-layernorm, a scale and a gate, FAVOR+, MHA and GQA, odd lengths
// over several chunks, causal, segments (alone and with causal), no mask
// with dynamic shapes, bf16; and a causal attention with Lq != Lk, which
// has no chunked form and keeps the quadratic one.
// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{fn} =
// DEFINE: %{args} =
// DEFINE: %{extra} =
// DEFINE: %{tol} = --rtol 1e-4 --atol 1e-5 --max-rel-err 2e-6
// DEFINE: %{check} = mkdir -p %t/%{fn} && attn-run %s --entry %{fn} --grad --random-inputs --seed 7 --remarks %{args} --save-inputs %t/%{fn} --output %t/%{fn}/d_q.npy --output %t/%{fn}/d_k.npy --output %t/%{fn}/d_v.npy %{extra} > %t/%{fn}.out 2> %t/%{fn}.remarks && attn-ref %s --entry %{fn} --inputs %t/%{fn} --grad %t/%{fn} %{tol}
// REDEFINE: %{fn} = elu_causal
// RUN: %{check}
// RUN: FileCheck %s --check-prefix=FUSED < %t/elu_causal.remarks
// REDEFINE: %{fn} = relu_causal_gqa
// REDEFINE: %{extra} = --output %t/%{fn}/d_gate.npy
// RUN: %{check}
// REDEFINE: %{extra} =
// REDEFINE: %{fn} = favor_causal
// RUN: %{check}
// REDEFINE: %{fn} = segments_causal_gqa
// RUN: %{check}
// REDEFINE: %{fn} = segments
// RUN: %{check}
// REDEFINE: %{fn} = unmasked_dynamic
// REDEFINE: %{args} = --shape q=2x4x45x16 --shape k=2x2x38x16 --shape v=2x2x38x8
// RUN: %{check}
// REDEFINE: %{args} =
// REDEFINE: %{fn} = causal_uneven
// RUN: %{check}
// RUN: FileCheck %s --check-prefix=QUADRATIC < %t/causal_uneven.remarks
// REDEFINE: %{fn} = bf16_causal
// REDEFINE: %{tol} = --rtol 3e-2 --atol 3e-2 --max-rel-err 2e-2
// RUN: %{check}

// The forward (recomputing [N, den]) and the three sums of the gradient,
// each a fused causal kernel without the denominator.
// FUSED-COUNT-4: remark: attn-linear-kernels: causal chunked form {{.*}}, no denominator
// QUADRATIC-NOT: no denominator

func.func @elu_causal(%q: tensor<1x2x131x16xf32>, %k: tensor<1x2x131x16xf32>, %v: tensor<1x2x131x16xf32>) -> tensor<1x2x131x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal} : tensor<1x2x131x16xf32>, tensor<1x2x131x16xf32>, tensor<1x2x131x16xf32> -> tensor<1x2x131x16xf32>
  return %0 : tensor<1x2x131x16xf32>
}

func.func @relu_causal_gqa(%q: tensor<2x4x67x16xf32>, %k: tensor<2x2x67x16xf32>, %v: tensor<2x2x67x8xf32>, %gate: tensor<2x4x67x8xf32>) -> tensor<2x4x67x8xf32> {
  %0 = attn.attention %q, %k, %v gate(%gate : tensor<2x4x67x8xf32>) {normalizer = #attn.kernel<relu, eps = 1.0e-3>, pattern = #attn.causal, qk_norm_eps = 1.0e-5 : f32, scale = 0.5 : f32} : tensor<2x4x67x16xf32>, tensor<2x2x67x16xf32>, tensor<2x2x67x8xf32> -> tensor<2x4x67x8xf32>
  return %0 : tensor<2x4x67x8xf32>
}

func.func @favor_causal(%q: tensor<1x2x77x16xf32>, %k: tensor<1x2x77x16xf32>, %v: tensor<1x2x77x16xf32>) -> tensor<1x2x77x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<favor, features = 32, seed = 3>, pattern = #attn.causal, scale = 0.25 : f32} : tensor<1x2x77x16xf32>, tensor<1x2x77x16xf32>, tensor<1x2x77x16xf32> -> tensor<1x2x77x16xf32>
  return %0 : tensor<1x2x77x16xf32>
}

func.func @segments_causal_gqa(%q: tensor<2x4x61x16xf32>, %k: tensor<2x2x61x16xf32>, %v: tensor<2x2x61x16xf32>, %ids: tensor<2x61xi32>) -> tensor<2x4x61x16xf32> {
  %0 = attn.attention %q, %k, %v segments(%ids : tensor<2x61xi32>) {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.intersect<[#attn.causal, #attn.segments]>} : tensor<2x4x61x16xf32>, tensor<2x2x61x16xf32>, tensor<2x2x61x16xf32> -> tensor<2x4x61x16xf32>
  return %0 : tensor<2x4x61x16xf32>
}

func.func @segments(%q: tensor<2x2x53x8xf32>, %k: tensor<2x2x53x8xf32>, %v: tensor<2x2x53x8xf32>, %ids: tensor<2x53xi32>) -> tensor<2x2x53x8xf32> {
  %0 = attn.attention %q, %k, %v segments(%ids : tensor<2x53xi32>) {normalizer = #attn.kernel<relu>, pattern = #attn.segments} : tensor<2x2x53x8xf32>, tensor<2x2x53x8xf32>, tensor<2x2x53x8xf32> -> tensor<2x2x53x8xf32>
  return %0 : tensor<2x2x53x8xf32>
}

func.func @unmasked_dynamic(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>} : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}

func.func @causal_uneven(%q: tensor<1x2x45x16xf32>, %k: tensor<1x2x53x16xf32>, %v: tensor<1x2x53x16xf32>) -> tensor<1x2x45x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal} : tensor<1x2x45x16xf32>, tensor<1x2x53x16xf32>, tensor<1x2x53x16xf32> -> tensor<1x2x45x16xf32>
  return %0 : tensor<1x2x45x16xf32>
}

func.func @bf16_causal(%q: tensor<1x4x67x16xbf16>, %k: tensor<1x2x67x16xbf16>, %v: tensor<1x2x67x16xbf16>) -> tensor<1x4x67x16xbf16> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal} : tensor<1x4x67x16xbf16>, tensor<1x2x67x16xbf16>, tensor<1x2x67x16xbf16> -> tensor<1x4x67x16xbf16>
  return %0 : tensor<1x4x67x16xbf16>
}
