// Attention variants for the GPU integration tests (emulated.mlir here,
// cuda.mlir on a GPU): both kernels of convert-attn-to-gpu (mma.sync for
// f16/bf16, SIMT otherwise) with odd sizes and every fused feature, and
// attention that goes through the generic loop mapping.

// mma.sync: causal, grouped-query heads, ragged last tile and key block.
func.func @mma_causal_gqa_f16(%query: tensor<1x4x100x32xf16>, %key: tensor<1x2x100x32xf16>, %value: tensor<1x2x100x16xf16>) -> tensor<1x4x100x16xf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x4x100x32xf16>, tensor<1x2x100x32xf16>, tensor<1x2x100x16xf16> -> tensor<1x4x100x16xf16>
  return %0 : tensor<1x4x100x16xf16>
}

// mma.sync, bf16: sliding window, bias and gate, Lq != Lk, MQA.
func.func @mma_window_bias_gate_bf16(%query: tensor<2x2x37x16xbf16>, %key: tensor<2x1x101x16xbf16>, %value: tensor<2x1x101x8xbf16>, %bias: tensor<1x2x37x101xbf16>, %gate: tensor<2x2x37x8xbf16>) -> tensor<2x2x37x8xbf16> {
  %0 = attn.attention %query, %key, %value bias(%bias : tensor<1x2x37x101xbf16>) gate(%gate : tensor<2x2x37x8xbf16>) {normalizer = #attn.softmax, pattern = #attn.window<before = 20, after = 30>, scale = 0.3 : f32} : tensor<2x2x37x16xbf16>, tensor<2x1x101x16xbf16>, tensor<2x1x101x8xbf16> -> tensor<2x2x37x8xbf16>
  return %0 : tensor<2x2x37x8xbf16>
}

// mma.sync, pointwise: causal documents (segment ids), ReLU.
func.func @mma_relu_documents_f16(%query: tensor<2x2x130x16xf16>, %key: tensor<2x2x130x16xf16>, %value: tensor<2x2x130x16xf16>, %ids: tensor<2x130xi32>) -> tensor<2x2x130x16xf16> {
  %0 = attn.attention %query, %key, %value segments(%ids : tensor<2x130xi32>) {normalizer = #attn.pointwise<relu>, pattern = #attn.intersect<[#attn.causal, #attn.segments]>} : tensor<2x2x130x16xf16>, tensor<2x2x130x16xf16>, tensor<2x2x130x16xf16> -> tensor<2x2x130x16xf16>
  return %0 : tensor<2x2x130x16xf16>
}

// mma.sync, pointwise GELU with a BigBird pattern (window, global, random).
func.func @mma_gelu_bigbird_f16(%query: tensor<1x2x150x32xf16>, %key: tensor<1x2x150x32xf16>, %value: tensor<1x2x150x8xf16>) -> tensor<1x2x150x8xf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<gelu>, pattern = #attn.union<[#attn.window<before = 8, after = 8>, #attn.global<[0, 1, 149]>, #attn.random<blocks = 1, block_size = 16, seed = 3>]>} : tensor<1x2x150x32xf16>, tensor<1x2x150x32xf16>, tensor<1x2x150x8xf16> -> tensor<1x2x150x8xf16>
  return %0 : tensor<1x2x150x8xf16>
}

// mma.sync: rows whose keys are all masked give zeros.
func.func @mma_masked_rows_f16(%query: tensor<1x2x96x16xf16>, %key: tensor<1x2x96x16xf16>, %value: tensor<1x2x96x16xf16>) -> tensor<1x2x96x16xf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.block<size = 32, layout = ["100", "000", "011"]>} : tensor<1x2x96x16xf16>, tensor<1x2x96x16xf16>, tensor<1x2x96x16xf16> -> tensor<1x2x96x16xf16>
  return %0 : tensor<1x2x96x16xf16>
}

// SIMT, f32: dense, Lq != Lk, odd sizes.
func.func @simt_dense_f32(%query: tensor<2x4x37x16xf32>, %key: tensor<2x2x101x16xf32>, %value: tensor<2x2x101x8xf32>) -> tensor<2x4x37x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax} : tensor<2x4x37x16xf32>, tensor<2x2x101x16xf32>, tensor<2x2x101x8xf32> -> tensor<2x4x37x8xf32>
  return %0 : tensor<2x4x37x8xf32>
}

