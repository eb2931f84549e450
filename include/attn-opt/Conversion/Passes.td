//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "attn-opt/Conversion/CpuTargetOptions.td"
include "mlir/Pass/PassBase.td"

def ConvertAttnToLinalg : Pass<"convert-attn-to-linalg"> {
  let summary = "Reference lowering of every attn op to linalg on tensors";
  let description = [{
    Lowers `attn.attention_grad` (as convert-attn-grad-to-linalg, first),
    `attn.attention` (every normalizer and mask pattern, bias, gate,
    segment ids, qk-layernorm, grouped-query heads), `attn.lowrank_attention`,
    `attn.lsh_attention` and `attn.relative_attention` to `linalg`,
    `tensor`, `arith` and `math` ops on tensors, computing in f32.

    This is the reference: it follows docs/Semantics.md step by step and
    materializes the `Lq x Lk` scores (for LSH attention, the chunked scores
    and an O(L^2) counting sort). Every optimized lowering is checked against
    it (`attn-run --check`). Masks are evaluated per element through the mask
    library's IR emitter.

    Example:

    ```mlir
    %o = attn.attention %q, %k, %v {normalizer = #attn.softmax,
                                    pattern = #attn.causal} : ...
    ```

    becomes a chain of `linalg.generic` ops: the scores
    `S = Q K^T` (a contraction over D), the masked and scaled scores
    (`-inf` where the mask says no), the row maximum, `exp(S - max)`, the
    row sum, the normalized weights (zero rows stay zero) and `P V`.

    The pass works on any op holding attn ops and leaves other ops alone.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def ConvertAttnGradToLinalg : Pass<"convert-attn-grad-to-linalg"> {
  let summary = "Reference lowering of attn.attention_grad to linalg on tensors";
  let description = [{
    Lowers each `attn.attention_grad` to `linalg`, `tensor`, `arith` and
    `math` ops on tensors in f32, before anything rewrites its forward
    `attn.attention` (the pipelines run it first; convert-attn-to-linalg
    runs it too): the forward op's scores and weights are recomputed by the
    forward reference lowering's own steps, then the gradients follow
    docs/Semantics.md ("Gradients"), materializing the `Lq x Lk` score
    gradient. A forward op used only by the gradient is erased.

    Every normalizer (kernelized attention in its quadratic form, back
    through the feature map) with every mask, score modifier, varlen batch,
    GQA and qk-layernorm (a varlen batch's sinks summed over the rows of
    its sequences only).

    With `linear-kernelized` (the CPU pipeline's choice), kernelized
    attention without a mask or with a causal and/or segment pattern (static
    `Lq = Lk` for the patterns; no bias, mask tensor or varlen batch) takes
    the linear form instead: with `Y = [V, 1]`,
    `[N, den] = sum_{j allowed} (phi(q_i) . phi(k_j)) Y_j` and
    `X = [dO / den, -rowsum(dO O) / den]`,
    `dphi(Q) = sum_{j allowed} (X_i . Y_j) phi(k_j)`,
    `dphi(K) = sum_{i allowed} (Y_j . X_i) phi(q_i)` and
    `dV = sum_{i allowed} (phi(k_j) . phi(q_i)) dN_i`: four masked sums,
    each an unnormalized `attn.chunked_linear` (the suffix sums of the
    causal pattern on reversed sequences) or, without a mask, two
    contractions through a `(Dv + 1) x F` state. Time and memory are linear
    in L.

    ```mlir
    %dq, %dk, %dv = attn.attention_grad %o, %do
        : tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>
        -> tensor<1x2x256x16xf32>, tensor<1x2x256x16xf32>,
           tensor<1x2x256x16xf32>
    // with #attn.kernel<elu_plus_one> and #attn.causal becomes, among
    // linalg ops on the cotangents:
    %nd = attn.chunked_linear %phiq, %phik, %v1
        {causal, chunk_size = 64 : i64, unnormalized} ...
    ```
  }];
  let options = [
    Option<"linearKernelized", "linear-kernelized", "bool", "false",
           "kernelized attention's gradient in linear time where it has a "
           "linear form (no mask, causal, segments)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AttnLowerChunkedLinear : Pass<"attn-lower-chunked-linear"> {
  let summary = "Lower attn.chunked_linear to a chunk loop carrying the state";
  let description = [{
    The fast lowering of the causal (and segment-masked) linear attention
    that attn-reassociate produces: an `scf.forall` over (batch, key/value
    head) around a sequential `scf.for` over chunks, whose iteration carries
    the `F x Dv` state and the `F` key sum:

    ```
    for each chunk [o, o + n) (the last may be shorter, handled after the
    loop with static sizes):
      A    = Qc Kc^T . mask          small quadratic form (G x n x n)
      num += A Vc + Qc S             den += A 1 + Qc z
      S   += Kc^T Vc                 z   += Kc^T 1
    O = num / (den + eps)            (0 where den + eps is 0)
    ```

    Memory is linear in L; the inner operations are small linalg ops on
    tiles, vectorized by the CPU pipeline. With segment ids the state
    restarts at segment boundaries and, without `causal`, a backward sweep
    adds the following chunks; this is exact for non-decreasing ids (packed
    documents), which the generated code checks, falling back to the
    quadratic form (the reference lowering) otherwise.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AttnLinearKernels : Attn_CpuKernelPass<"attn-linear-kernels"> {
  let summary = "Fuse linear attention's feature maps into register-blocked CPU kernels";
  let description = [{
    The linear form of kernelized attention (attn-reassociate) computes
    `attn.kv_state` of `attn.feature_map(K)` and `attn.state_apply` of
    `attn.feature_map(Q)`. This pass replaces each by fused loops that apply
    the map (`elu_plus_one`, `relu` elementwise; FAVOR+ as a register-tiled
    projection of the block's rows by `input_scale * W^T`, then
    `exp(. - |x|^2/2) / sqrt(m)`) to a block of rows as they read it, so
    `phi(K)` and `phi(Q)` never exist:

    ```
    kv_state:    scf.parallel (b, kv head, key chunk)       // chunks when heads are few
                   per block of 64 keys (FAVOR+: 128): phi(K_blk) (scratch), z += sums,
                   S += phi(K_blk)^T V_blk                   // 4 features x EV vectors
                 S, z summed over the chunks
    state_apply: scf.parallel (b, query head, tile of 16 queries; FAVOR+: 128;
                               at most Lq rounded up to 4)
                   phi(Q_tile) (scratch), den = phi(Q) z + eps
                   O = phi(Q) S / den (0 where den = 0), * gate
    ```

    FAVOR+'s projection runs feature block by feature block (as many
    features as a 4-row register tile takes: 64 with AVX-512), each block's
    `input_scale * W^T` laid out contiguously (`[m / FB][D][FB]`, 16 KiB
    for D = 64) and applied to all the rows of the block or tile before
    the next: the slice stays in L1 while the rows stream past it, where
    row by row every 4 rows read the whole of `W^T` (64 KiB for m = 256,
    more than L1) again. The accumulators start at `-(|x|^2 + ln m) / 2`,
    so that the tile's results are the exponents (`phi = exp(acc)`: no
    subtraction and no scaling by `1 / sqrt(m)` per feature); the key sums
    `z` (kv_state) and the products `phi(q) z` (state_apply, by lanes, then
    summed per query) are accumulated from the exponentials in registers,
    not read back from the scratch. With FAVOR+ `state_apply` takes tiles of
    128 queries and `O = phi(Q) S` by blocks of 64 features (a 16 KiB block
    of S in L1 for all the tile's rows, the partial `O` in a scratch tile)
    for the same reason.

    The causal chunked prefix form, `attn.chunked_linear` with `causal` and
    no segment ids, of the same feature maps of Q and K becomes one kernel
    that carries the state through the chunks (the pipeline runs this pass
    before attn-lower-chunked-linear, which takes the rest):

    ```
    chunked:     scf.parallel (b, query head)
                   S = 0 (F x Dv), z = 0 (F)
                   for each chunk of C positions [o, o + n):
                     phi(K_c) (C x F and transposed), phi(Q_c) (C x F)
                     A = phi(Q_c) phi(K_c)^T, lower triangle only   // 4 x EV tiles
                     den = phi(Q_c) z + rowsum A + eps
                     O = (phi(Q_c) S + A V_c) / den, * gate          // one register tile, depth F then the triangle
                     S += phi(K_c)^T V_c, z += colsum phi(K_c)        // keys of the chunk only
    ```

    Each query head carries its own state (a grouped-query head's state is
    recomputed per query head: more work for G > 1, but B x Hq tasks).
    The chunk size must be a multiple of the vector width and of 4.

    Applies to shapes whose input dim is a multiple of the vector width,
    whose feature count a multiple of 4 and of the vector width and whose
    value dim a multiple of the vector width (`vector-width`,
    `vector-registers`: the target, as in attn-flash); the batch and the
    lengths may be dynamic: the loops then take their bounds from the
    buffers (kv_state's key chunks at least 256 keys long, up to 16 of
    them, those past the keys empty; state_apply's and the causal form's
    whole tiles and chunks, their count from the length). The rest keeps
    the reference lowering. A remark per fused op.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def AttnFlashBackward : Attn_CpuKernelPass<"attn-flash-backward"> {
  let summary = "Fused backward kernels of softmax and pointwise attention";
  let description = [{
    Lowers `attn.attention_grad` of softmax and pointwise attention to
    fused passes over the block layout (compile-time, or classified at run
    time), FlashAttention-2's scheme without atomics, on the kernel frame
    of the forward kernels (KernelFrame.h: its scores, modifiers, masks and
    walk over the layout); the `Lq x Lk` scores never exist. In two passes:

    ```
    prologue  scf.parallel (b, h): Q, dO (times the gate) zero-padded to
              whole query blocks (and head dims to whole vectors),
              row-major and transposed (with bf16 pairs: their words, below);
              whether they are all finite; softmax: LSE (+inf padding) and
              D = rowsum(dO * O) - dLSE; scf.parallel (b, kvh): K, V padded
    pass A    scf.parallel (b, kvh, key block j): for each query head of the
              group, each query block i of the transposed layout's row j
              (full blocks unmasked, then partial ones masked; blocks the
              segment ids or the mask tensor rule out skipped):
                S^T = m(scale K_j Q_i^T + bias) (m: ALiBi, softcap, the
                score region; the mask tensor added);
                P^T = exp(S^T - LSE_i) (pointwise: Lk^-alpha h(S^T));
                dP^T = V_j dO_i^T;
                dS^T = scale m' P^T (dP^T - D_i) (pointwise: scale m'
                Lk^-alpha h'(S^T) dP^T); dV_j += P^T dO_i; dK_j += dS^T Q_i
    pass B    scf.parallel (b, h, query block i): for each key block j of
              the layout's row i: the same block step, dQ_i += dS K_j
    ```

    With batch x key/value heads >= 4, one pass instead: scf.parallel (b,
    kvh), its key blocks in order, each block step also adding dS K_j to
    its heads' dQ rows (five products per block, none recomputed). With
    GQA and fewer such tasks but batch x query heads >= 4, one pass over
    (b, h): each task sums its own head's part of dK and dV (`[B, Hq, Lk,
    D]` buffers, Hq / Hkv times dK's and dV's memory; with static sizes
    only while they fit 256 MiB), the group's parts added in order
    afterwards. The remark names the schedule.

    Each gradient element has one writer and a fixed order of summation:
    the gradients are the same bits for any number of threads. Partial
    blocks' products skip the zero weights and score gradients of masked
    scores (a NaN key or query reaches only the gradients that see it)
    where the batch row and head's B rows (Q and dO, or K and V) hold an
    inf or a NaN; elsewhere `0 x b` adds a zero and the plain product runs.
    The forward op
    gains a log-sum-exp result when the gradient needs it (softmax without
    `saved_lse`); pointwise attention's gradient does not read the forward
    results, and a forward op used only by the gradient is erased. Blocks:
    4 vectors of queries (2 below 32 registers) by 64 keys; every product
    a register tile of `mr` broadcast rows by up to 4 vectors.

    The modifiers' gradients: the bias's is the score gradient before the
    scale (stored per block into a `B x Hq x Lq x Lk` buffer, summed over
    the dims the bias broadcasts over in a fixed order); the gate's is
    `dO * O_ungated`, the ungated output summed beside dQ (one more product
    per block); the sinks' is `sum_i exp(sink - LSE_i) (dLSE_i - D_i)`.

    Fused: softmax or pointwise, f32/f16/bf16, static sizes (the
    compile-time layout) or sizes known at run time and padded or packed
    varlen batches (blocks classified at run time), every pattern, block
    table, segment ids, mask tensor and region, GQA, scale, qk-layernorm,
    bias, gate, ALiBi, sinks, soft-capping, score regions (and the
    gradients of their captured tensors), a log-sum-exp cotangent; what
    is left to the reference gradient (convert-attn-grad-to-linalg) gets
    a remark naming why (the capability list, docs/Kernels.md). Head dims
    are padded with zeros to whole vectors.

    With `bf16-dot=native` (or `emulated`, for tests) and bf16 Q, K, V and
    dO (no gate, qk-layernorm or packed batch), the five products multiply
    bf16 pairs with f32 sums (vdpbf16ps), as FlashAttention's bf16
    backward multiplies bf16 tiles: Q, K, V and dO are exact in bf16, so
    the scores and dP lose nothing; P and dS are rounded to bf16 for dV,
    dK and dQ. The prologue writes the pairs' layouts (Q^T and dO^T in
    pairs of head-dim columns, K and V as row words, Q, dO and K in pairs
    of rows), each block step its P^T and dS^T words. Partial blocks whose
    batch row and head hold an inf or a NaN take the f32 product that
    skips zeros.
  }];
  let options = !listconcat(Attn_CpuTargetOptions, [Attn_Bf16DotOption]);
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect",
  ];
}

def AttnLshKernels : Attn_CpuKernelPass<"attn-lsh-kernels"> {
  let summary = "Reformer LSH attention as a counting sort and fused chunk kernels";
  let description = [{
    Lowers `attn.lsh_attention` for the CPU in time `O(rounds (L D b + L +
    b + L W (D + Dv)))` (b buckets, W = 2 chunk_size keys per query),
    where the reference lowering sorts by an `O(L^2)` count:

    ```
    norms         scf.parallel (b, h): inv[i] = rsqrt(|x_i|^2 + 1e-6), the
                  key normalization without a normalized copy (a key's
                  scores are scaled by its inv)
    per round r (round 0, then an scf.for over the others reading their
    slice of one rotation constant, rounds x D x b/2):
      hash        scf.parallel (b, h, row block): buckets = the reference's
                  argmax([x R_r, -x R_r]) (lowest index on ties, NaN: one
                  more bucket) fused: rows in the lanes, a running argmax
                  over groups of columns of R_r (no L x buckets/2
                  projection in memory)
      sort        scf.parallel (b, h): a stable counting sort by bucket,
                  O(L + buckets): histogram, exclusive prefix sum, scatter
                  -> pos[p], the position at sorted place p
      attend      scf.parallel (b, h, chunk): the chunk's C queries in the
                  vector lanes (scale Q^T gathered through pos, D x C); the
                  W keys of the previous chunk (the last for chunk 0) and
                  its own read through pos as rows: S^T = K Q^T in 4 keys
                  x EV query vectors, each key's row times its inv; per
                  query vector, self and (causal)
                  later keys masked, self allowed where nothing else is,
                  softmax down the columns and the log-sum-exp; O = P V in
                  register tiles (V's rows through pos); each row written
                  at its position (the unsort is the scatter); from the
                  second round on, folded into the rounds before it in
                  place: L' = logaddexp(L, lse_r), out' = out e^(L - L') +
                  o_r e^(lse_r - L') (one output buffer for all rounds)
    (the reference combines the rounds at the end: the same softmax over
    the rounds' log-sum-exps)
    ```

    Applies when the chunk size and the value dim are multiples of the
    vector width (and the chunk of 4) and the shapes are static; other ops
    keep the reference lowering. A remark per op. attn-lower-to-llvm-pipeline
    runs it.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def AttnLowerPointwise : Pass<"attn-lower-pointwise"> {
  let summary = "Lower pointwise (ReLU-family) attention to fused, tiled parallel loops";
  let description = [{
    Pointwise attention `P = L^-alpha h(S)` needs no row maximum and no row
    sum, so every query tile is independent. This pass lowers
    `attn.attention` with an `#attn.pointwise` normalizer to the fused tile
    kernel (docs/Kernels.md):

    ```
    scf.parallel (b, h, query tile) {        // all threads
      Q^T tile (D x Mr, scale folded in, qk-layernorm fused)
      for key block in the tile's full blocks, then its partial blocks:
        S^T = K_blk Q^T                      // register-blocked FMAs
        P = L^-alpha h(S^T) (+ bias), masked in partial blocks only
        O^T += V_blk^T P                     // register-blocked FMAs
      O = O^T^T (* gate)
    }
    ```

    Empty blocks of the mask are never visited. No buffer is larger than one
    tile (D x Mr, Nb x Mr, Dv x Mr floats). Tile sizes come from a model of
    the target (`vector-width`, `vector-registers`; the defaults describe
    AVX-512, whatever the host) unless given; with few queries the query
    heads sharing a key/value head fill the tiles together (decode, as in
    `attn-flash`). A remark reports the tiles and the key blocks visited.
    An op with a `layout` attribute (from attn-block-sparse) is lowered
    with its layout's blocks.
  }];
  let options = !listconcat(Attn_CpuTargetOptions, [
    Attn_Bf16DotOption,
    Option<"queryTile", "query-tile", "int64_t", /*default=*/"0",
           "queries per tile, a multiple of the vector width (0: the model's)">,
    Option<"keyBlock", "key-block", "int64_t", /*default=*/"0",
           "keys per block, a multiple of the register block (0: the model's)">,
  ]);
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect",
  ];
}

def AttnBlockSparse : Pass<"attn-block-sparse"> {
  let summary = "Turn sparse mask patterns into block kernels";
  let description = [{
    For `attn.attention` with a softmax or pointwise normalizer and a mask
    pattern that leaves key blocks empty, computes the pattern's block
    layout at compile time (the block-layout analysis: per head, per query
    block, the full and the partial key blocks, CSR-compressed) and attaches
    it to the op as its `layout` attribute. Then (unless `kernels=false`) it
    lowers the op to the fused tile kernel: full blocks computed without
    mask evaluation, partial blocks with the per-element mask, empty blocks
    never visited; softmax runs online across the visited blocks.

    ```mlir
    %o = attn.attention %q, %k, %v {normalizer = #attn.softmax,
        pattern = #attn.window<before = 128, after = 128>} : ...
    // attn-block-sparse{kernels=false}:
    %o = attn.attention %q, %k, %v {layout = #attn.block_layout<
        block_q = 64, block_k = 64, ...>, normalizer = #attn.softmax,
        pattern = #attn.window<before = 128, after = 128>} : ...
    ```

    Segment masks (document ids) are runtime data: their blocks are partial
    in the static layout, and the generated code computes the id range of
    each query tile and key block and skips the pairs that cannot match (a
    runtime layout). Block sizes default to the kernel's tiles for the target
    (`vector-width`, `vector-registers`: 64 x 64 with the default AVX-512
    model). A remark reports the blocks visited.
  }];
  let options = !listconcat([
    Option<"blockQ", "block-q", "int64_t", /*default=*/"0",
           "queries per block (0: the kernel's query tile)">,
    Option<"blockK", "block-k", "int64_t", /*default=*/"0",
           "keys per block (0: the kernel's key block)">,
  ], Attn_CpuTargetOptions, [
    Attn_Bf16DotOption,
    Option<"kernels", "kernels", "bool", /*default=*/"true",
           "lower the ops to kernels (false: stop at attn.attention with "
           "its layout)">,
  ]);
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect",
  ];
}

def AttnFlash : Pass<"attn-flash"> {
  let summary = "Lower softmax attention to fused online-softmax (flash) loops";
  let description = [{
    Lowers `attn.attention` with `#attn.softmax` to the fused tile kernel with
    an online softmax: per query row a running maximum `m` and sum `l`; each
    key block's scores are exponentiated against the new maximum and the
    output accumulator is rescaled by `exp(m_old - m_new)`. The `Lq x Lk`
    scores never exist. Masked blocks come from the compile-time block
    layout (full blocks without mask evaluation, partial ones masked per
    element, empty ones skipped); fully masked rows give zeros; scores of any
    size give no inf or NaN (the maximum is subtracted before `exp`).
    Bias, gate, segment ids, grouped-query heads and qk-layernorm are fused.
    An op with a `layout` attribute is lowered with its layout's blocks.
    Tiles come from the target model (`vector-width`, `vector-registers`;
    the defaults describe AVX-512, whatever the host). With few queries
    (decode: static `Lq` at most half a tile, no bias, gate, mask tensor,
    segment ids, packed batch or per-head pattern) the `G x Lq` rows of the
    query heads sharing a key/value head fill the tiles together, so each
    K/V element is read once for them, and the next key block is prefetched
    (docs/Kernels.md, "Decode"); `query-tile` turns this off. With
    `bf16-dot=native` (a CPU with AVX512_BF16) bf16 tiles compute QK^T and
    PV as `vdpbf16ps` (`x86vector.avx512.dot`) on pairs of bf16, P rounded
    to bf16; `emulated` builds the same kernels in portable vector ops
    (docs/Kernels.md, "bf16 dot products"; also in attn-lower-pointwise
    and attn-block-sparse). A remark reports the tiles and the key blocks
    visited.

    `attn.relative_attention` (Transformer-XL) runs on the same kernel:
    the memory prepended to K and V (`tensor.concat`, `(M + L) x D` per
    head), causal over the compile-time layout, and each tile keeps two
    query tiles, `scale (q + u)^T` for the keys and `scale (q + v)^T` for
    the distance embeddings. The embeddings are transposed and padded with
    zeros once per call (`H x D x (query-tile + key-block + Lk +
    query-tile)`), so the position term of a vector of queries and one key,
    `(q_i + v) . r_{M+i-j}`, reads one contiguous vector per d (the relative
    shift as index arithmetic): no `Lq x Lk` tensor, about 1.5x the FMAs of
    causal softmax over the same keys.
  }];
  let options = !listconcat(Attn_CpuTargetOptions, [
    Attn_Bf16DotOption,
    Option<"queryTile", "query-tile", "int64_t", /*default=*/"0",
           "queries per tile, a multiple of the vector width (0: the model's)">,
    Option<"keyBlock", "key-block", "int64_t", /*default=*/"0",
           "keys per block, a multiple of the register block (0: the model's)">,
  ]);
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::x86vector::X86VectorDialect",
  ];
}

//===----------------------------------------------------------------------===//
// GPU
//===----------------------------------------------------------------------===//

def ConvertAttnToGPU : Pass<"convert-attn-to-gpu"> {
  let summary = "Lower softmax and pointwise attention to fused GPU kernels";
  let description = [{
    Replaces every `attn.attention` with a softmax or pointwise normalizer
    by one `gpu.launch`:

    - grid `(query tiles, query heads, batch)`, the last (for causal masks
      the heaviest) tiles first; 128 threads per block;
    - the key blocks of each query tile come from the compile-time block
      layout of the mask (attn-opt/Mask/BlockLayout.h) with the kernel's
      tile sizes: full blocks without mask evaluation, partial blocks masked
      through the shared mask emitter, empty blocks never visited; masks
      bound by `#attn.segments` also skip blocks at run time;
    - each K/V block is staged in shared memory (workgroup attributions) by
      coalesced 16-byte cooperative loads between two `gpu.barrier`s.

    Two kernels:

    - **MMA** (f16 or bf16 Q/K/V, head dim a multiple of 16, value dim a
      multiple of 8, both up to 256, no qk-layernorm; `tensor-cores=true`):
      four warps of 16 query rows; `S = Q K^T` and `O += P V` are
      `nvgpu.mma.sync` m16n8k16 with f32 accumulators; `P` (rounded to the
      input type) is built from the S accumulators in registers; the online
      softmax keeps per-row `m` and per-lane partial `l`, reduced across the
      four lanes of a quad by `gpu.shuffle xor`. Shared rows are padded by
      16 bytes so fragment loads are free of bank conflicts.
    - **SIMT** (every other case, any float type, f32 arithmetic): 1 to 32
      adjacent threads own a query row, each a slice of at most 64 elements
      of D and Dv in registers; scores are register dot products reduced by
      a butterfly of shuffles; the online softmax advances 16 keys at a time.

    Both fuse bias, gate, segment ids, GQA/MQA and (SIMT) qk-layernorm, give
    zeros for fully masked rows and never form the `Lq x Lk` scores. A
    remark reports the kernel, its tiles and the key blocks visited.

    Example:

    ```mlir
    %o = attn.attention %q, %k, %v normalizer = #attn.softmax
           pattern = #attn.causal
         : tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>,
           tensor<1x8x1024x64xf16> -> tensor<1x8x1024x64xf16>
    ```

    becomes a `gpu.launch blocks(16, 8, 1) threads(128, 1, 1)` with two
    workgroup buffers `memref<64x72xf16, #gpu.address_space<workgroup>>`
    and 64 `nvgpu.mma.sync` per key block.
  }];
  let options = [
    Option<"tensorCores", "tensor-cores", "bool", /*default=*/"true",
           "use the mma.sync kernel for f16/bf16 where it applies">,
    Option<"blockK", "block-k", "int64_t", /*default=*/"0",
           "keys per shared-memory block, a multiple of 16 (0: by size)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::nvgpu::NVGPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::vector::VectorDialect",
  ];
}

#endif // ATTN_CONVERSION_PASSES_TD
