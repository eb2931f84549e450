// A paged KV cache (pools of pages and a page table, vLLM's layout) against
// the scalar reference, which reads key j of sequence b from page
// pt[b, j / page]. Shuffled page tables whose unused entries hold garbage
// (9999, -7, 123456: never read), cache lengths 0, 1, 17, 77, 200, 301;
// page 128 and prefill with page 16 (key blocks fitted into pages: a block's
// page looked up once), pages 16 and 8 in decode (a page looked up per run
// of keys) and 5 (each key's page), decode tiles with
// GQA, causal and window patterns, prefill (Lq = 40), split-KV, with ALiBi,
// sinks and the log-sum-exp; the reference lowering (pages gathered) and
// the GPU kernels on the emulator (each key's page looked up as the block
// is copied into shared memory: SIMT f32 with pages of 16 and 5, prefill,
// ALiBi, sinks and the log-sum-exp; mma.sync on bf16 pages of 128).
// RUN: rm -rf %t && mkdir -p %t/in
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/lk16.npy --dtype '<i4' --shape 3 --values 0,17,301
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/pt16.npy --dtype '<i4' --shape 3,20 --values 9999,9999,9999,9999,9999,9999,9999,9999,9999,9999,9999,9999,9999,9999,9999,9999,9999,9999,9999,9999,22,12,-7,-7,-7,-7,-7,-7,-7,-7,-7,-7,-7,-7,-7,-7,-7,-7,-7,-7,52,3,19,5,60,58,2,33,10,8,29,26,25,9,44,18,62,11,47,123456
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/lk5.npy --dtype '<i4' --shape 3 --values 200,1,77
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/pt5.npy --dtype '<i4' --shape 3,40 --values 2,67,44,15,37,9,6,93,78,18,92,49,74,77,28,16,71,7,88,52,91,10,40,19,57,69,45,89,84,82,41,90,26,43,12,23,30,73,27,79,48,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,-1,33,8,81,24,0,87,99,59,42,17,80,72,98,54,86,32,5000,5000,5000,5000,5000,5000,5000,5000,5000,5000,5000,5000,5000,5000,5000,5000,5000,5000,5000,5000,5000,5000,5000,5000
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/lks.npy --dtype '<i4' --shape 1 --values 1999
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/pts.npy --dtype '<i4' --shape 1,125 --values 23,108,42,126,11,94,100,70,119,103,86,1,46,17,75,105,25,87,88,56,104,5,51,30,117,59,45,52,15,71,110,72,116,31,40,76,61,48,79,22,12,102,74,98,96,78,29,97,99,114,90,35,0,124,129,36,95,10,127,62,109,113,19,118,9,106,6,27,16,38,7,83,111,73,112,107,120,81,85,66,80,115,69,54,64,57,122,4,18,50,92,128,2,55,77,26,65,93,121,13,33,24,101,53,43,49,39,3,14,60,63,41,89,58,125,91,82,34,84,123,67,32,20,21,8
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/s4.npy --dtype '<f4' --shape 4 --values 0.25,0.0625,0.015625,0.00390625
// DEFINE: %{fn} =
// DEFINE: %{args} =
// DEFINE: %{tol} = --rtol 1e-4 --atol 1e-5
// DEFINE: %{run} = attn-run %s --entry %{fn} --random-inputs --seed 11 %{args} --save-inputs %t/%{fn} --output %t/%{fn}.npy --remarks 2> %t/%{fn}.remarks > %t/%{fn}.out && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy %{tol}
// DEFINE: %{check} = %{run} && FileCheck %s --check-prefix=%{fn} < %t/%{fn}.remarks
// REDEFINE: %{fn} = decode_p16
// REDEFINE: %{args} = --input pt=%t/in/pt16.npy --input lk=%t/in/lk16.npy
// RUN: %{check}
// decode_p16: remark: attn-flash: decode: the 4 query heads x 1 queries {{.*}}; paged cache, pages of 16 keys: a page looked up per 16 keys
// REDEFINE: %{fn} = decode_p5_window
// REDEFINE: %{args} = --input pt=%t/in/pt5.npy --input lk=%t/in/lk5.npy
// RUN: %{check}
// decode_p5_window: remark: attn-flash: decode: the 4 query heads x 3 queries {{.*}}; paged cache, pages of 5 keys: each key's page looked up
// Pages of 8 keys in decode tiles with the head dim in the lanes (8 rows:
// 4 query heads x 2 queries): a page looked up per run of keys of a score
// step and of the P V chunks of the unmasked blocks, each key's in the
// masked ones.
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/lk8.npy --dtype '<i4' --shape 3 --values 77,300,8
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/pt8.npy --dtype '<i4' --shape 3,40 --values 61,58,106,29,62,63,24,28,46,34,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,86,30,44,22,54,81,55,116,43,53,77,72,64,90,19,112,4,82,85,108,10,68,110,2,38,87,70,114,76,96,25,40,37,74,21,91,26,78,-3,-3,16,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3,-3
// REDEFINE: %{fn} = decode_p8
// REDEFINE: %{args} = --input pt=%t/in/pt8.npy --input lk=%t/in/lk8.npy
// RUN: %{check}
// decode_p8: remark: attn-flash: decode: the 4 query heads x 2 queries {{.*}}; paged cache, pages of 8 keys: a page looked up per 2 keys
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/lk128.npy --dtype '<i4' --shape 2 --values 200,384
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/pt128.npy --dtype '<i4' --shape 2,3 --values 3,7,999,5,1,9
// REDEFINE: %{fn} = decode_p128
// REDEFINE: %{args} = --input pt=%t/in/pt128.npy --input lk=%t/in/lk128.npy
// REDEFINE: %{tol} = --rtol 1e-2 --atol 1e-2
// RUN: %{check}
// REDEFINE: %{tol} = --rtol 1e-4 --atol 1e-5
// decode_p128: remark: attn-flash: decode: {{.*}}; paged cache, pages of 128 keys: a key block's page looked up once
// REDEFINE: %{fn} = prefill_p16
// REDEFINE: %{args} = --input pt=%t/in/pt16.npy --input lk=%t/in/lk16.npy
// RUN: %{check}
// prefill_p16: remark: attn-flash: tiles of {{.*}}; paged cache, pages of 16 keys: a key block's page looked up once
// REDEFINE: %{fn} = split_p16
// REDEFINE: %{args} = --input pt=%t/in/pts.npy --input lk=%t/in/lks.npy --input slopes=%t/in/s4.npy
// RUN: %{check}
// RUN: attn-run %s --entry %{fn} --random-inputs --seed 11 %{args} --output %t/split_lse.npy --output %t/split_lse.lse.npy && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/split_lse.lse.npy --lse --rtol 1e-5 --atol 1e-5
// split_p16: remark: attn-flash: decode: {{.*}} split-KV
// The reference lowering and the GPU pipeline.
// REDEFINE: %{fn} = decode_p5_window
// REDEFINE: %{args} = --reference --input pt=%t/in/pt5.npy --input lk=%t/in/lk5.npy
// RUN: %{run}
// REDEFINE: %{fn} = decode_p16
// REDEFINE: %{args} = --target gpu-emulator --input pt=%t/in/pt16.npy --input lk=%t/in/lk16.npy
// RUN: %{run}
// RUN: FileCheck %s --check-prefix=GPU < %t/decode_p16.remarks
// GPU: remark: convert-attn-to-gpu: SIMT kernel
// REDEFINE: %{fn} = decode_p5_window
// REDEFINE: %{args} = --target gpu-emulator --input pt=%t/in/pt5.npy --input lk=%t/in/lk5.npy
// RUN: %{run}
// REDEFINE: %{fn} = prefill_p16
// REDEFINE: %{args} = --target gpu-emulator --input pt=%t/in/pt16.npy --input lk=%t/in/lk16.npy
// RUN: %{run}
// REDEFINE: %{fn} = split_p16
// REDEFINE: %{args} = --target gpu-emulator --input pt=%t/in/pts.npy --input lk=%t/in/lks.npy --input slopes=%t/in/s4.npy
// RUN: attn-run %s --entry %{fn} --random-inputs --seed 11 %{args} --save-inputs %t/gpu_split --output %t/gpu_split.npy --output %t/gpu_split.lse.npy && attn-ref %s --entry %{fn} --inputs %t/gpu_split --compare %t/gpu_split.npy %{tol} && attn-ref %s --entry %{fn} --inputs %t/gpu_split --compare %t/gpu_split.lse.npy --lse --rtol 1e-5 --atol 1e-5
// REDEFINE: %{fn} = decode_p128
// REDEFINE: %{args} = --target gpu-emulator --input pt=%t/in/pt128.npy --input lk=%t/in/lk128.npy
// REDEFINE: %{tol} = --rtol 1e-2 --atol 1e-2
// RUN: %{run}
// RUN: FileCheck %s --check-prefix=GPU-MMA < %t/decode_p128.remarks
// GPU-MMA: remark: convert-attn-to-gpu: mma.sync kernel

