// Decode (few queries per sequence against a long key/value cache) against
// the scalar reference: the kernel puts the G query heads of a key/value
// head and their Lq queries in the lanes of shared tiles (each K/V element
// read once for all of them). Lq = 1, 2, 5 with GQA ratios G = 1, 4, 8
// (5 x 8 = 40 rows: several tiles with AVX2), odd key lengths, Dv != D,
// causal and window patterns (bottom-right aligned: query i sits at key
// position i + Lk - Lq), padded key lengths (a KV cache: lengths 0, 1, 200,
// 57), pointwise attention and qk-layernorm, and split-KV (below). attn-ref
// checks every element.
// RUN: rm -rf %t && mkdir -p %t/in
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/lk.npy --dtype '<i4' --shape 4 --values 0,1,200,57
// DEFINE: %{fn} =
// DEFINE: %{args} =
// DEFINE: %{check} = attn-run %s --entry %{fn} --random-inputs --seed 5 %{args} --save-inputs %t/%{fn} --output %t/%{fn}.npy --remarks 2> %t/%{fn}.remarks > %t/%{fn}.out && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy --rtol 1e-4 --atol 1e-5 && FileCheck %s --check-prefix=%{fn} < %t/%{fn}.remarks
// REDEFINE: %{fn} = g4_lq1
// RUN: %{check}
// g4_lq1: remark: attn-flash: decode: the 4 query heads x 1 queries of each key/value head in 1 tile(s)
// REDEFINE: %{fn} = g8_lq5_causal
// RUN: %{check}
// g8_lq5_causal: remark: attn-flash: decode: the 8 query heads x 5 queries of each key/value head in {{[0-9]+}} tile(s)
// REDEFINE: %{fn} = g1_lq2_window
// RUN: %{check}
// (The window makes a block-sparse layout where the key blocks are small
// enough: with 16 lanes, attn-block-sparse runs it.)
// g1_lq2_window: remark: attn-{{flash|block-sparse}}: decode: the 1 query heads x 2 queries of each key/value head in 1 tile(s)
// REDEFINE: %{fn} = g8_lq2
// RUN: %{check}
// g8_lq2: remark: attn-flash: decode: the 8 query heads x 2 queries
// REDEFINE: %{fn} = cache_lengths
// REDEFINE: %{args} = --input lk=%t/in/lk.npy --shape key=4x2x200x16 --shape value=4x2x200x16
// RUN: %{check}
// cache_lengths: remark: attn-flash: decode: the 4 query heads x 1 queries {{.*}} key blocks classified at run time
// REDEFINE: %{fn} = relu_qknorm
// REDEFINE: %{args} =
// RUN: %{check}
// relu_qknorm: remark: attn-lower-pointwise: decode: the 4 query heads x 3 queries
// Few tasks (B x Hkv x tiles below 32): split-KV, the keys of each tile in
// ranges run in parallel and merged through the log-sum-exp; a sliding
// window over a long cache (block-sparse: most ranges hold no allowed key,
// their partial results weigh 0), pointwise attention (the ranges add up)
// and causal with 2 queries (partial blocks).
// REDEFINE: %{fn} = split_window
// RUN: %{check}
// split_window: remark: attn-block-sparse: decode: the 4 query heads x 1 queries of each key/value head in 1 tile(s), each key/value element read once for them; split-KV: the key blocks of each tile in {{[0-9]+}} ranges run in parallel, merged by log-sum-exp
// REDEFINE: %{fn} = split_relu
// RUN: %{check}
// split_relu: remark: attn-lower-pointwise: decode: {{.*}} split-KV: the key blocks of each tile in {{[0-9]+}} ranges
// REDEFINE: %{fn} = split_causal
// RUN: %{check}
// A cache filled to 700 of 2000 keys (static buffer, split-KV: the ranges
// past the filled length hold no key).
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/lk1.npy --dtype '<i4' --shape 1 --values 700
// REDEFINE: %{fn} = split_cache_length
// REDEFINE: %{args} = --input lk=%t/in/lk1.npy
// RUN: %{check}
// split_cache_length: remark: attn-flash: decode: the 4 query heads x 1 queries {{.*}} split-KV: the key blocks of each tile in {{[0-9]+}} ranges {{.*}} key blocks classified at run time
// split_causal: remark: attn-flash: decode: the 2 query heads x 2 queries {{.*}} split-KV: the key blocks of each tile in {{[0-9]+}} ranges
// f16 and bf16 caches: the decode tiles read K and V in their element type
// and extend them as they load them (no f32 copy of the cache); outputs are
// rounded to the element type (looser tolerance).
// DEFINE: %{lowp} = attn-run %s --entry %{fn} --random-inputs --seed 5 --save-inputs %t/%{fn} --output %t/%{fn}.npy && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy --rtol 1e-2 --atol 1e-2
// REDEFINE: %{fn} = g4_bf16
// REDEFINE: %{args} =
// RUN: %{lowp}
// REDEFINE: %{fn} = g8_lq2_f16_split
// RUN: %{lowp}
// RUN: attn-opt %s --attn-flash="vector-width=8 vector-registers=16" 2>/dev/null | FileCheck %s --check-prefix=LOWP
// LOWP-LABEL: func.func @g4_bf16
// LOWP-NOT: arith.extf {{.*}} : tensor
// LOWP: vector.load {{.*}} : memref<2x2x301x64xbf16>, vector<8xbf16>
// LOWP: arith.extf {{.*}} : vector<8xbf16> to vector<8xf32>

