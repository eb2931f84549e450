// Gradients (attn-run --grad: attn-differentiate's @F_grad through the
// default pipeline) against the independent float64 reference, reverse-mode
// differentiation of the scalar reference (attn-ref --grad): softmax and
// every pointwise function, no mask / causal / window / block-sparse /
// segments, MHA and GQA, odd sizes, qk-layernorm, gate, bias, ALiBi,
// kernelized attention (elu+1, relu, FAVOR+: through the feature map),
// soft-capping, sinks, the log-sum-exp's cotangent, mask tensors, varlen
// batches (padded and packed), dynamic shapes, bf16. Rows with no allowed
// key must give zero gradients (attn-ref checks every element).
// RUN: rm -rf %t && mkdir -p %t/in
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/s4.npy --dtype '<f4' --shape 4 --values 0.25,0.0625,0.015625,0.00390625
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/lq.npy --dtype '<i4' --shape 4 --values 0,1,40,17
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/lk.npy --dtype '<i4' --shape 4 --values 5,1,40,0
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/cq.npy --dtype '<i4' --shape 5 --values 0,0,1,41,58
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/ck.npy --dtype '<i4' --shape 5 --values 0,5,6,46,46
// DEFINE: %{fn} =
// DEFINE: %{args} =
// DEFINE: %{extra} =
// DEFINE: %{tol} = --rtol 1e-4 --atol 1e-5 --max-rel-err 2e-6
// DEFINE: %{check} = mkdir -p %t/%{fn} && attn-run %s --entry %{fn} --grad --random-inputs --seed 5 %{args} --save-inputs %t/%{fn} --output %t/%{fn}/d_q.npy --output %t/%{fn}/d_k.npy --output %t/%{fn}/d_v.npy %{extra} > %t/%{fn}.out && attn-ref %s --entry %{fn} --inputs %t/%{fn} --grad %t/%{fn} %{tol}
// REDEFINE: %{fn} = softmax
// RUN: %{check}
// REDEFINE: %{fn} = causal_gqa
// RUN: %{check}
// REDEFINE: %{fn} = window_gqa
// RUN: %{check}
// REDEFINE: %{fn} = block_sparse
// RUN: %{check}
// REDEFINE: %{fn} = segments_causal
// RUN: %{check}
// REDEFINE: %{fn} = bool_mask
// RUN: %{check}
// REDEFINE: %{fn} = additive_mask_rows
// RUN: %{check}
// REDEFINE: %{fn} = relu_qknorm_gate
// REDEFINE: %{extra} = --output %t/%{fn}/d_gate.npy
// RUN: %{check}
// REDEFINE: %{extra} =
// REDEFINE: %{fn} = relu2_window_gqa
// RUN: %{check}
// REDEFINE: %{fn} = gelu_causal
// RUN: %{check}
// REDEFINE: %{fn} = gelu_tanh_causal
// RUN: %{check}
// REDEFINE: %{fn} = softplus
// RUN: %{check}
// REDEFINE: %{fn} = sigmoid
// RUN: %{check}
// REDEFINE: %{fn} = relu6
// RUN: %{check}
// REDEFINE: %{fn} = identity_causal
// RUN: %{check}
// REDEFINE: %{fn} = no_key_rows
// RUN: %{check}
// REDEFINE: %{fn} = no_key_rows_pointwise
// RUN: %{check}
// REDEFINE: %{fn} = modifiers_lse
// REDEFINE: %{args} = --input slopes=%t/in/s4.npy
// REDEFINE: %{extra} = --output %t/%{fn}/d_bias.npy --output %t/%{fn}/d_sinks.npy --output %t/%{fn}/d_slopes.npy
// RUN: %{check}
// (MQA over one batch row: one pass over the query heads, dK and dV summed
// from the heads' parts.)
// REDEFINE: %{fn} = mqa_window_alibi
// REDEFINE: %{extra} = --output %t/%{fn}/d_slopes.npy
// RUN: %{check}
// REDEFINE: %{extra} =
// REDEFINE: %{fn} = padded_causal
// REDEFINE: %{args} = --input lq=%t/in/lq.npy --input lk=%t/in/lk.npy --shape q=4x2x40x16 --shape k=4x1x40x16 --shape v=4x1x40x8
// RUN: %{check}
// REDEFINE: %{fn} = packed_relu
// REDEFINE: %{args} = --input cq=%t/in/cq.npy --input ck=%t/in/ck.npy --shape q=1x2x60x16 --shape k=1x2x50x16 --shape v=1x2x50x16
// RUN: %{check}
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/cq3.npy --dtype '<i4' --shape 4 --values 0,70,71,200
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/ck3.npy --dtype '<i4' --shape 4 --values 0,90,91,200
// REDEFINE: %{fn} = packed_softmax_gqa_mods
// REDEFINE: %{args} = --input cq=%t/in/cq3.npy --input ck=%t/in/ck3.npy --shape q=1x4x200x16 --shape k=1x2x200x16 --shape v=1x2x200x8 --shape gate=1x4x200x8 --shape d_output=1x4x200x8
// REDEFINE: %{extra} = --output %t/%{fn}/d_gate.npy --output %t/%{fn}/d_sinks.npy
// RUN: %{check}
// The sinks' gradient of a varlen batch in the reference gradient too,
// over the sequences' rows only: rows past the last offset (packed) or a
// batch row's length (padded) hold cotangents that must not count (NaN
// from row 30 on in the padded case, where every row from 30 on is
// padding).
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/lq30.npy --dtype '<i4' --shape 4 --values 0,1,30,17
// RUN: %python %S/../Runner/Inputs/make_npy.py %t/in/do_nan.npy --dtype '<f4' --shape 4,2,40,8 --random 4 --nan-rows 30
// REDEFINE: %{args} = --input cq=%t/in/cq3.npy --input ck=%t/in/ck3.npy --shape q=1x4x213x16 --shape k=1x2x200x16 --shape v=1x2x200x8 --shape gate=1x4x213x8 --shape d_output=1x4x213x8
// REDEFINE: %{extra} = --output %t/%{fn}/d_gate.npy --output %t/%{fn}/d_sinks.npy --reference
// RUN: %{check}
// REDEFINE: %{fn} = padded_sinks
// REDEFINE: %{args} = --input lq=%t/in/lq30.npy --input lk=%t/in/lk.npy --input d_output=%t/in/do_nan.npy --shape q=4x2x40x16 --shape k=4x1x40x16 --shape v=4x1x40x8
// REDEFINE: %{extra} = --output %t/%{fn}/d_sinks.npy --reference
// RUN: %{check}
// REDEFINE: %{extra} = --output %t/%{fn}/d_sinks.npy
// RUN: %{check}
// REDEFINE: %{args} =
// REDEFINE: %{extra} =
// REDEFINE: %{fn} = dynamic_causal
// REDEFINE: %{args} = --shape q=2x4x33x16 --shape k=2x2x41x16 --shape v=2x2x41x16
// RUN: %{check}
// REDEFINE: %{args} =
// REDEFINE: %{fn} = kernel_elu_causal_gqa
// RUN: %{check}
// REDEFINE: %{fn} = kernel_favor_qknorm
// RUN: %{check}
// REDEFINE: %{fn} = kernel_relu_window
// RUN: %{check}
// REDEFINE: %{fn} = kernel_block_sparse
// RUN: %{check}
// REDEFINE: %{fn} = kernel_segments_gqa
// RUN: %{check}
// REDEFINE: %{fn} = relu_block_sparse_gqa
// RUN: %{check}
// REDEFINE: %{fn} = gelu_segments
// RUN: %{check}
// REDEFINE: %{fn} = bf16_causal
// REDEFINE: %{tol} = --rtol 3e-2 --atol 3e-2 --max-rel-err 2e-2
// RUN: %{check}

