// Degenerate and extreme sizes and attributes (issue 18), run and compared
// with the scalar reference (attn-ref, which computes window bounds in 128
// bits):
// - pattern bounds at INT64_MAX give the mathematical mask: the window with
//   after = INT64_MAX returns all zeros before, and now the same output,
//   bit for bit, as after = 8 (every key); every other distance at or near
//   INT64_MAX, composed, matches the reference;
// - zero sizes have defined results (docs/Semantics.md, "Zero sizes"): no
//   keys (Lk = 0) gives rows of zeros under every normalizer, no queries or
//   no batch an empty output; on the fused kernels, the reference lowering,
//   the GPU kernels (emulated) and with sizes known only at run time.
// DEFINE: %{fn} =
// DEFINE: %{extra} =
// DEFINE: %{check} = attn-run %s --entry %{fn} --random-inputs --seed 7 %{extra} --save-inputs %t/%{fn} --output %t/%{fn}.npy > %t/%{fn}.out && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy --rtol 1e-4 --atol 1e-5
// RUN: rm -rf %t && mkdir -p %t
// REDEFINE: %{fn} = window_max
// RUN: %{check}
// REDEFINE: %{fn} = window_8
// RUN: %{check}
// RUN: cmp %t/window_max.npy %t/window_8.npy
// REDEFINE: %{fn} = every_bound_max
// RUN: %{check}
// REDEFINE: %{fn} = window_max_bf16
// RUN: attn-run %s --entry %{fn} --random-inputs --seed 7 --check | FileCheck %s --check-prefix=OK
// OK: ok

// Zero sizes: every output is zeros (or empty), as in the reference.
// REDEFINE: %{fn} = no_keys_softmax
// RUN: %{check} && FileCheck %s --check-prefix=ZERO < %t/%{fn}.out
// REDEFINE: %{extra} = --reference
// RUN: %{check} && FileCheck %s --check-prefix=ZERO < %t/%{fn}.out
// REDEFINE: %{extra} = --target=gpu-emulator
// RUN: %{check} && FileCheck %s --check-prefix=ZERO < %t/%{fn}.out
// REDEFINE: %{extra} =
// REDEFINE: %{fn} = no_keys_pointwise_causal
// RUN: %{check} && FileCheck %s --check-prefix=ZERO < %t/%{fn}.out
// REDEFINE: %{fn} = no_keys_linear_gqa
// RUN: %{check} && FileCheck %s --check-prefix=ZERO < %t/%{fn}.out
// REDEFINE: %{extra} = --reference
// RUN: %{check} && FileCheck %s --check-prefix=ZERO < %t/%{fn}.out
// REDEFINE: %{extra} =
// REDEFINE: %{fn} = no_tokens
// REDEFINE: %{extra} = --reference
// RUN: %{check} && FileCheck %s --check-prefix=EMPTY < %t/%{fn}.out
// REDEFINE: %{extra} =
// RUN: %{check} && FileCheck %s --check-prefix=EMPTY < %t/%{fn}.out
// REDEFINE: %{fn} = no_queries_favor
// RUN: %{check} && FileCheck %s --check-prefix=EMPTY < %t/%{fn}.out
// REDEFINE: %{fn} = no_batch_window
// RUN: %{check} && FileCheck %s --check-prefix=EMPTY < %t/%{fn}.out
// The other attention ops: Linformer over no keys gives zeros; LSH and
// Transformer-XL with no queries or no batch an empty output (the lowerings
// built slices at offset -1 and read the memory past its end).
// DEFINE: %{empty} = for t in cpu reference gpu-emulator; do attn-run %s --entry %{fn} --random-inputs $(test $t = reference && echo --reference || echo --target=$t) || exit 1; done
// REDEFINE: %{fn} = lowrank_no_keys
// RUN: %{empty} | FileCheck %s --check-prefix=ZERO3
// REDEFINE: %{fn} = lsh_no_queries
// RUN: %{empty} | FileCheck %s --check-prefix=EMPTY3
// REDEFINE: %{fn} = lsh_no_batch
// RUN: %{empty} | FileCheck %s --check-prefix=EMPTY3
// REDEFINE: %{fn} = relative_no_queries_memory
// RUN: %{empty} | FileCheck %s --check-prefix=EMPTY3
// ZERO3-COUNT-3: mean=0 max_abs=0
// EMPTY3-COUNT-3: result result0: {{0x|1x2x0x}}
// ZERO: mean=0 max_abs=0
// EMPTY: result result0: {{0x|1x2x0x|1x1x0x}}
// Sizes known at run time: no keys, no queries, no batch, then a normal
// shape from the same compiled code.
// RUN: attn-run %s --entry dynamic --random-inputs --seed 7 --shape query=1x2x5x8,1x2x0x8,0x2x5x8,2x2x9x8 --shape key=1x2x0x8,1x2x7x8,0x2x7x8,2x2x11x8 --shape value=1x2x0x8,1x2x7x8,0x2x7x8,2x2x11x8 --save-inputs %t/dynamic --output %t/dynamic.npy | FileCheck %s --check-prefix=DYN
// RUN: attn-ref %s --entry dynamic --inputs %t/dynamic --compare %t/dynamic.npy --runs 4 --rtol 1e-4 --atol 1e-5
// DYN: result0: 1x2x5x8xf32 mean=0 max_abs=0
// DYN: result0: 1x2x0x8xf32
// DYN: result0: 0x2x5x8xf32
// DYN: result0: 2x2x9x8xf32 mean={{-?0\.[0-9]*[1-9]}}