// SIMT, wide heads: two threads per query row (shuffle-reduced scores).
func.func @simt_wide_causal_f32(%query: tensor<1x2x70x96xf32>, %key: tensor<1x2x70x96xf32>, %value: tensor<1x2x70x96xf32>) -> tensor<1x2x70x96xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x2x70x96xf32>, tensor<1x2x70x96xf32>, tensor<1x2x70x96xf32> -> tensor<1x2x70x96xf32>
  return %0 : tensor<1x2x70x96xf32>
}

// SIMT, bf16 with qk-layernorm, bias, gate.
func.func @simt_qknorm_bf16(%query: tensor<2x2x67x16xbf16>, %key: tensor<2x2x67x16xbf16>, %value: tensor<2x2x67x8xbf16>, %bias: tensor<1x2x67x67xbf16>, %gate: tensor<2x2x67x8xbf16>) -> tensor<2x2x67x8xbf16> {
  %0 = attn.attention %query, %key, %value bias(%bias : tensor<1x2x67x67xbf16>) gate(%gate : tensor<2x2x67x8xbf16>) {normalizer = #attn.softmax, pattern = #attn.causal, qk_norm_eps = 1.0e-5 : f32, scale = 0.3 : f32} : tensor<2x2x67x16xbf16>, tensor<2x2x67x16xbf16>, tensor<2x2x67x8xbf16> -> tensor<2x2x67x8xbf16>
  return %0 : tensor<2x2x67x8xbf16>
}

// SIMT, pointwise sigmoid with alpha = 1/2 on a fixed (Sparse Transformer)
// pattern, per-head patterns.
func.func @simt_sigmoid_per_head_f32(%query: tensor<1x2x67x16xf32>, %key: tensor<1x2x67x16xf32>, %value: tensor<1x2x67x8xf32>) -> tensor<1x2x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<sigmoid, alpha = 0.5>, pattern = #attn.per_head<[#attn.fixed<stride = 16, c = 3>, #attn.dilated<before = 12, after = 8, dilation = 3>]>} : tensor<1x2x67x16xf32>, tensor<1x2x67x16xf32>, tensor<1x2x67x8xf32> -> tensor<1x2x67x8xf32>
  return %0 : tensor<1x2x67x8xf32>
}

// Generic loop mapping: causal linear attention (chunked prefix sums).
func.func @linear_elu_causal(%query: tensor<1x2x67x16xf32>, %key: tensor<1x2x67x16xf32>, %value: tensor<1x2x67x8xf32>) -> tensor<1x2x67x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal} : tensor<1x2x67x16xf32>, tensor<1x2x67x16xf32>, tensor<1x2x67x8xf32> -> tensor<1x2x67x8xf32>
  return %0 : tensor<1x2x67x8xf32>
}