func.func @softmax(%q: tensor<2x3x37x16xf32>, %k: tensor<2x3x37x16xf32>, %v: tensor<2x3x37x16xf32>) -> tensor<2x3x37x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax} : tensor<2x3x37x16xf32>, tensor<2x3x37x16xf32>, tensor<2x3x37x16xf32> -> tensor<2x3x37x16xf32>
  return %0 : tensor<2x3x37x16xf32>
}

func.func @causal_gqa(%q: tensor<1x4x45x16xf32>, %k: tensor<1x2x53x16xf32>, %v: tensor<1x2x53x8xf32>) -> tensor<1x4x45x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x4x45x16xf32>, tensor<1x2x53x16xf32>, tensor<1x2x53x8xf32> -> tensor<1x4x45x8xf32>
  return %0 : tensor<1x4x45x8xf32>
}

func.func @window_gqa(%q: tensor<1x4x70x16xf32>, %k: tensor<1x2x70x16xf32>, %v: tensor<1x2x70x16xf32>) -> tensor<1x4x70x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.window<before = 8, after = 3>} : tensor<1x4x70x16xf32>, tensor<1x2x70x16xf32>, tensor<1x2x70x16xf32> -> tensor<1x4x70x16xf32>
  return %0 : tensor<1x4x70x16xf32>
}

