// The score modifiers of serving models (soft-capping, ALiBi slopes,
// attention sinks), each alone and combined with causal / window patterns,
// against the scalar reference: the fused prefill kernels (attn-flash,
// attn-block-sparse, attn-lower-pointwise), decode tiles (lanes holding
// several heads: per-lane slopes and sinks), split-KV (sinks after the
// log-sum-exp merge), padded cache lengths (positions per sequence), the
// reference lowering (--reference) and the GPU kernels (SIMT and mma.sync,
// on the emulator). Odd lengths and GQA throughout; attn-ref checks every
// element. ALiBi slopes are the standard ones, 2^(-8 (h + 1) / H) (random
// negative slopes would make the farthest keys' scores the largest, a few
// thousand, where f32 keeps only about 1e-4 of them).
// RUN: rm -rf %t && mkdir -p %t/in
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/lk.npy --dtype '<i4' --shape 3 --values 0,45,200
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/s4.npy --dtype '<f4' --shape 4 --values 0.25,0.0625,0.015625,0.00390625
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/s8.npy --dtype '<f4' --shape 8 --values 0.5,0.25,0.125,0.0625,0.03125,0.015625,0.0078125,0.00390625
// DEFINE: %{fn} =
// DEFINE: %{args} =
// DEFINE: %{slopes} = --input slopes=%t/in/s4.npy
// DEFINE: %{run} = attn-run %s --entry %{fn} --random-inputs --seed 7 %{args} %{slopes} --save-inputs %t/%{fn} --output %t/%{fn}.npy --remarks 2> %t/%{fn}.remarks > %t/%{fn}.out && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy --rtol 1e-4 --atol 1e-5
// DEFINE: %{check} = %{run} && FileCheck %s --check-prefix=%{fn} < %t/%{fn}.remarks
// REDEFINE: %{slopes} =
// REDEFINE: %{fn} = softcap
// RUN: %{check}
// softcap: remark: attn-flash:
// REDEFINE: %{slopes} = --input slopes=%t/in/s4.npy
// REDEFINE: %{fn} = alibi_causal
// RUN: %{check}
// alibi_causal: remark: attn-block-sparse:
// REDEFINE: %{slopes} =
// REDEFINE: %{fn} = sinks_window
// RUN: %{check}
// REDEFINE: %{slopes} = --input slopes=%t/in/s4.npy
// sinks_window: remark: attn-block-sparse:
// REDEFINE: %{fn} = all_causal
// RUN: %{check}
// all_causal: remark: attn-block-sparse:
// REDEFINE: %{fn} = pointwise_alibi_softcap
// RUN: %{check}
// The order of the contract: bias, ALiBi, then the soft cap (a bias
// outside the cap would give other scores).
// REDEFINE: %{fn} = bias_alibi_softcap
// RUN: %{check}
// bias_alibi_softcap: remark: attn-flash:
// pointwise_alibi_softcap: remark: attn-lower-pointwise:
// REDEFINE: %{slopes} = --input slopes=%t/in/s8.npy
// REDEFINE: %{fn} = decode_all
// RUN: %{check}
// REDEFINE: %{slopes} = --input slopes=%t/in/s4.npy
// decode_all: remark: attn-flash: decode: the 4 query heads x 3 queries
// REDEFINE: %{fn} = split_all
// RUN: %{check}
// split_all: remark: attn-flash: decode: {{.*}} split-KV
// REDEFINE: %{fn} = cache_lengths
// REDEFINE: %{args} = --input lk=%t/in/lk.npy --shape key=3x2x200x16 --shape value=3x2x200x16
// RUN: %{check}
// cache_lengths: remark: attn-flash: decode: {{.*}} key blocks classified at run time
// The reference lowering and the GPU kernels.
// REDEFINE: %{args} = --reference
// REDEFINE: %{fn} = all_causal
// RUN: %{run}
// REDEFINE: %{args} = --reference --input lk=%t/in/lk.npy --shape key=3x2x200x16 --shape value=3x2x200x16
// REDEFINE: %{fn} = cache_lengths
// RUN: %{run}
// REDEFINE: %{args} = --target gpu-emulator
// REDEFINE: %{fn} = all_causal
// RUN: %{run}
// REDEFINE: %{fn} = pointwise_alibi_softcap
// RUN: %{run}
// f16 inputs: the mma.sync kernel (f16 rounding: a looser tolerance).
// REDEFINE: %{fn} = all_causal_f16
// RUN: attn-run %s --entry %{fn} --target gpu-emulator --random-inputs --seed 7 %{slopes} --save-inputs %t/%{fn} --output %t/%{fn}.npy && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy --rtol 1e-2 --atol 1e-2