func.func @window_max(%query: tensor<1x2x8x4xf32>, %key: tensor<1x2x8x4xf32>, %value: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 0, after = 9223372036854775807>}
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}

func.func @window_8(%query: tensor<1x2x8x4xf32>, %key: tensor<1x2x8x4xf32>, %value: tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 0, after = 8>}
      : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32> -> tensor<1x2x8x4xf32>
  return %0 : tensor<1x2x8x4xf32>
}

func.func @window_max_bf16(%query: tensor<1x2x37x16xbf16>, %key: tensor<1x2x37x16xbf16>, %value: tensor<1x2x37x16xbf16>) -> tensor<1x2x37x16xbf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 9223372036854775807, after = 9223372036854775807>}
      : tensor<1x2x37x16xbf16>, tensor<1x2x37x16xbf16>, tensor<1x2x37x16xbf16> -> tensor<1x2x37x16xbf16>
  return %0 : tensor<1x2x37x16xbf16>
}

func.func @every_bound_max(%query: tensor<1x2x37x8xf32>, %key: tensor<1x2x53x8xf32>, %value: tensor<1x2x53x8xf32>) -> tensor<1x2x37x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.union<[
      #attn.intersect<[#attn.window<before = 9223372036854775807, after = 9223372036854775807>,
                       #attn.dilated<before = 9223372036854775807, after = 9223372036854775807, dilation = 9223372036854775807>]>,
      #attn.strided<stride = 9223372036854775807>, #attn.fixed<stride = 9223372036854775807, c = 9223372036854775806>,
      #attn.global<[3]>, #attn.dilated<before = 9223372036854775807, after = 3, dilation = 2>]>}
      : tensor<1x2x37x8xf32>, tensor<1x2x53x8xf32>, tensor<1x2x53x8xf32> -> tensor<1x2x37x8xf32>
  return %0 : tensor<1x2x37x8xf32>
}

func.func @no_keys_softmax(%query: tensor<1x2x5x8xf32>, %key: tensor<1x2x0x8xf32>, %value: tensor<1x2x0x8xf32>) -> tensor<1x2x5x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax}
      : tensor<1x2x5x8xf32>, tensor<1x2x0x8xf32>, tensor<1x2x0x8xf32> -> tensor<1x2x5x8xf32>
  return %0 : tensor<1x2x5x8xf32>
}

func.func @no_keys_pointwise_causal(%query: tensor<1x2x5x8xf32>, %key: tensor<1x2x0x8xf32>, %value: tensor<1x2x0x8xf32>) -> tensor<1x2x5x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu2>, pattern = #attn.causal}
      : tensor<1x2x5x8xf32>, tensor<1x2x0x8xf32>, tensor<1x2x0x8xf32> -> tensor<1x2x5x8xf32>
  return %0 : tensor<1x2x5x8xf32>
}