func.func @block_sparse(%q: tensor<1x2x90x16xf32>, %k: tensor<1x1x90x16xf32>, %v: tensor<1x1x90x16xf32>) -> tensor<1x2x90x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.block<size = 32, layout = ["100", "110", "011"]>} : tensor<1x2x90x16xf32>, tensor<1x1x90x16xf32>, tensor<1x1x90x16xf32> -> tensor<1x2x90x16xf32>
  return %0 : tensor<1x2x90x16xf32>
}

func.func @segments_causal(%q: tensor<2x2x61x16xf32>, %k: tensor<2x2x61x16xf32>, %v: tensor<2x2x61x16xf32>, %ids: tensor<2x61xi32>) -> tensor<2x2x61x16xf32> {
  %0 = attn.attention %q, %k, %v segments(%ids : tensor<2x61xi32>) {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>} : tensor<2x2x61x16xf32>, tensor<2x2x61x16xf32>, tensor<2x2x61x16xf32> -> tensor<2x2x61x16xf32>
  return %0 : tensor<2x2x61x16xf32>
}

func.func @bool_mask(%q: tensor<1x2x30x8xf32>, %k: tensor<1x2x30x8xf32>, %v: tensor<1x2x30x8xf32>, %m: tensor<1x2x30x30xi1>) -> tensor<1x2x30x8xf32> {
  %0 = attn.attention %q, %k, %v mask(%m : tensor<1x2x30x30xi1>) {normalizer = #attn.softmax} : tensor<1x2x30x8xf32>, tensor<1x2x30x8xf32>, tensor<1x2x30x8xf32> -> tensor<1x2x30x8xf32>
  return %0 : tensor<1x2x30x8xf32>
}

// An additive mask (random entries 0 or -inf) on top of causal: rows may
// lose every key.
func.func @additive_mask_rows(%q: tensor<1x2x19x8xf32>, %k: tensor<1x2x19x8xf32>, %v: tensor<1x2x19x8xf32>, %m: tensor<19x19xf32>) -> tensor<1x2x19x8xf32> {
  %0 = attn.attention %q, %k, %v mask(%m : tensor<19x19xf32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x2x19x8xf32>, tensor<1x2x19x8xf32>, tensor<1x2x19x8xf32> -> tensor<1x2x19x8xf32>
  return %0 : tensor<1x2x19x8xf32>
}

// The seed's attention: L^-1 relu(QK^T / sqrt(D)) with qk-layernorm and a
// gate.
func.func @relu_qknorm_gate(%q: tensor<2x2x43x16xf32>, %k: tensor<2x2x43x16xf32>, %v: tensor<2x2x43x16xf32>, %gate: tensor<2x2x43x16xf32>) -> tensor<2x2x43x16xf32> {
  %0 = attn.attention %q, %k, %v gate(%gate : tensor<2x2x43x16xf32>) {normalizer = #attn.pointwise<relu>, pattern = #attn.causal, qk_norm_eps = 1.0e-5 : f32} : tensor<2x2x43x16xf32>, tensor<2x2x43x16xf32>, tensor<2x2x43x16xf32> -> tensor<2x2x43x16xf32>
  return %0 : tensor<2x2x43x16xf32>
}

func.func @relu2_window_gqa(%q: tensor<1x4x50x16xf32>, %k: tensor<1x1x50x16xf32>, %v: tensor<1x1x50x8xf32>) -> tensor<1x4x50x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.pointwise<relu2, alpha = 0.5>, pattern = #attn.window<before = 6, after = 6>} : tensor<1x4x50x16xf32>, tensor<1x1x50x16xf32>, tensor<1x1x50x8xf32> -> tensor<1x4x50x8xf32>
  return %0 : tensor<1x4x50x8xf32>
}

func.func @gelu_causal(%q: tensor<1x2x41x16xf32>, %k: tensor<1x2x41x16xf32>, %v: tensor<1x2x41x16xf32>) -> tensor<1x2x41x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.pointwise<gelu>, pattern = #attn.causal} : tensor<1x2x41x16xf32>, tensor<1x2x41x16xf32>, tensor<1x2x41x16xf32> -> tensor<1x2x41x16xf32>
  return %0 : tensor<1x2x41x16xf32>
}

func.func @gelu_tanh_causal(%q: tensor<1x2x41x16xf32>, %k: tensor<1x2x41x16xf32>, %v: tensor<1x2x41x16xf32>) -> tensor<1x2x41x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.pointwise<gelu_tanh>, pattern = #attn.causal} : tensor<1x2x41x16xf32>, tensor<1x2x41x16xf32>, tensor<1x2x41x16xf32> -> tensor<1x2x41x16xf32>
  return %0 : tensor<1x2x41x16xf32>
}

