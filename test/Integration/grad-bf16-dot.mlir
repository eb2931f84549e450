// The fused backward's bf16 dot products of pairs (attn-flash-backward
// with bf16-dot; docs/Gradients.md): the five products on bf16 pairs with
// f32 sums, P and dS rounded to bf16, against the float64 reference
// gradient (attn-ref --grad). Accuracy: FlashAttention's bar, the error of
// each gradient at most 2x that of the same backward without pairs (bf16
// inputs computed in f32). On every CPU through the portable spelling
// (bf16-dot=emulated), at 8 and 16 lanes; with AVX512_BF16 natively (the
// same bits as emulated). Odd sizes (odd head dims, odd lengths), GQA,
// Dv != D, one pass and two, causal, ReLU attention with a window,
// soft-capping and ALiBi, segment ids (masked blocks). A NaN key under
// pairs reaches only the gradients it touches: its rows' blocks take the
// f32 product that skips zeros.
// RUN: rm -rf %t && mkdir -p %t
// DEFINE: %{fn} =
// DEFINE: %{opts} = vector-width=8
// DEFINE: %{dot} =
// DEFINE: %{extra} =
// DEFINE: %{one} = mkdir -p %t/%{fn}.%{dot} && attn-run %s --entry %{fn} --grad --random-inputs --seed 5 --remarks --pipeline="attn-lower-to-llvm-pipeline{%{opts} bf16-dot=%{dot}}" --save-inputs %t/%{fn}.%{dot} --output %t/%{fn}.%{dot}/d_q.npy --output %t/%{fn}.%{dot}/d_k.npy --output %t/%{fn}.%{dot}/d_v.npy %{extra} 2> %t/%{fn}.%{dot}.remarks > /dev/null && attn-ref %s --entry %{fn} --inputs %t/%{fn}.%{dot} --grad %t/%{fn}.%{dot} --rtol 1 --atol 1 > %t/%{fn}.%{dot}.err
// DEFINE: %{check} = %{one} && FileCheck %s --check-prefix=PAIRS < %t/%{fn}.emulated.remarks
// DEFINE: %{ratio} = %python %S/Inputs/error_ratio.py %t/%{fn}.emulated.err %t/%{fn}.none.err --factor 2
// PAIRS: remark: attn-flash-backward: fused backward, {{.*}}; bf16 dot products of pairs (emulated)
// REDEFINE: %{fn} = causal_gqa
// REDEFINE: %{dot} = emulated
// RUN: %{check}
// REDEFINE: %{dot} = none
// RUN: %{one} && %{ratio}
// RUN: %if cpu-avx512bf16 %{ attn-run %s --entry causal_gqa --grad --random-inputs --seed 5 --remarks --pipeline="attn-lower-to-llvm-pipeline{vector-width=8 bf16-dot=native}" --output %t/native.dq.npy --output %t/native.dk.npy --output %t/native.dv.npy 2> %t/native.remarks > /dev/null && cmp %t/native.dq.npy %t/causal_gqa.emulated/d_q.npy && cmp %t/native.dk.npy %t/causal_gqa.emulated/d_k.npy && cmp %t/native.dv.npy %t/causal_gqa.emulated/d_v.npy && FileCheck %s --check-prefix=NATIVE < %t/native.remarks %}
// NATIVE: bf16 dot products of pairs (native)
// The same bits on 1 and 2 threads.
// RUN: attn-run %s --entry causal_gqa --grad --random-inputs --seed 5 --pipeline="attn-lower-to-llvm-pipeline{vector-width=8 bf16-dot=emulated}" --threads 1 --output %t/t1.dq.npy --output %t/t1.dk.npy --output %t/t1.dv.npy > /dev/null
// RUN: attn-run %s --entry causal_gqa --grad --random-inputs --seed 5 --pipeline="attn-lower-to-llvm-pipeline{vector-width=8 bf16-dot=emulated}" --threads 2 --output %t/t2.dq.npy --output %t/t2.dk.npy --output %t/t2.dv.npy > /dev/null
// RUN: cmp %t/t1.dq.npy %t/t2.dq.npy && cmp %t/t1.dk.npy %t/t2.dk.npy && cmp %t/t1.dv.npy %t/t2.dv.npy
// REDEFINE: %{fn} = two_passes_relu_window
// REDEFINE: %{dot} = emulated
// RUN: %{check}
// REDEFINE: %{dot} = none
// RUN: %{one} && %{ratio}
// REDEFINE: %{fn} = softcap_alibi_segments
// REDEFINE: %{extra} = --output %t/%{fn}.%{dot}/d_slopes.npy
// REDEFINE: %{dot} = emulated
// RUN: %{check}
// REDEFINE: %{dot} = none
// RUN: %{one} && %{ratio}
// REDEFINE: %{extra} =
// 16 lanes (512-bit vectors, legalized on narrower CPUs).
// REDEFINE: %{opts} = vector-width=16
// REDEFINE: %{fn} = causal_gqa
// REDEFINE: %{dot} = emulated
// RUN: %{check}
// REDEFINE: %{dot} = none
// RUN: %{one} && %{ratio}
// A NaN key (keys from 30 on) under a window of 3 keys: NaN reaches dQ
// rows from 30 on and dK, dV rows from 27 on only.
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/q.npy --dtype bf16 --shape 1,2,40,16 --random 1
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/k.npy --dtype bf16 --shape 1,2,40,16 --random 2 --nan-rows 30
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/v.npy --dtype bf16 --shape 1,2,40,16 --random 3
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/do.npy --dtype bf16 --shape 1,2,40,16 --random 4
// RUN: attn-run %s --entry window_nan --grad --input q=%t/q.npy --input k=%t/k.npy --input v=%t/v.npy --input d_output=%t/do.npy --pipeline="attn-lower-to-llvm-pipeline{vector-width=16 bf16-dot=emulated}" --output %t/dq.npy --output %t/dk.npy --output %t/dv.npy --remarks 2> %t/nan.remarks > /dev/null
// RUN: FileCheck %s --check-prefix=PAIRS < %t/nan.remarks
// RUN: %python %S/Inputs/nan_rows.py %t/dq.npy --first-nan 30 && %python %S/Inputs/nan_rows.py %t/dk.npy --first-nan 27 && %python %S/Inputs/nan_rows.py %t/dv.npy --first-nan 27