// Generic loop mapping: Linformer.
func.func @lowrank(%query: tensor<2x4x75x16xf32>, %key: tensor<2x2x75x16xf32>, %value: tensor<2x2x75x8xf32>, %e: tensor<12x75xf32>, %f: tensor<12x75xf32>) -> tensor<2x4x75x8xf32> {
  %0 = attn.lowrank_attention %query, %key, %value, %e, %f : tensor<2x4x75x16xf32>, tensor<2x2x75x16xf32>, tensor<2x2x75x8xf32>, tensor<12x75xf32>, tensor<12x75xf32> -> tensor<2x4x75x8xf32>
  return %0 : tensor<2x4x75x8xf32>
}
// Dynamic sizes (run at several shapes from one compilation) and varlen
// batches: the kernels classify key blocks at run time.
func.func @dyn_mma_causal_f16(%query: tensor<?x4x?x32xf16>, %key: tensor<?x2x?x32xf16>, %value: tensor<?x2x?x16xf16>) -> tensor<?x4x?x16xf16> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<?x4x?x32xf16>, tensor<?x2x?x32xf16>, tensor<?x2x?x16xf16> -> tensor<?x4x?x16xf16>
  return %0 : tensor<?x4x?x16xf16>
}
func.func @dyn_simt_window_f32(%query: tensor<?x2x?x16xf32>, %key: tensor<?x1x?x16xf32>, %value: tensor<?x1x?x8xf32>) -> tensor<?x2x?x8xf32> {
  %0 = attn.attention %query, %key, %value {normalizer = #attn.pointwise<relu>, pattern = #attn.union<[#attn.window<before = 20, after = 3>, #attn.global<[0, 65]>]>} : tensor<?x2x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x8xf32> -> tensor<?x2x?x8xf32>
  return %0 : tensor<?x2x?x8xf32>
}
func.func @padded_mma_f16(%query: tensor<3x2x?x16xf16>, %key: tensor<3x2x?x16xf16>, %value: tensor<3x2x?x16xf16>, %lq: tensor<3xi32>, %lk: tensor<3xi32>) -> tensor<3x2x?x16xf16> {
  %0 = attn.attention %query, %key, %value query_lengths(%lq : tensor<3xi32>) key_lengths(%lk : tensor<3xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<3x2x?x16xf16>, tensor<3x2x?x16xf16>, tensor<3x2x?x16xf16> -> tensor<3x2x?x16xf16>
  return %0 : tensor<3x2x?x16xf16>
}
func.func @packed_simt_f32(%query: tensor<1x2x?x16xf32>, %key: tensor<1x2x?x16xf32>, %value: tensor<1x2x?x8xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x2x?x8xf32> {
  %0 = attn.attention %query, %key, %value query_offsets(%cq : tensor<?xi32>) key_offsets(%ck : tensor<?xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %0 : tensor<1x2x?x8xf32>
}

// Soft-capping, ALiBi and attention sinks (random slopes, short rows).
func.func @mma_modifiers_f16(%query: tensor<1x4x100x32xf16>, %key: tensor<1x2x100x32xf16>, %value: tensor<1x2x100x32xf16>, %slopes: tensor<4xf32>, %sinks: tensor<4xf32>) -> tensor<1x4x100x32xf16> {
  %0 = attn.attention %query, %key, %value alibi_slopes(%slopes : tensor<4xf32>) sinks(%sinks : tensor<4xf32>) {normalizer = #attn.softmax, pattern = #attn.window<before = 30, after = 30>, softcap = 5.0 : f32} : tensor<1x4x100x32xf16>, tensor<1x2x100x32xf16>, tensor<1x2x100x32xf16> -> tensor<1x4x100x32xf16>
  return %0 : tensor<1x4x100x32xf16>
}

func.func @simt_modifiers_f32(%query: tensor<2x4x70x16xf32>, %key: tensor<2x4x70x16xf32>, %value: tensor<2x4x70x16xf32>, %slopes: tensor<4xf32>, %sinks: tensor<4xf32>) -> tensor<2x4x70x16xf32> {
  %0 = attn.attention %query, %key, %value alibi_slopes(%slopes : tensor<4xf32>) sinks(%sinks : tensor<4xf32>) {normalizer = #attn.softmax, pattern = #attn.causal, softcap = 3.0 : f32} : tensor<2x4x70x16xf32>, tensor<2x4x70x16xf32>, tensor<2x4x70x16xf32> -> tensor<2x4x70x16xf32>
  return %0 : tensor<2x4x70x16xf32>
}

func.func @mma_mods_f16(%query: tensor<2x4x100x32xf16>, %key: tensor<2x2x100x32xf16>, %value: tensor<2x2x100x32xf16>, %doc: tensor<2x100xi32>) -> tensor<2x4x100x32xf16> {
  %0 = attn.attention %query, %key, %value captures(%doc : tensor<2x100xi32>) {normalizer = #attn.softmax} : tensor<2x4x100x32xf16>, tensor<2x2x100x32xf16>, tensor<2x2x100x32xf16> -> tensor<2x4x100x32xf16>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<2x100xi32>):
        %x = tensor.extract %d[%b, %i] : tensor<2x100xi32>
        %y = tensor.extract %d[%b, %j] : tensor<2x100xi32>
        %same = arith.cmpi eq, %x, %y : i32
        %causal = arith.cmpi ule, %j, %i : index
        %ok = arith.andi %same, %causal : i1
        attn.yield %ok : i1
      }
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %d: tensor<2x100xi32>):
        %c = arith.constant 0.2 : f32
        %x = arith.mulf %s, %c : f32
        %t = math.tanh %x : f32
        %c5 = arith.constant 5.0 : f32
        %y = arith.mulf %t, %c5 : f32
        attn.yield %y : f32
      }
  return %0 : tensor<2x4x100x32xf16>
}