func.func @softplus(%q: tensor<1x2x33x8xf32>, %k: tensor<1x2x33x8xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.pointwise<softplus>} : tensor<1x2x33x8xf32>, tensor<1x2x33x8xf32>, tensor<1x2x33x8xf32> -> tensor<1x2x33x8xf32>
  return %0 : tensor<1x2x33x8xf32>
}

func.func @sigmoid(%q: tensor<1x2x33x8xf32>, %k: tensor<1x2x33x8xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.pointwise<sigmoid>} : tensor<1x2x33x8xf32>, tensor<1x2x33x8xf32>, tensor<1x2x33x8xf32> -> tensor<1x2x33x8xf32>
  return %0 : tensor<1x2x33x8xf32>
}

// relu6 with a scale that puts scores past 6.
func.func @relu6(%q: tensor<1x2x33x8xf32>, %k: tensor<1x2x33x8xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.pointwise<relu6>, scale = 2.0 : f32} : tensor<1x2x33x8xf32>, tensor<1x2x33x8xf32>, tensor<1x2x33x8xf32> -> tensor<1x2x33x8xf32>
  return %0 : tensor<1x2x33x8xf32>
}

func.func @identity_causal(%q: tensor<1x2x33x8xf32>, %k: tensor<1x2x33x8xf32>, %v: tensor<1x2x33x8xf32>) -> tensor<1x2x33x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.pointwise<identity>, pattern = #attn.causal} : tensor<1x2x33x8xf32>, tensor<1x2x33x8xf32>, tensor<1x2x33x8xf32> -> tensor<1x2x33x8xf32>
  return %0 : tensor<1x2x33x8xf32>
}

// Lq > Lk with queries aligned to the end of the keys: the first 8 query
// rows see no key and get zero gradients.
func.func @no_key_rows(%q: tensor<1x2x20x8xf32>, %k: tensor<1x2x12x8xf32>, %v: tensor<1x2x12x8xf32>) -> tensor<1x2x20x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x2x20x8xf32>, tensor<1x2x12x8xf32>, tensor<1x2x12x8xf32> -> tensor<1x2x20x8xf32>
  return %0 : tensor<1x2x20x8xf32>
}

func.func @no_key_rows_pointwise(%q: tensor<1x2x20x8xf32>, %k: tensor<1x2x12x8xf32>, %v: tensor<1x2x12x8xf32>) -> tensor<1x2x20x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.pointwise<gelu>, pattern = #attn.causal} : tensor<1x2x20x8xf32>, tensor<1x2x12x8xf32>, tensor<1x2x12x8xf32> -> tensor<1x2x20x8xf32>
  return %0 : tensor<1x2x20x8xf32>
}