func.func @g4_lq1(%query: tensor<2x8x1x64xf32>, %key: tensor<2x2x77x64xf32>, %value: tensor<2x2x77x64xf32>) -> tensor<2x8x1x64xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, scale = 0.125 : f32} : tensor<2x8x1x64xf32>, tensor<2x2x77x64xf32>, tensor<2x2x77x64xf32> -> tensor<2x8x1x64xf32>
  return %0 : tensor<2x8x1x64xf32>
}

func.func @g8_lq5_causal(%query: tensor<1x16x5x32xf32>, %key: tensor<1x2x300x32xf32>, %value: tensor<1x2x300x24xf32>) -> tensor<1x16x5x24xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x16x5x32xf32>, tensor<1x2x300x32xf32>, tensor<1x2x300x24xf32> -> tensor<1x16x5x24xf32>
  return %0 : tensor<1x16x5x24xf32>
}

func.func @g1_lq2_window(%query: tensor<3x3x2x16xf32>, %key: tensor<3x3x130x16xf32>, %value: tensor<3x3x130x16xf32>) -> tensor<3x3x2x16xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 20, after = 0>} : tensor<3x3x2x16xf32>, tensor<3x3x130x16xf32>, tensor<3x3x130x16xf32> -> tensor<3x3x2x16xf32>
  return %0 : tensor<3x3x2x16xf32>
}

func.func @g8_lq2(%query: tensor<2x16x2x64xf32>, %key: tensor<2x2x100x64xf32>, %value: tensor<2x2x100x64xf32>) -> tensor<2x16x2x64xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<2x16x2x64xf32>, tensor<2x2x100x64xf32>, tensor<2x2x100x64xf32> -> tensor<2x16x2x64xf32>
  return %0 : tensor<2x16x2x64xf32>
}

func.func @cache_lengths(%query: tensor<4x8x1x16xf32>, %key: tensor<4x2x?x16xf32>, %value: tensor<4x2x?x16xf32>, %lk: tensor<4xi32>) -> tensor<4x8x1x16xf32> {
  %0 = attn.attention %query, %key, %value key_lengths(%lk : tensor<4xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<4x8x1x16xf32>, tensor<4x2x?x16xf32>, tensor<4x2x?x16xf32> -> tensor<4x8x1x16xf32>
  return %0 : tensor<4x8x1x16xf32>
}

func.func @relu_qknorm(%query: tensor<2x8x3x32xf32>, %key: tensor<2x2x91x32xf32>, %value: tensor<2x2x91x32xf32>) -> tensor<2x8x3x32xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, qk_norm_eps = 1.0e-5 : f32} : tensor<2x8x3x32xf32>, tensor<2x2x91x32xf32>, tensor<2x2x91x32xf32> -> tensor<2x8x3x32xf32>
  return %0 : tensor<2x8x3x32xf32>
}

func.func @split_window(%query: tensor<1x4x1x64xf32>, %key: tensor<1x1x3001x64xf32>, %value: tensor<1x1x3001x48xf32>) -> tensor<1x4x1x48xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 1000, after = 0>} : tensor<1x4x1x64xf32>, tensor<1x1x3001x64xf32>, tensor<1x1x3001x48xf32> -> tensor<1x4x1x48xf32>
  return %0 : tensor<1x4x1x48xf32>
}

func.func @split_relu(%query: tensor<1x8x3x32xf32>, %key: tensor<1x2x2050x32xf32>, %value: tensor<1x2x2050x32xf32>) -> tensor<1x8x3x32xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>} : tensor<1x8x3x32xf32>, tensor<1x2x2050x32xf32>, tensor<1x2x2050x32xf32> -> tensor<1x8x3x32xf32>
  return %0 : tensor<1x8x3x32xf32>
}

func.func @split_causal(%query: tensor<1x2x2x32xf32>, %key: tensor<1x1x1500x32xf32>, %value: tensor<1x1x1500x32xf32>) -> tensor<1x2x2x32xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x2x2x32xf32>, tensor<1x1x1500x32xf32>, tensor<1x1x1500x32xf32> -> tensor<1x2x2x32xf32>
  return %0 : tensor<1x2x2x32xf32>
}

func.func @split_cache_length(%query: tensor<1x4x1x32xf32>, %key: tensor<1x1x2000x32xf32>, %value: tensor<1x1x2000x32xf32>, %lk: tensor<1xi32>) -> tensor<1x4x1x32xf32> {
  %0 = attn.attention %query, %key, %value key_lengths(%lk : tensor<1xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x4x1x32xf32>, tensor<1x1x2000x32xf32>, tensor<1x1x2000x32xf32> -> tensor<1x4x1x32xf32>
  return %0 : tensor<1x4x1x32xf32>
}

func.func @g4_bf16(%query: tensor<2x8x1x64xbf16>, %key: tensor<2x2x301x64xbf16>, %value: tensor<2x2x301x64xbf16>) -> tensor<2x8x1x64xbf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<2x8x1x64xbf16>, tensor<2x2x301x64xbf16>, tensor<2x2x301x64xbf16> -> tensor<2x8x1x64xbf16>
  return %0 : tensor<2x8x1x64xbf16>
}

func.func @g8_lq2_f16_split(%query: tensor<1x8x1x32xf16>, %key: tensor<1x1x2000x32xf16>, %value: tensor<1x1x2000x32xf16>) -> tensor<1x8x1x32xf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 1500, after = 0>} : tensor<1x8x1x32xf16>, tensor<1x1x2000x32xf16>, tensor<1x1x2000x32xf16> -> tensor<1x8x1x32xf16>
  return %0 : tensor<1x8x1x32xf16>
}