func.func @no_keys_linear_gqa(%query: tensor<2x4x3x8xf32>, %key: tensor<2x2x0x8xf32>, %value: tensor<2x2x0x8xf32>) -> tensor<2x4x3x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>}
      : tensor<2x4x3x8xf32>, tensor<2x2x0x8xf32>, tensor<2x2x0x8xf32> -> tensor<2x4x3x8xf32>
  return %0 : tensor<2x4x3x8xf32>
}

func.func @no_tokens(%query: tensor<1x1x0x8xf32>, %key: tensor<1x1x0x8xf32>, %value: tensor<1x1x0x8xf32>) -> tensor<1x1x0x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax}
      : tensor<1x1x0x8xf32>, tensor<1x1x0x8xf32>, tensor<1x1x0x8xf32> -> tensor<1x1x0x8xf32>
  return %0 : tensor<1x1x0x8xf32>
}

func.func @no_queries_favor(%query: tensor<1x2x0x8xf32>, %key: tensor<1x2x7x8xf32>, %value: tensor<1x2x7x8xf32>) -> tensor<1x2x0x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<favor, features = 8>}
      : tensor<1x2x0x8xf32>, tensor<1x2x7x8xf32>, tensor<1x2x7x8xf32> -> tensor<1x2x0x8xf32>
  return %0 : tensor<1x2x0x8xf32>
}

func.func @no_batch_window(%query: tensor<0x2x5x8xf32>, %key: tensor<0x2x7x8xf32>, %value: tensor<0x2x7x8xf32>) -> tensor<0x2x5x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 2, after = 0>}
      : tensor<0x2x5x8xf32>, tensor<0x2x7x8xf32>, tensor<0x2x7x8xf32> -> tensor<0x2x5x8xf32>
  return %0 : tensor<0x2x5x8xf32>
}

func.func @dynamic(%query: tensor<?x2x?x8xf32>, %key: tensor<?x2x?x8xf32>, %value: tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.window<before = 3, after = 0>}
      : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32> -> tensor<?x2x?x8xf32>
  return %0 : tensor<?x2x?x8xf32>
}

func.func @lowrank_no_keys(%q: tensor<1x4x5x16xf32>, %k: tensor<1x2x0x16xf32>, %e: tensor<32x0xf32>) -> tensor<1x4x5x16xf32> {
  %0 = attn.lowrank_attention %q, %k, %k, %e, %e
      : tensor<1x4x5x16xf32>, tensor<1x2x0x16xf32>, tensor<1x2x0x16xf32>, tensor<32x0xf32>, tensor<32x0xf32> -> tensor<1x4x5x16xf32>
  return %0 : tensor<1x4x5x16xf32>
}

func.func @lsh_no_queries(%qk: tensor<1x2x0x16xf32>, %v: tensor<1x2x0x8xf32>) -> tensor<1x2x0x8xf32> {
  %0 = attn.lsh_attention %qk, %v {num_hashes = 2, num_buckets = 8, chunk_size = 32, seed = 5, causal}
      : tensor<1x2x0x16xf32>, tensor<1x2x0x8xf32> -> tensor<1x2x0x8xf32>
  return %0 : tensor<1x2x0x8xf32>
}

func.func @lsh_no_batch(%qk: tensor<0x2x64x16xf32>, %v: tensor<0x2x64x8xf32>) -> tensor<0x2x64x8xf32> {
  %0 = attn.lsh_attention %qk, %v {num_hashes = 2, num_buckets = 8, chunk_size = 32, seed = 5}
      : tensor<0x2x64x16xf32>, tensor<0x2x64x8xf32> -> tensor<0x2x64x8xf32>
  return %0 : tensor<0x2x64x8xf32>
}

func.func @relative_no_queries_memory(%q: tensor<1x2x0x8xf32>, %mem: tensor<1x2x4x8xf32>, %r: tensor<2x4x8xf32>, %u: tensor<2x8xf32>) -> tensor<1x2x0x8xf32> {
  %0 = attn.relative_attention %q, %q, %q, %r, %u, %u memory(%mem, %mem : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
      : tensor<1x2x0x8xf32>, tensor<1x2x0x8xf32>, tensor<1x2x0x8xf32>, tensor<2x4x8xf32>, tensor<2x8xf32>, tensor<2x8xf32> -> tensor<1x2x0x8xf32>
  return %0 : tensor<1x2x0x8xf32>
}
