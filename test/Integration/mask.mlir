// Mask tensors (attn.attention's `mask`) against the scalar reference:
// boolean and additive (0 / -inf) masks, Lq x Lk and broadcast 4-D shapes,
// with patterns, bias, every normalizer, Lq != Lk, rows with no allowed key,
// bf16, and dynamic sizes. Random masks allow 3 in 4 entries.
// DEFINE: %{tol} = --rtol 1e-4 --atol 1e-5
// DEFINE: %{fn} =
// DEFINE: %{extra} =
// DEFINE: %{check} = attn-run %s --entry %{fn} --random-inputs --seed 11 %{extra} --save-inputs %t/%{fn} --output %t/%{fn}.npy && attn-ref %s --entry %{fn} --inputs %t/%{fn} --compare %t/%{fn}.npy %{tol}
// RUN: rm -rf %t && mkdir -p %t
// REDEFINE: %{fn} = bool_2d
// RUN: %{check}
// REDEFINE: %{fn} = bool_per_head
// RUN: %{check}
// REDEFINE: %{fn} = additive_causal_bias
// RUN: %{check}
// REDEFINE: %{fn} = pointwise_gelu_additive
// RUN: %{check}
// REDEFINE: %{fn} = pointwise_relu_bool
// RUN: %{check}
// REDEFINE: %{fn} = kernel_bool
// RUN: %{check}
// REDEFINE: %{fn} = lq_lt_lk
// RUN: %{check}
// REDEFINE: %{fn} = empty_rows
// RUN: %{check}
// REDEFINE: %{fn} = window_bf16
// REDEFINE: %{tol} = --rtol 2e-2 --atol 2e-2
// RUN: %{check}
// REDEFINE: %{tol} = --rtol 1e-4 --atol 1e-5
// REDEFINE: %{fn} = dynamic
// REDEFINE: %{extra} = --shape query=2x4x45x16 --shape key=2x2x61x16 --shape value=2x2x61x8 --shape mask=2x1x45x61
// RUN: %{check}
// The reference lowering alone, and a mask whose size differs at run time.
// RUN: attn-run %s --entry bool_2d --reference --random-inputs --seed 3 --check
// RUN: not attn-run %s --entry dynamic --random-inputs --shape query=2x4x45x16 --shape key=2x2x61x16 --shape value=2x2x61x8 --shape mask=2x1x45x60 2>&1 | FileCheck %s --check-prefix=SIZE
// SIZE: dimension 3 of mask (60) differs from dimension 2 of key (61)
// Masks computed in the graph (a band, alone and with a random mask): their
// blocks are empty, wholly allowed or partial, each path of the kernels'
// run-time classification; checked against the reference lowering.
// RUN: attn-run %s --entry band --random-inputs --seed 5 --check --remarks 2>&1 | FileCheck %s --check-prefix=BAND
// RUN: attn-run %s --entry band_and_random --random-inputs --seed 6 --check
// The GPU pipeline on the emulator: ops with a run-time mask run through
// the reference lowering mapped to GPU threads (the GPU kernels do not take
// mask tensors yet).
// RUN: attn-run %s --entry additive_causal_bias --target=gpu-emulator --random-inputs --seed 7 --check
// BAND: the blocks of the mask tensor classified at run time
// BAND: check result0: {{.*}} ok