// Every score modifier, GQA, and the log-sum-exp result: @F_grad takes its
// cotangent d_lse too.
func.func @mqa_window_alibi(%q: tensor<1x4x45x16xf32>, %k: tensor<1x1x45x16xf32>, %v: tensor<1x1x45x12xf32>, %slopes: tensor<4xf32>) -> tensor<1x4x45x12xf32> {
  %0 = attn.attention %q, %k, %v alibi_slopes(%slopes : tensor<4xf32>) {normalizer = #attn.softmax, pattern = #attn.window<before = 9, after = 2>} : tensor<1x4x45x16xf32>, tensor<1x1x45x16xf32>, tensor<1x1x45x12xf32> -> tensor<1x4x45x12xf32>
  return %0 : tensor<1x4x45x12xf32>
}

func.func @modifiers_lse(%q: tensor<2x4x40x16xf32>, %k: tensor<2x2x40x16xf32>, %v: tensor<2x2x40x16xf32>, %bias: tensor<1x4x40x40xf32>, %slopes: tensor<4xf32>, %sinks: tensor<4xf32>) -> (tensor<2x4x40x16xf32>, tensor<2x4x40xf32>) {
  %0, %1 = attn.attention %q, %k, %v bias(%bias : tensor<1x4x40x40xf32>) alibi_slopes(%slopes : tensor<4xf32>) sinks(%sinks : tensor<4xf32>) {normalizer = #attn.softmax, pattern = #attn.causal, softcap = 5.0 : f32} : tensor<2x4x40x16xf32>, tensor<2x2x40x16xf32>, tensor<2x2x40x16xf32> -> tensor<2x4x40x16xf32>, tensor<2x4x40xf32>
  return %0, %1 : tensor<2x4x40x16xf32>, tensor<2x4x40xf32>
}

// Padded varlen batch: an empty sequence, one token, a full one, one with
// no keys.
func.func @padded_sinks(%q: tensor<4x2x?x16xf32>, %k: tensor<4x1x?x16xf32>, %v: tensor<4x1x?x8xf32>, %lq: tensor<4xi32>, %lk: tensor<4xi32>, %sinks: tensor<2xf32>) -> tensor<4x2x?x8xf32> {
  %0 = attn.attention %q, %k, %v query_lengths(%lq : tensor<4xi32>) key_lengths(%lk : tensor<4xi32>) sinks(%sinks : tensor<2xf32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<4x2x?x16xf32>, tensor<4x1x?x16xf32>, tensor<4x1x?x8xf32> -> tensor<4x2x?x8xf32>
  return %0 : tensor<4x2x?x8xf32>
}

func.func @padded_causal(%q: tensor<4x2x?x16xf32>, %k: tensor<4x1x?x16xf32>, %v: tensor<4x1x?x8xf32>, %lq: tensor<4xi32>, %lk: tensor<4xi32>) -> tensor<4x2x?x8xf32> {
  %0 = attn.attention %q, %k, %v query_lengths(%lq : tensor<4xi32>) key_lengths(%lk : tensor<4xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<4x2x?x16xf32>, tensor<4x1x?x16xf32>, tensor<4x1x?x8xf32> -> tensor<4x2x?x8xf32>
  return %0 : tensor<4x2x?x8xf32>
}

// Packed varlen batch, sequences over several tiles and key blocks (Lq !=
// Lk per sequence: causal bottom-right), GQA, a gate and sinks (their
// gradients): the fused backward's flat tiles and key blocks.
func.func @packed_softmax_gqa_mods(%q: tensor<1x4x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x8xf32>, %gate: tensor<1x4x?x8xf32>, %cq: tensor<4xi32>, %ck: tensor<4xi32>, %sinks: tensor<4xf32>) -> tensor<1x4x?x8xf32> {
  %0 = attn.attention %q, %k, %v gate(%gate : tensor<1x4x?x8xf32>) query_offsets(%cq : tensor<4xi32>) key_offsets(%ck : tensor<4xi32>) sinks(%sinks : tensor<4xf32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x4x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32> -> tensor<1x4x?x8xf32>
  return %0 : tensor<1x4x?x8xf32>
}

// Packed varlen batch; rows past the last offset are no sequence's.
func.func @packed_relu(%q: tensor<1x2x?x16xf32>, %k: tensor<1x2x?x16xf32>, %v: tensor<1x2x?x16xf32>, %cq: tensor<5xi32>, %ck: tensor<5xi32>) -> tensor<1x2x?x16xf32> {
  %0 = attn.attention %q, %k, %v query_offsets(%cq : tensor<5xi32>) key_offsets(%ck : tensor<5xi32>) {normalizer = #attn.pointwise<relu>, pattern = #attn.causal} : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32> -> tensor<1x2x?x16xf32>
  return %0 : tensor<1x2x?x16xf32>
}

func.func @dynamic_causal(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x16xf32>
  return %0 : tensor<?x4x?x16xf32>
}

func.func @bf16_causal(%q: tensor<1x4x57x32xbf16>, %k: tensor<1x2x57x32xbf16>, %v: tensor<1x2x57x32xbf16>) -> tensor<1x4x57x32xbf16> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x4x57x32xbf16>, tensor<1x2x57x32xbf16>, tensor<1x2x57x32xbf16> -> tensor<1x4x57x32xbf16>
  return %0 : tensor<1x4x57x32xbf16>
}

func.func @kernel_elu_causal_gqa(%q: tensor<1x4x37x16xf32>, %k: tensor<1x2x37x16xf32>, %v: tensor<1x2x37x8xf32>) -> tensor<1x4x37x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal} : tensor<1x4x37x16xf32>, tensor<1x2x37x16xf32>, tensor<1x2x37x8xf32> -> tensor<1x4x37x8xf32>
  return %0 : tensor<1x4x37x8xf32>
}

func.func @kernel_favor_qknorm(%q: tensor<2x2x29x8xf32>, %k: tensor<2x2x29x8xf32>, %v: tensor<2x2x29x8xf32>) -> tensor<2x2x29x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<favor, features = 24, seed = 3>, qk_norm_eps = 1.0e-5 : f32, scale = 0.5 : f32} : tensor<2x2x29x8xf32>, tensor<2x2x29x8xf32>, tensor<2x2x29x8xf32> -> tensor<2x2x29x8xf32>
  return %0 : tensor<2x2x29x8xf32>
}

func.func @kernel_relu_window(%q: tensor<1x2x41x8xf32>, %k: tensor<1x2x41x8xf32>, %v: tensor<1x2x41x8xf32>) -> tensor<1x2x41x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<relu, eps = 0.5>, pattern = #attn.window<before = 5, after = 2>} : tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32>, tensor<1x2x41x8xf32> -> tensor<1x2x41x8xf32>
  return %0 : tensor<1x2x41x8xf32>
}

