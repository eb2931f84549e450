// The attention variants of attn-lower-to-nvvm-pipeline's PTX tests, at
// realistic sizes (L = 1024): flash softmax, pointwise, block-sparse,
// segments, reassociated linear attention.

func.func @flash_f16(%q: tensor<1x8x1024x64xf16>, %k: tensor<1x2x1024x64xf16>, %v: tensor<1x2x1024x64xf16>) -> tensor<1x8x1024x64xf16> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x8x1024x64xf16>, tensor<1x2x1024x64xf16>, tensor<1x2x1024x64xf16> -> tensor<1x8x1024x64xf16>
  return %o : tensor<1x8x1024x64xf16>
}

func.func @flash_bf16_d128(%q: tensor<1x8x1024x128xbf16>, %k: tensor<1x8x1024x128xbf16>, %v: tensor<1x8x1024x128xbf16>) -> tensor<1x8x1024x128xbf16> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax} : tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16>, tensor<1x8x1024x128xbf16> -> tensor<1x8x1024x128xbf16>
  return %o : tensor<1x8x1024x128xbf16>
}

func.func @flash_f32(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>, %v: tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32> -> tensor<1x8x1024x64xf32>
  return %o : tensor<1x8x1024x64xf32>
}

func.func @relu_f16(%q: tensor<1x8x1024x64xf16>, %k: tensor<1x8x1024x64xf16>, %v: tensor<1x8x1024x64xf16>) -> tensor<1x8x1024x64xf16> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.pointwise<relu>} : tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16> -> tensor<1x8x1024x64xf16>
  return %o : tensor<1x8x1024x64xf16>
}

func.func @relu_f32_d128(%q: tensor<1x8x1024x128xf32>, %k: tensor<1x8x1024x128xf32>, %v: tensor<1x8x1024x128xf32>) -> tensor<1x8x1024x128xf32> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.pointwise<relu2>} : tensor<1x8x1024x128xf32>, tensor<1x8x1024x128xf32>, tensor<1x8x1024x128xf32> -> tensor<1x8x1024x128xf32>
  return %o : tensor<1x8x1024x128xf32>
}

func.func @gelu_bigbird_f16(%q: tensor<1x8x1024x64xf16>, %k: tensor<1x8x1024x64xf16>, %v: tensor<1x8x1024x64xf16>) -> tensor<1x8x1024x64xf16> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.pointwise<gelu>, pattern = #attn.union<[#attn.window<before = 64, after = 64>, #attn.global<[0, 1, 2, 3]>, #attn.random<blocks = 2, block_size = 64, seed = 3>]>} : tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16> -> tensor<1x8x1024x64xf16>
  return %o : tensor<1x8x1024x64xf16>
}

func.func @window_f32(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>, %v: tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.window<before = 128, after = 0>} : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32> -> tensor<1x8x1024x64xf32>
  return %o : tensor<1x8x1024x64xf32>
}

func.func @documents_f16(%q: tensor<2x8x1024x64xf16>, %k: tensor<2x8x1024x64xf16>, %v: tensor<2x8x1024x64xf16>, %ids: tensor<2x1024xi32>) -> tensor<2x8x1024x64xf16> {
  %o = attn.attention %q, %k, %v segments(%ids : tensor<2x1024xi32>) {normalizer = #attn.softmax, pattern = #attn.intersect<[#attn.causal, #attn.segments]>} : tensor<2x8x1024x64xf16>, tensor<2x8x1024x64xf16>, tensor<2x8x1024x64xf16> -> tensor<2x8x1024x64xf16>
  return %o : tensor<2x8x1024x64xf16>
}

func.func @linear_elu_causal(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>, %v: tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>, pattern = #attn.causal} : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32> -> tensor<1x8x1024x64xf32>
  return %o : tensor<1x8x1024x64xf32>
}

func.func @linear_favor(%q: tensor<1x8x1024x64xf32>, %k: tensor<1x8x1024x64xf32>, %v: tensor<1x8x1024x64xf32>) -> tensor<1x8x1024x64xf32> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.kernel<favor, features = 128, seed = 7>} : tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32>, tensor<1x8x1024x64xf32> -> tensor<1x8x1024x64xf32>
  return %o : tensor<1x8x1024x64xf32>
}