/// a boolean Lq x Lk mask, grouped-query heads, odd length
func.func @bool_2d(%query: tensor<2x4x77x16xf32>, %key: tensor<2x2x77x16xf32>, %value: tensor<2x2x77x8xf32>, %mask: tensor<77x77xi1>) -> tensor<2x4x77x8xf32> {
  %0 = attn.attention %query, %key, %value mask(%mask : tensor<77x77xi1>) {normalizer = #attn.softmax}
      : tensor<2x4x77x16xf32>, tensor<2x2x77x16xf32>, tensor<2x2x77x8xf32> -> tensor<2x4x77x8xf32>
  return %0 : tensor<2x4x77x8xf32>
}

/// a boolean mask per batch row and head
func.func @bool_per_head(%query: tensor<2x4x77x16xf32>, %key: tensor<2x2x77x16xf32>, %value: tensor<2x2x77x8xf32>, %mask: tensor<2x4x77x77xi1>) -> tensor<2x4x77x8xf32> {
  %0 = attn.attention %query, %key, %value mask(%mask : tensor<2x4x77x77xi1>) {normalizer = #attn.softmax}
      : tensor<2x4x77x16xf32>, tensor<2x2x77x16xf32>, tensor<2x2x77x8xf32> -> tensor<2x4x77x8xf32>
  return %0 : tensor<2x4x77x8xf32>
}

/// an additive mask with a causal pattern and a bias
func.func @additive_causal_bias(%query: tensor<2x4x77x16xf32>, %key: tensor<2x2x77x16xf32>, %value: tensor<2x2x77x8xf32>, %bias: tensor<1x4x77x77xf32>, %mask: tensor<2x1x77x77xf32>) -> tensor<2x4x77x8xf32> {
  %0 = attn.attention %query, %key, %value bias(%bias : tensor<1x4x77x77xf32>) mask(%mask : tensor<2x1x77x77xf32>) {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<2x4x77x16xf32>, tensor<2x2x77x16xf32>, tensor<2x2x77x8xf32> -> tensor<2x4x77x8xf32>
  return %0 : tensor<2x4x77x8xf32>
}

/// pointwise gelu (h(-inf) is no number) under an additive mask
func.func @pointwise_gelu_additive(%query: tensor<1x4x77x16xf32>, %key: tensor<1x4x77x16xf32>, %value: tensor<1x4x77x8xf32>, %mask: tensor<77x77xf32>) -> tensor<1x4x77x8xf32> {
  %0 = attn.attention %query, %key, %value mask(%mask : tensor<77x77xf32>) {normalizer = #attn.pointwise<gelu>}
      : tensor<1x4x77x16xf32>, tensor<1x4x77x16xf32>, tensor<1x4x77x8xf32> -> tensor<1x4x77x8xf32>
  return %0 : tensor<1x4x77x8xf32>
}

/// pointwise relu under a boolean mask and a window
func.func @pointwise_relu_bool(%query: tensor<1x4x77x16xf32>, %key: tensor<1x4x77x16xf32>, %value: tensor<1x4x77x8xf32>, %mask: tensor<1x4x77x77xi1>) -> tensor<1x4x77x8xf32> {
  %0 = attn.attention %query, %key, %value mask(%mask : tensor<1x4x77x77xi1>) {normalizer = #attn.pointwise<relu>, pattern = #attn.window<before = 9, after = 4>}
      : tensor<1x4x77x16xf32>, tensor<1x4x77x16xf32>, tensor<1x4x77x8xf32> -> tensor<1x4x77x8xf32>
  return %0 : tensor<1x4x77x8xf32>
}

/// kernel attention (elu + 1) under a boolean mask: stays quadratic
func.func @kernel_bool(%query: tensor<1x2x77x16xf32>, %key: tensor<1x2x77x16xf32>, %value: tensor<1x2x77x8xf32>, %mask: tensor<77x77xi1>) -> tensor<1x2x77x8xf32> {
  %0 = attn.attention %query, %key, %value mask(%mask : tensor<77x77xi1>) {normalizer = #attn.kernel<elu_plus_one>}
      : tensor<1x2x77x16xf32>, tensor<1x2x77x16xf32>, tensor<1x2x77x8xf32> -> tensor<1x2x77x8xf32>
  return %0 : tensor<1x2x77x8xf32>
}

/// fewer queries than keys (aligned to the end) with a causal pattern
func.func @lq_lt_lk(%query: tensor<1x4x13x16xf32>, %key: tensor<1x2x50x16xf32>, %value: tensor<1x2x50x8xf32>, %mask: tensor<13x50xi1>) -> tensor<1x4x13x8xf32> {
  %0 = attn.attention %query, %key, %value mask(%mask : tensor<13x50xi1>) {normalizer = #attn.softmax, pattern = #attn.causal}
      : tensor<1x4x13x16xf32>, tensor<1x2x50x16xf32>, tensor<1x2x50x8xf32> -> tensor<1x4x13x8xf32>
  return %0 : tensor<1x4x13x8xf32>
}

/// two keys: about one row in 16 has no allowed key (zeros)
func.func @empty_rows(%query: tensor<1x2x64x16xf32>, %key: tensor<1x2x2x16xf32>, %value: tensor<1x2x2x8xf32>, %mask: tensor<1x2x64x2xf32>) -> tensor<1x2x64x8xf32> {
  %0 = attn.attention %query, %key, %value mask(%mask : tensor<1x2x64x2xf32>) {normalizer = #attn.softmax}
      : tensor<1x2x64x16xf32>, tensor<1x2x2x16xf32>, tensor<1x2x2x8xf32> -> tensor<1x2x64x8xf32>
  return %0 : tensor<1x2x64x8xf32>
}

/// bf16 with an additive mask and a window
func.func @window_bf16(%query: tensor<1x4x77x16xbf16>, %key: tensor<1x4x77x16xbf16>, %value: tensor<1x4x77x8xbf16>, %mask: tensor<77x77xbf16>) -> tensor<1x4x77x8xbf16> {
  %0 = attn.attention %query, %key, %value mask(%mask : tensor<77x77xbf16>) {normalizer = #attn.softmax, pattern = #attn.window<before = 20, after = 20>}
      : tensor<1x4x77x16xbf16>, tensor<1x4x77x16xbf16>, tensor<1x4x77x8xbf16> -> tensor<1x4x77x8xbf16>
  return %0 : tensor<1x4x77x8xbf16>
}

/// dynamic batch and lengths, a mask per batch row
func.func @dynamic(%query: tensor<?x4x?x16xf32>, %key: tensor<?x2x?x16xf32>, %value: tensor<?x2x?x8xf32>, %mask: tensor<?x1x?x?xi1>) -> tensor<?x4x?x8xf32> {
  %0 = attn.attention %query, %key, %value mask(%mask : tensor<?x1x?x?xi1>) {normalizer = #attn.softmax}
      : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x?x8xf32>
  return %0 : tensor<?x4x?x8xf32>
}

/// a band |i - j| <= 150 computed in the graph, additive
func.func @band(%query: tensor<1x2x300x16xf32>, %key: tensor<1x2x300x16xf32>, %value: tensor<1x2x300x8xf32>) -> tensor<1x2x300x8xf32> {
  %c150 = arith.constant 150 : index
  %c_150 = arith.constant -150 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %init = tensor.empty() : tensor<300x300xf32>
  %mask = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%init : tensor<300x300xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %d = arith.subi %i, %j : index
    %lo = arith.cmpi sge, %d, %c_150 : index
    %hi = arith.cmpi sle, %d, %c150 : index
    %in = arith.andi %lo, %hi : i1
    %v = arith.select %in, %zero, %ninf : f32
    linalg.yield %v : f32
  } -> tensor<300x300xf32>
  %0 = attn.attention %query, %key, %value mask(%mask : tensor<300x300xf32>) {normalizer = #attn.softmax}
      : tensor<1x2x300x16xf32>, tensor<1x2x300x16xf32>, tensor<1x2x300x8xf32> -> tensor<1x2x300x8xf32>
  return %0 : tensor<1x2x300x8xf32>
}

/// a band |i - j| <= 40 and a random boolean mask, combined in the graph
func.func @band_and_random(%query: tensor<1x2x300x16xf32>, %key: tensor<1x2x300x16xf32>, %value: tensor<1x2x300x8xf32>, %random: tensor<300x300xi1>) -> tensor<1x2x300x8xf32> {
  %c40 = arith.constant 40 : index
  %c_40 = arith.constant -40 : index
  %init = tensor.empty() : tensor<300x300xi1>
  %mask = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%random : tensor<300x300xi1>) outs(%init : tensor<300x300xi1>) {
  ^bb0(%r: i1, %out: i1):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %d = arith.subi %i, %j : index
    %lo = arith.cmpi sge, %d, %c_40 : index
    %hi = arith.cmpi sle, %d, %c40 : index
    %in = arith.andi %lo, %hi : i1
    %v = arith.andi %in, %r : i1
    linalg.yield %v : i1
  } -> tensor<300x300xi1>
  %0 = attn.attention %query, %key, %value mask(%mask : tensor<300x300xi1>) {normalizer = #attn.pointwise<relu2>}
      : tensor<1x2x300x16xf32>, tensor<1x2x300x16xf32>, tensor<1x2x300x8xf32> -> tensor<1x2x300x8xf32>
  return %0 : tensor<1x2x300x8xf32>
}