func.func @decode_p16(%query: tensor<3x8x1x32xf32>, %key: tensor<64x2x16x32xf32>, %value: tensor<64x2x16x24xf32>, %pt: tensor<3x20xi32>, %lk: tensor<3xi32>) -> tensor<3x8x1x24xf32> {
  %0 = attn.attention %query, %key, %value key_lengths(%lk : tensor<3xi32>) page_table(%pt : tensor<3x20xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<3x8x1x32xf32>, tensor<64x2x16x32xf32>, tensor<64x2x16x24xf32> -> tensor<3x8x1x24xf32>
  return %0 : tensor<3x8x1x24xf32>
}

func.func @decode_p5_window(%query: tensor<3x4x3x16xf32>, %key: tensor<100x1x5x16xf32>, %value: tensor<100x1x5x16xf32>, %pt: tensor<3x40xi32>, %lk: tensor<3xi32>) -> tensor<3x4x3x16xf32> {
  %0 = attn.attention %query, %key, %value key_lengths(%lk : tensor<3xi32>) page_table(%pt : tensor<3x40xi32>) {normalizer = #attn.softmax, pattern = #attn.window<before = 30, after = 0>} : tensor<3x4x3x16xf32>, tensor<100x1x5x16xf32>, tensor<100x1x5x16xf32> -> tensor<3x4x3x16xf32>
  return %0 : tensor<3x4x3x16xf32>
}

func.func @decode_p8(%query: tensor<3x8x2x32xf32>, %key: tensor<120x2x8x32xf32>, %value: tensor<120x2x8x32xf32>, %pt: tensor<3x40xi32>, %lk: tensor<3xi32>) -> tensor<3x8x2x32xf32> {
  %0 = attn.attention %query, %key, %value key_lengths(%lk : tensor<3xi32>) page_table(%pt : tensor<3x40xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<3x8x2x32xf32>, tensor<120x2x8x32xf32>, tensor<120x2x8x32xf32> -> tensor<3x8x2x32xf32>
  return %0 : tensor<3x8x2x32xf32>
}

func.func @prefill_p16(%query: tensor<3x2x40x32xf32>, %key: tensor<64x2x16x32xf32>, %value: tensor<64x2x16x32xf32>, %pt: tensor<3x20xi32>, %lk: tensor<3xi32>) -> tensor<3x2x40x32xf32> {
  %0 = attn.attention %query, %key, %value key_lengths(%lk : tensor<3xi32>) page_table(%pt : tensor<3x20xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<3x2x40x32xf32>, tensor<64x2x16x32xf32>, tensor<64x2x16x32xf32> -> tensor<3x2x40x32xf32>
  return %0 : tensor<3x2x40x32xf32>
}

func.func @split_p16(%query: tensor<1x4x1x32xf32>, %key: tensor<130x1x16x32xf32>, %value: tensor<130x1x16x32xf32>, %pt: tensor<1x125xi32>, %lk: tensor<1xi32>, %slopes: tensor<4xf32>, %sinks: tensor<4xf32>) -> (tensor<1x4x1x32xf32>, tensor<1x4x1xf32>) {
  %0, %1 = attn.attention %query, %key, %value key_lengths(%lk : tensor<1xi32>) alibi_slopes(%slopes : tensor<4xf32>) sinks(%sinks : tensor<4xf32>) page_table(%pt : tensor<1x125xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x4x1x32xf32>, tensor<130x1x16x32xf32>, tensor<130x1x16x32xf32> -> tensor<1x4x1x32xf32>, tensor<1x4x1xf32>
  return %0, %1 : tensor<1x4x1x32xf32>, tensor<1x4x1xf32>
}

func.func @decode_p128(%query: tensor<2x8x1x32xbf16>, %key: tensor<12x2x128x32xbf16>, %value: tensor<12x2x128x32xbf16>, %pt: tensor<2x3xi32>, %lk: tensor<2xi32>) -> tensor<2x8x1x32xbf16> {
  %0 = attn.attention %query, %key, %value key_lengths(%lk : tensor<2xi32>) page_table(%pt : tensor<2x3xi32>) {normalizer = #attn.softmax, pattern = #attn.window<before = 100, after = 0>} : tensor<2x8x1x32xbf16>, tensor<12x2x128x32xbf16>, tensor<12x2x128x32xbf16> -> tensor<2x8x1x32xbf16>
  return %0 : tensor<2x8x1x32xbf16>
}