func.func @softcap(%query: tensor<2x4x77x32xf32>, %key: tensor<2x2x77x32xf32>, %value: tensor<2x2x77x32xf32>) -> tensor<2x4x77x32xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, scale = 2.0 : f32, softcap = 3.0 : f32} : tensor<2x4x77x32xf32>, tensor<2x2x77x32xf32>, tensor<2x2x77x32xf32> -> tensor<2x4x77x32xf32>
  return %0 : tensor<2x4x77x32xf32>
}

func.func @alibi_causal(%query: tensor<1x4x130x16xf32>, %key: tensor<1x1x130x16xf32>, %value: tensor<1x1x130x24xf32>, %slopes: tensor<4xf32>) -> tensor<1x4x130x24xf32> {
  %0 = attn.attention %query, %key, %value alibi_slopes(%slopes : tensor<4xf32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x4x130x16xf32>, tensor<1x1x130x16xf32>, tensor<1x1x130x24xf32> -> tensor<1x4x130x24xf32>
  return %0 : tensor<1x4x130x24xf32>
}

func.func @sinks_window(%query: tensor<2x2x150x16xf32>, %key: tensor<2x2x150x16xf32>, %value: tensor<2x2x150x16xf32>, %sinks: tensor<2xf32>) -> tensor<2x2x150x16xf32> {
  %0 = attn.attention %query, %key, %value sinks(%sinks : tensor<2xf32>) {normalizer = #attn.softmax, pattern = #attn.window<before = 40, after = 3>} : tensor<2x2x150x16xf32>, tensor<2x2x150x16xf32>, tensor<2x2x150x16xf32> -> tensor<2x2x150x16xf32>
  return %0 : tensor<2x2x150x16xf32>
}

func.func @all_causal(%query: tensor<2x4x93x32xf32>, %key: tensor<2x2x93x32xf32>, %value: tensor<2x2x93x32xf32>, %slopes: tensor<4xf32>, %sinks: tensor<4xf32>) -> tensor<2x4x93x32xf32> {
  %0 = attn.attention %query, %key, %value alibi_slopes(%slopes : tensor<4xf32>) sinks(%sinks : tensor<4xf32>) {normalizer = #attn.softmax, pattern = #attn.causal, softcap = 5.0 : f32} : tensor<2x4x93x32xf32>, tensor<2x2x93x32xf32>, tensor<2x2x93x32xf32> -> tensor<2x4x93x32xf32>
  return %0 : tensor<2x4x93x32xf32>
}

func.func @pointwise_alibi_softcap(%query: tensor<1x4x70x16xf32>, %key: tensor<1x2x70x16xf32>, %value: tensor<1x2x70x16xf32>, %slopes: tensor<4xf32>) -> tensor<1x4x70x16xf32> {
  %0 = attn.attention %query, %key, %value alibi_slopes(%slopes : tensor<4xf32>) {normalizer = #attn.pointwise<relu>, pattern = #attn.window<before = 20, after = 20>, softcap = 2.0 : f32} : tensor<1x4x70x16xf32>, tensor<1x2x70x16xf32>, tensor<1x2x70x16xf32> -> tensor<1x4x70x16xf32>
  return %0 : tensor<1x4x70x16xf32>
}

func.func @decode_all(%query: tensor<2x8x3x32xf32>, %key: tensor<2x2x301x32xf32>, %value: tensor<2x2x301x32xf32>, %slopes: tensor<8xf32>, %sinks: tensor<8xf32>) -> tensor<2x8x3x32xf32> {
  %0 = attn.attention %query, %key, %value alibi_slopes(%slopes : tensor<8xf32>) sinks(%sinks : tensor<8xf32>) {normalizer = #attn.softmax, pattern = #attn.causal, softcap = 4.0 : f32} : tensor<2x8x3x32xf32>, tensor<2x2x301x32xf32>, tensor<2x2x301x32xf32> -> tensor<2x8x3x32xf32>
  return %0 : tensor<2x8x3x32xf32>
}

func.func @split_all(%query: tensor<1x4x1x32xf32>, %key: tensor<1x1x1999x32xf32>, %value: tensor<1x1x1999x32xf32>, %slopes: tensor<4xf32>, %sinks: tensor<4xf32>) -> tensor<1x4x1x32xf32> {
  %0 = attn.attention %query, %key, %value alibi_slopes(%slopes : tensor<4xf32>) sinks(%sinks : tensor<4xf32>) {normalizer = #attn.softmax, softcap = 4.0 : f32} : tensor<1x4x1x32xf32>, tensor<1x1x1999x32xf32>, tensor<1x1x1999x32xf32> -> tensor<1x4x1x32xf32>
  return %0 : tensor<1x4x1x32xf32>
}

func.func @cache_lengths(%query: tensor<3x4x2x16xf32>, %key: tensor<3x2x?x16xf32>, %value: tensor<3x2x?x16xf32>, %lk: tensor<3xi32>, %slopes: tensor<4xf32>, %sinks: tensor<4xf32>) -> tensor<3x4x2x16xf32> {
  %0 = attn.attention %query, %key, %value key_lengths(%lk : tensor<3xi32>) alibi_slopes(%slopes : tensor<4xf32>) sinks(%sinks : tensor<4xf32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<3x4x2x16xf32>, tensor<3x2x?x16xf32>, tensor<3x2x?x16xf32> -> tensor<3x4x2x16xf32>
  return %0 : tensor<3x4x2x16xf32>
}

func.func @all_causal_f16(%query: tensor<1x4x100x32xf16>, %key: tensor<1x2x100x32xf16>, %value: tensor<1x2x100x32xf16>, %slopes: tensor<4xf32>, %sinks: tensor<4xf32>) -> tensor<1x4x100x32xf16> {
  %0 = attn.attention %query, %key, %value alibi_slopes(%slopes : tensor<4xf32>) sinks(%sinks : tensor<4xf32>) {normalizer = #attn.softmax, pattern = #attn.causal, softcap = 5.0 : f32} : tensor<1x4x100x32xf16>, tensor<1x2x100x32xf16>, tensor<1x2x100x32xf16> -> tensor<1x4x100x32xf16>
  return %0 : tensor<1x4x100x32xf16>
}

func.func @bias_alibi_softcap(%query: tensor<1x4x45x16xf32>, %key: tensor<1x2x45x16xf32>, %value: tensor<1x2x45x16xf32>, %bias: tensor<1x4x45x45xf32>, %slopes: tensor<4xf32>) -> tensor<1x4x45x16xf32> {
  %0 = attn.attention %query, %key, %value bias(%bias : tensor<1x4x45x45xf32>) alibi_slopes(%slopes : tensor<4xf32>) {normalizer = #attn.softmax, softcap = 1.5 : f32} : tensor<1x4x45x16xf32>, tensor<1x2x45x16xf32>, tensor<1x2x45x16xf32> -> tensor<1x4x45x16xf32>
  return %0 : tensor<1x4x45x16xf32>
}