func.func @causal_gqa(%q: tensor<2x4x77x19xbf16>, %k: tensor<2x2x77x19xbf16>, %v: tensor<2x2x77x13xbf16>) -> tensor<2x4x77x13xbf16> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<2x4x77x19xbf16>, tensor<2x2x77x19xbf16>, tensor<2x2x77x13xbf16> -> tensor<2x4x77x13xbf16>
  return %0 : tensor<2x4x77x13xbf16>
}

func.func @two_passes_relu_window(%q: tensor<1x3x91x16xbf16>, %k: tensor<1x1x91x16xbf16>, %v: tensor<1x1x91x16xbf16>) -> tensor<1x3x91x16xbf16> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.pointwise<relu>, pattern = #attn.window<before = 20, after = 5>} : tensor<1x3x91x16xbf16>, tensor<1x1x91x16xbf16>, tensor<1x1x91x16xbf16> -> tensor<1x3x91x16xbf16>
  return %0 : tensor<1x3x91x16xbf16>
}

func.func @softcap_alibi_segments(%q: tensor<2x2x53x24xbf16>, %k: tensor<2x2x53x24xbf16>, %v: tensor<2x2x53x24xbf16>, %ids: tensor<2x53xi32>, %slopes: tensor<2xf32>) -> tensor<2x2x53x24xbf16> {
  %0 = attn.attention %q, %k, %v segments(%ids : tensor<2x53xi32>) alibi_slopes(%slopes : tensor<2xf32>) {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>, softcap = 20.0 : f32} : tensor<2x2x53x24xbf16>, tensor<2x2x53x24xbf16>, tensor<2x2x53x24xbf16> -> tensor<2x2x53x24xbf16>
  return %0 : tensor<2x2x53x24xbf16>
}

func.func @window_nan(%q: tensor<1x2x40x16xbf16>, %k: tensor<1x2x40x16xbf16>, %v: tensor<1x2x40x16xbf16>) -> tensor<1x2x40x16xbf16> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.window<before = 3, after = 0>} : tensor<1x2x40x16xbf16>, tensor<1x2x40x16xbf16>, tensor<1x2x40x16xbf16> -> tensor<1x2x40x16xbf16>
  return %0 : tensor<1x2x40x16xbf16>
}