// Dynamic sizes and a packed varlen batch (key blocks classified at run time).
func.func @dyn_flash_f16(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %o = attn.attention %q, %k, %v {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

func.func @packed_window_f32(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<1x8x?x64xf32> {
  %o = attn.attention %q, %k, %v query_offsets(%cq : tensor<?xi32>) key_offsets(%ck : tensor<?xi32>) {normalizer = #attn.softmax, pattern = #attn.window<before = 128, after = 0>} : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

// Soft-capping, ALiBi and sinks (the mma.sync and SIMT kernels).
func.func @modifiers_f16(%q: tensor<1x4x100x64xf16>, %k: tensor<1x2x100x64xf16>, %v: tensor<1x2x100x64xf16>, %s: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<1x4x100x64xf16> {
  %0 = attn.attention %q, %k, %v alibi_slopes(%s : tensor<4xf32>) sinks(%t : tensor<4xf32>) {normalizer = #attn.softmax, pattern = #attn.causal, softcap = 30.0 : f32} : tensor<1x4x100x64xf16>, tensor<1x2x100x64xf16>, tensor<1x2x100x64xf16> -> tensor<1x4x100x64xf16>
  return %0 : tensor<1x4x100x64xf16>
}

func.func @modifiers_f32(%q: tensor<1x4x100x64xf32>, %k: tensor<1x2x100x64xf32>, %v: tensor<1x2x100x64xf32>, %s: tensor<4xf32>, %t: tensor<4xf32>) -> tensor<1x4x100x64xf32> {
  %0 = attn.attention %q, %k, %v alibi_slopes(%s : tensor<4xf32>) sinks(%t : tensor<4xf32>) {normalizer = #attn.softmax, softcap = 30.0 : f32} : tensor<1x4x100x64xf32>, tensor<1x2x100x64xf32>, tensor<1x2x100x64xf32> -> tensor<1x4x100x64xf32>
  return %0 : tensor<1x4x100x64xf32>
}

func.func @lse_paged_f16(%q: tensor<2x8x1x64xf16>, %k: tensor<40x2x16x64xf16>, %v: tensor<40x2x16x64xf16>, %pt: tensor<2x20xi32>, %lk: tensor<2xi32>) -> (tensor<2x8x1x64xf16>, tensor<2x8x1xf32>) {
  %0, %1 = attn.attention %q, %k, %v key_lengths(%lk : tensor<2xi32>) page_table(%pt : tensor<2x20xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<2x8x1x64xf16>, tensor<40x2x16x64xf16>, tensor<40x2x16x64xf16> -> tensor<2x8x1x64xf16>, tensor<2x8x1xf32>
  return %0, %1 : tensor<2x8x1x64xf16>, tensor<2x8x1xf32>
}

func.func @lse_paged_f32(%q: tensor<2x8x1x128xf32>, %k: tensor<40x2x16x128xf32>, %v: tensor<40x2x16x128xf32>, %pt: tensor<2x20xi32>, %lk: tensor<2xi32>) -> (tensor<2x8x1x128xf32>, tensor<2x8x1xf32>) {
  %0, %1 = attn.attention %q, %k, %v key_lengths(%lk : tensor<2xi32>) page_table(%pt : tensor<2x20xi32>) {normalizer = #attn.softmax, pattern = #attn.causal} : tensor<2x8x1x128xf32>, tensor<40x2x16x128xf32>, tensor<40x2x16x128xf32> -> tensor<2x8x1x128xf32>, tensor<2x8x1xf32>
  return %0, %1 : tensor<2x8x1x128xf32>, tensor<2x8x1xf32>
}

// Score and mask regions: documents from captured ids with a causal mask
// (classified at compile time, partial blocks again over the ids) and a
// relative bias table read by the score region.
func.func @mods_f16(%q: tensor<1x4x100x64xf16>, %k: tensor<1x2x100x64xf16>, %v: tensor<1x2x100x64xf16>, %doc: tensor<1x100xi32>, %tab: tensor<4x199xf32>) -> tensor<1x4x100x64xf16> {
  %0 = attn.attention %q, %k, %v captures(%doc, %tab : tensor<1x100xi32>, tensor<4x199xf32>) {normalizer = #attn.softmax} : tensor<1x4x100x64xf16>, tensor<1x2x100x64xf16>, tensor<1x2x100x64xf16> -> tensor<1x4x100x64xf16>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %d: tensor<1x100xi32>, %t: tensor<4x199xf32>):
        %x = tensor.extract %d[%b, %i] : tensor<1x100xi32>
        %y = tensor.extract %d[%b, %j] : tensor<1x100xi32>
        %same = arith.cmpi eq, %x, %y : i32
        %causal = arith.cmpi ule, %j, %i : index
        %ok = arith.andi %same, %causal : i1
        attn.yield %ok : i1
      }
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %d: tensor<1x100xi32>, %t: tensor<4x199xf32>):
        %c99 = arith.constant 99 : index
        %r = arith.subi %i, %j : index
        %at = arith.addi %r, %c99 : index
        %bias = tensor.extract %t[%h, %at] : tensor<4x199xf32>
        %y = arith.addf %s, %bias : f32
        attn.yield %y : f32
      }
  return %0 : tensor<1x4x100x64xf16>
}

func.func @mods_f32(%q: tensor<?x4x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>) -> tensor<?x4x?x64xf32> {
  %0 = attn.attention %q, %k, %v {normalizer = #attn.softmax} : tensor<?x4x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x4x?x64xf32>
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %c64 = arith.constant 64 : index
        %p = arith.cmpi ult, %j, %c64 : index
        %c = arith.cmpi ule, %j, %i : index
        %ok = arith.ori %p, %c : i1
        attn.yield %ok : i1
      }
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %c = arith.constant 0.1 : f32
        %x = arith.mulf %s, %c : f32
        %t = math.tanh %x : f32
        %c10 = arith.constant 10.0 : f32
        %y = arith.mulf %t, %c10 : f32
        attn.yield %y : f32
      }
  return %0 : tensor<?x4x?x64xf32>
}