func.func @kernel_block_sparse(%q: tensor<1x2x70x8xf32>, %k: tensor<1x2x70x8xf32>, %v: tensor<1x2x70x8xf32>) -> tensor<1x2x70x8xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.block<size = 32, layout = ["100", "110", "011"]>} : tensor<1x2x70x8xf32>, tensor<1x2x70x8xf32>, tensor<1x2x70x8xf32> -> tensor<1x2x70x8xf32>
  return %0 : tensor<1x2x70x8xf32>
}

func.func @kernel_segments_gqa(%q: tensor<2x4x33x8xf32>, %k: tensor<2x1x33x8xf32>, %v: tensor<2x1x33x8xf32>, %ids: tensor<2x33xi32>) -> tensor<2x4x33x8xf32> {
  %0 = attn.attention %q, %k, %v segments(%ids : tensor<2x33xi32>) {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.segments} : tensor<2x4x33x8xf32>, tensor<2x1x33x8xf32>, tensor<2x1x33x8xf32> -> tensor<2x4x33x8xf32>
  return %0 : tensor<2x4x33x8xf32>
}

func.func @relu_block_sparse_gqa(%q: tensor<1x4x90x16xf32>, %k: tensor<1x2x90x16xf32>, %v: tensor<1x2x90x16xf32>) -> tensor<1x4x90x16xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.pointwise<relu>, pattern = #attn.block<size = 32, layout = ["100", "110", "011"]>} : tensor<1x4x90x16xf32>, tensor<1x2x90x16xf32>, tensor<1x2x90x16xf32> -> tensor<1x4x90x16xf32>
  return %0 : tensor<1x4x90x16xf32>
}

func.func @gelu_segments(%q: tensor<2x2x45x8xf32>, %k: tensor<2x2x45x8xf32>, %v: tensor<2x2x45x8xf32>, %ids: tensor<2x45xi32>) -> tensor<2x2x45x8xf32> {
  %0 = attn.attention %q, %k, %v segments(%ids : tensor<2x45xi32>) {normalizer = #attn.pointwise<gelu>, pattern = #attn.segments} : tensor<2x2x45x8xf32>, tensor<2x2x45x8xf32>, tensor<2x2x45x8xf32> -> tensor<2x2x45x8xf32>
  return %0 : tensor<2x2x45x8xf32>
}
