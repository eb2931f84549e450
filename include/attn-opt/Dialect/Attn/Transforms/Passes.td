//===- Passes.td - attn dialect transformations ------------*- tablegen -*-===//

#ifndef ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
#define ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnDecompose : Pass<"attn-decompose"> {
  let summary = "Split attn.attention into its explicit steps";
  let description = [{
    Rewrites `attn.attention` into the internal ops that name its steps:

    ```
    [attn.layer_norm]            qk-layernorm of queries and keys
    [attn.feature_map]           phi of queries and keys (kernel attention)
    attn.scores                  scale * Q K^T (+ bias)
    attn.normalize               softmax / pointwise / kernel, with the mask
    attn.apply                   P V (* gate)
    ```

    For example

    ```mlir
    %o = attn.attention %q, %k, %v {normalizer = #attn.kernel<elu_plus_one>,
                                    pattern = #attn.causal} : ...
    ```

    becomes

    ```mlir
    %fq = attn.feature_map %q {kernel = #attn.kernel<elu_plus_one>} : ...
    %fk = attn.feature_map %k {kernel = #attn.kernel<elu_plus_one>} : ...
    %s = attn.scores %fq, %fk : ...
    %p = attn.normalize %s {normalizer = #attn.kernel<elu_plus_one>,
                            pattern = #attn.causal} : ...
    %o = attn.apply %p, %v : ...
    ```

    The steps compute exactly what the op computes (same reference
    lowering); the decomposed form is what attn-reassociate rewrites, and
    users may write it by hand. Other ops are left alone.
  }];
  let dependentDialects = ["::mlir::attn::AttnDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnReassociate : Pass<"attn-reassociate"> {
  let summary = "Compute kernelized attention as phi(Q) (phi(K)^T V)";
  let description = [{
    Kernelized attention written as `(phi(Q) phi(K)^T) V` costs
    O(Lq Lk F) time and an Lq x Lk buffer. Reassociated as
    `phi(Q) (phi(K)^T V)` with the normalizer `phi(Q) . sum_j phi(k_j)` it
    costs O((Lq + Lk) F Dv) and needs no quadratic buffer:

    - no mask: `attn.kv_state` builds one `F x Dv` state and an `F` key sum
      per batch and key/value head (shared by the query heads of a GQA
      group), `attn.state_apply` computes
      `phi(q) S / (phi(q) . z + eps)`;
    - causal or segment masks: `attn.chunked_linear`, the chunked prefix
      form (a small quadratic form inside each chunk, a running state across
      chunks);
    - other masks (windows, global tokens, block layouts, ...) are not
      expressible this way: the op stays quadratic and a remark says why.

    It fires on `attn.attention` with an `#attn.kernel` normalizer and on the
    decomposed form `attn.apply(attn.normalize{#attn.kernel}(attn.scores))`
    written by hand or by attn-decompose (no bias; a scale is folded into the
    query features).

    A cost model from the static shapes decides: the quadratic form costs
    `2 Lq Lk (F + Dv)` flops per head (half that when causal) and moves the
    `Lq x Lk` scores and weights through memory; the linear form costs
    `2 (Lq + Lk) F Dv` (chunked: `2 L (c (F + Dv) + 3 F Dv)`); each is
    timed as `flops / 100 GFLOP/s + bytes / 10 GB/s` and the cheaper wins.
    `mode=linear` or `mode=quadratic` forces the choice. The decision is
    reported as a remark on the op.

    The chunk size `c` is `chunk-size` when positive, else the model's
    default: the power of two nearest `sqrt(F Dv)` within [16, 128], which
    balances the per-query intra-chunk work `2 c (F + Dv)` against the
    per-chunk state traffic `F Dv`.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"auto\"",
           "auto (cost model), linear or quadratic">,
    Option<"chunkSize", "chunk-size", "int64_t", /*default=*/"0",
           "chunk size of the causal prefix form (0: cost-model default)">,
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnApproximateSoftmax : Pass<"attn-approximate-softmax"> {
  let summary = "Approximate softmax attention by FAVOR+ kernel attention (opt-in)";
  let description = [{
    Replaces the softmax normalizer of `attn.attention` by Performer's FAVOR+
    kernel with `features` positive orthogonal random features and the same
    scale, so that `phi(q) . phi(k)` is an unbiased estimate of
    `exp(scale q . k)` and attn-reassociate can make the attention linear in
    the sequence length. Ops with a bias are left alone (kernel attention
    has no scores to add it to), with a remark.

    This changes the numbers. The estimate's error shrinks like
    `1/sqrt(features)` but grows like `exp(|q + k|^2)` with the size of the
    scaled queries and keys: docs/Kernelized.md gives measured errors (at
    L = 1024, D = 64, scale 1/8: a relative output error of 0.19, 0.071,
    0.028 for 64, 256, 1024 features with inputs N(0, 1/16), but above 5
    for unit-normal inputs at any of those feature counts).

    ```mlir
    %o = attn.attention %q, %k, %v {normalizer = #attn.softmax} : ...
    // attn-approximate-softmax{features=256}:
    %o = attn.attention %q, %k, %v {normalizer = #attn.kernel<favor,
        features = 256, orthogonal = true, seed = 0>, scale = 0.125 : f32} : ...
    ```
  }];
  let options = [
    Option<"features", "features", "int64_t", /*default=*/"256",
           "number of random features">,
    Option<"seed", "seed", "uint64_t", /*default=*/"0",
           "seed of the projection">,
    Option<"orthogonal", "orthogonal", "bool", /*default=*/"true",
           "orthogonal random features">,
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

def AttnProjectLowRank : Pass<"attn-project-lowrank"> {
  let summary = "Linformer as two projections feeding dense attention";
  let description = [{
    Rewrites `attn.lowrank_attention` into what it computes, with no
    `Lq x P` score tensor: the projections `K' = E K` and `V' = F V` as
    contractions (`linalg.generic`, loops `(b, h, p, j, c)`: `E[p, j]`,
    `x[b, h, j, c]`, reduced over the key position `j`), which the CPU
    pipeline tiles for threads and registers like any matmul of a graph
    (attn-tile-contractions, attn-vectorize-contractions), and softmax
    `attn.attention` of Q against `Lk = P` projected keys, with the op's
    scale, which attn-flash (or convert-attn-to-gpu) makes one fused kernel.
    Grouped-query heads carry over (the projections are per key/value
    head). The projections and the attention compute in f32, as the
    reference lowering does: with bf16 or f16 operands Q is extended to f32
    (`O(Lq D)`) and the result truncated back.

    ```mlir
    %o = attn.lowrank_attention %q, %k, %v, %e, %f
        : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>,
          tensor<1x8x4096x64xf32>, tensor<256x4096xf32>, tensor<256x4096xf32>
          -> tensor<1x8x4096x64xf32>
    ```

    becomes

    ```mlir
    %kp = linalg.generic {...} ins(%e, %k : tensor<256x4096xf32>,
        tensor<1x8x4096x64xf32>) outs(%zero : tensor<1x8x256x64xf32>) ...
    %vp = linalg.generic {...} ins(%f, %v : ...) outs(...) ...
    %o = attn.attention %q, %kp, %vp {normalizer = #attn.softmax,
                                      scale = 1.250000e-01 : f32}
        : tensor<1x8x4096x64xf32>, tensor<1x8x256x64xf32>,
          tensor<1x8x256x64xf32> -> tensor<1x8x4096x64xf32>
    ```

    A remark on each op says so. attn-lower-to-llvm-pipeline and
    attn-lower-to-nvvm-pipeline run this pass; the reference pipeline
    (`reference=true`) keeps the reference lowering.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::attn::AttnDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnRaise : Pass<"attn-raise", "func::FuncOp"> {
  let summary = "Recognize attention written as linalg ops and raise it to "
                "attn.attention";
  let description = [{
    Finds attention subgraphs in a function of linalg ops on tensors and
    replaces each by one `attn.attention`, leaving the rest of the graph
    alone (docs/Raising.md). Recognized (named ops and `linalg.generic`
    alike, through the `LinalgOp` interface):

    - the scores: a contraction (`linalg.batch_matmul`, `linalg.generic`
      with a multiply-add body; `linalg::inferContractionDims`: batch dims,
      one query dim, one key dim, one reduced head dim) of Q `[batch..., Lq,
      D]` and K `[batch..., Lk, D]` or K transposed (`[batch..., D, Lk]`,
      e.g. from `linalg.transpose`), accumulating into zeros;
    - an optional scale: an elementwise multiplication or division of the
      scores by a scalar constant;
    - the normalizer over the key dim: `linalg.softmax`, or softmax
      decomposed into a max reduction, `exp(s - max)`, a sum reduction and
      a division; or pointwise attention: a chain of elementwise ops of one
      tensor computing `c * h(a * s)` (whatever its spelling: one fused
      `linalg.generic` or several ops, `x * c` or `x / c`, erf or tanh
      GELU, `log1p(exp)` or `log(1 + exp)`, TOSA's clamp or sigmoid), found
      by evaluating the payloads at sample points and fitting `h` from the
      table of `#attn.pointwise` functions: raised as
      `#attn.pointwise<h, alpha = -ln(c) / ln(Lk)>` with scale `a` (`c`
      and `a` constants, or computed from static shapes: `tensor.dim`,
      casts, `math.powf` / `sqrt` / `rsqrt`); a mask before `h` (`-inf`
      fill, for `h(-inf) = 0`) or after it (a `0` fill);
    - the output: a contraction of the weights with V `[batch..., Lk, Dv]`
      accumulating into zeros;
    - kernelized (linear) attention with elu + 1 or relu feature maps on Q
      and K, normalized before the V product (`A / rowsum(A)`, then `x V`)
      or after it (`(A V) / (rowsum(A) + eps)`, A maybe masked by a `0`
      fill), or in linear order
      (`phi(Q) (phi(K)^T V) / (phi(Q) . sum_k phi(K) + eps)`):
      `#attn.kernel<phi, eps = eps>`, which attn-reassociate then computes
      in linear form.

    With 2 batch dims the operands are `[B, H, L, D]`; with 1 they are
    `[B*H, L, D]` and the op gets a head dim of 1 (`tensor.expand_shape`
    before, `tensor.collapse_shape` after). Every intermediate must have no
    other use and static shapes.

    ```mlir
    %kt = linalg.transpose ins(%k : tensor<8x128x64xf32>) outs(...) permutation = [0, 2, 1]
    %s = linalg.batch_matmul ins(%q, %kt : ...) outs(%zero : tensor<8x128x128xf32>)
    %ss = linalg.generic {...} ins(%s : ...) outs(...) {
      ^bb0(%x: f32, %o: f32):
        %y = arith.mulf %x, %cst_0_125 : f32
        linalg.yield %y : f32 }
    %p = linalg.softmax dimension(2) ins(%ss : ...) outs(...)
    %o = linalg.batch_matmul ins(%p, %v : ...) outs(%zero2 : tensor<8x128x64xf32>)
    ```

    becomes (with expand/collapse shapes around it)

    ```mlir
    %o4 = attn.attention %q4, %k4, %v4 {normalizer = #attn.softmax,
                                        scale = 1.250000e-01 : f32} : ...
    ```

    A remark on the raised op says what was recognized; a subgraph that
    starts like attention (a contraction feeding a softmax or an elementwise
    op, or an elementwise division of a contraction by a row value) but is
    not raised gets a remark saying why (another use of the scores, a
    scale that is not a constant, a reduction over the wrong dim, ...).
  }];
  let options = [
    Option<"missRemarks", "miss-remarks", "bool", "true",
           "Say why a subgraph that looks like attention was not raised "
           "(attn-lower-to-llvm-pipeline raises twice, before and after "
           "elementwise fusion, and says it only the second time)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::attn::AttnDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnInferMask : Pass<"attn-infer-mask"> {
  let summary = "Read the structure of constant mask tensors into patterns";
  let description = [{
    A constant mask tensor (`mask(%m)` of `attn.attention`, an
    `arith.constant`) says at compile time which keys each query sees; the
    kernels can only use that when it is a pattern (blocks skipped or
    computed unmasked from the block layout). This pass replaces the
    operand by the pattern it equals, intersected with the op's own
    pattern, and drops the operand:

    - per head of the mask (one pattern, or `#attn.per_head` when the heads
      differ; a mask that differs across the batch is kept), the allowed
      set is compared, element by element through the mask library, with
      candidates whose parameters are read from the mask: `#attn.causal`;
      `#attn.window<before, after>` and `#attn.dilated` from the smallest
      and largest `j - i` and their gcd; `#attn.strided` and
      `#attn.fixed` (alone and intersected with causal); each of these in a
      union with `#attn.global<G>`, G the keys every query sees whose own
      query sees every key; `#attn.global<G>` alone;
    - no candidate equal: `#attn.block<size = s, ...>`, s the largest of
      64, 32, ..., 1 on whose `s x s` blocks the mask is uniform, so empty
      blocks are skipped and full ones run unmasked (a layout of more than
      2^22 blocks keeps the operand, the run-time classification applies);
    - an additive mask's allowed set is its entries above -inf; finite
      non-zero entries become the op's bias (with -inf entries as 0) when
      it has none, else the operand is kept.

    ```mlir
    %m = arith.constant dense<[[true, false, false], [true, true, false],
                               [true, true, true]]> : tensor<3x3xi1>
    %o = attn.attention %q, %k, %v mask(%m : tensor<3x3xi1>)
        {normalizer = #attn.softmax} : ...
    ```

    becomes `attn.attention %q, %k, %v {normalizer = #attn.softmax,
    pattern = #attn.causal}`. A remark on each op says what the mask became
    and how many blocks of `block-q x block-k` its layout visits.
  }];
  let options = [
    Option<"blockQ", "block-q", "int64_t", "64",
           "Query rows of the blocks the remark counts">,
    Option<"blockK", "block-k", "int64_t", "64",
           "Keys of the blocks the remark counts">,
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect"];
}

def AttnDifferentiate : Pass<"attn-differentiate", "ModuleOp"> {
  let summary = "Add the backward function of each function with an attention";
  let description = [{
    For each public function `@F` with a body holding one `attn.attention` whose
    output `@F` returns (with or without its log-sum-exp), adds
    `@F_grad`: `@F`'s arguments, then the cotangent of the output
    (`d_output`, the output's type) and, when `@F` returns the log-sum-exp,
    its cotangent (`d_lse`); it returns the gradients of the attention's
    query, key and value, of its bias, gate, sinks, ALiBi slopes and FAVOR+
    projection when it has them, then of each floating-point tensor its `score_mod` region
    captures (a learned bias table; with `capture-gradients=false`, none),
    in that order (docs/Gradients.md). The body is `@F`'s, ending in an
    `attn.attention_grad` of the attention:

    ```mlir
    func.func @F(%q: tensor<1x8x256x64xf32>, %k: tensor<1x2x256x64xf32>,
                 %v: tensor<1x2x256x64xf32>) -> tensor<1x8x256x64xf32> {
      %o = attn.attention %q, %k, %v {normalizer = #attn.softmax} : ...
      return %o : tensor<1x8x256x64xf32>
    }
    ```

    gains

    ```mlir
    func.func @F_grad(%q: ..., %k: ..., %v: ..., %d_output: tensor<1x8x256x64xf32>)
        -> (tensor<1x8x256x64xf32>, tensor<1x2x256x64xf32>, tensor<1x2x256x64xf32>) {
      %o = attn.attention %q, %k, %v {normalizer = #attn.softmax} : ...
      %dq, %dk, %dv = attn.attention_grad %o, %d_output : ...
      return %dq, %dk, %dv : ...
    }
    ```

    The gradients are those of the attention's operands (the function's
    arguments when the operands are; ops computing an operand are not
    differentiated).

    Linformer (`attn.lowrank_attention`, one per function, its output
    returned): `@F_grad` computes the attention over the projected keys and
    values as attn-project-lowrank writes it (`K' = E K`, `V' = F V`, dense
    softmax over the `P` projected rows), its `attn.attention_grad` (the
    fused backward: memory and time linear in `L`), then the projections'
    chain rule: it returns the gradients of query, key, value, `key_proj`
    and `value_proj` (`dK = E^T dK'`, `dE = sum dK' K^T` over batch, heads
    and the head dim; likewise for V and F).

    Transformer-XL (`attn.relative_attention`, one per function, its
    output returned): `@F_grad` loops over blocks of 64 query rows; each
    block is an `attn.attention` of its rows `q + u` over the memory and
    the segment, with its position scores `scale (q_i + v) . r_{M+i-j}`
    (`rows x (M + L)`) as the bias and the causal mask (`j <= M + i`) as a
    mask region at the block's offset, and that op's `attn.attention_grad`
    (the fused backward) with the bias's gradient. Gathered along the
    diagonals, the bias's gradient gives the position term of dq
    (`scale dP R`), dR (`scale dP^T (q + v)`) and the position bias's
    gradient; the content bias's sums dq's content term. Scratch: a few
    `rows x (M + L)` tensors per batch row and head (memory linear in L).
    It returns the gradients of query, key, value, `pos_emb`,
    `content_bias` and `position_bias`; the memory is a stop-gradient (as
    Transformer-XL trains it: no gradient of `memory_key` and
    `memory_value`). Private functions and functions without an attention
    are left alone; a
    function with several, one over a paged KV cache, one that does not
    return the attention's output, or one whose `_grad` name is taken, is
    an error naming it.
  }];
  let options = [
    Option<"captureGradients", "capture-gradients", "bool", "true",
           "Return the gradients of the floating-point tensors a score_mod "
           "region captures (false: they are constants to @F_grad)">
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AttnPartitionSequence : Pass<"attn-partition-sequence", "::mlir::ModuleOp"> {
  let summary = "Sequence-parallel attention: per-rank kernels and a ring over MPI";
  let description = [{
    Partitions `attn.attention` whose query, key and value are sharded along
    the sequence (dimension 2) over a 1-D `shard.grid` into the program
    each rank runs (SPMD): its own rows of the queries against every block
    of keys it needs, the key/value blocks passed around a ring of ranks
    with `attn.exchange` (non-blocking, overlapped with the kernel of the
    block in hand), the partial results merged through their log-sum-exp.

    Input: a function whose sharded arguments go through `shard.shard`
    with `shard.sharding @grid split_axes = [[], [], [0]]` (optionally
    `sharded_dims_offsets` for uneven static chunks) into the op, whose
    result goes through `shard.shard` with the same sharding to the return:

    ```mlir
    shard.grid @ring(shape = ?)
    func.func @attn(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>,
                    %v: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
      %s = shard.sharding @ring split_axes = [[], [], [0]] : !shard.sharding
      %qs = shard.shard %q to %s : tensor<1x8x?x64xf32>
      %ks = shard.shard %k to %s : tensor<1x8x?x64xf32>
      %vs = shard.shard %v to %s : tensor<1x8x?x64xf32>
      %o = attn.attention %qs, %ks, %vs {normalizer = #attn.softmax,
                                         pattern = #attn.causal}
          : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>,
            tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
      %os = shard.shard %o to %s : tensor<1x8x?x64xf32>
      return %os : tensor<1x8x?x64xf32>
    }
    ```

    Output: the same function over each rank's chunk (the sequence
    dimension of the sharded arguments and results becomes `?`): the rank
    and the number of ranks from `mpi.comm_world`, every rank's row count
    (`attn.allreduce` of one entry per rank), then `P` steps; at step `t`
    rank `r` holds the key/value block of rank `(r - t) mod P`, starts
    passing it on to `r + 1` (and receiving the next from `r - 1`), runs
    `attn.attention` of its queries against it with a mask region that
    evaluates the op's mask at global positions (the chunk offsets are
    captured, so the flash kernel classifies blocks at run time), and
    merges the result into the running output and log-sum-exp.

    The mask drives the schedule. Whether the queries of rank `d` see any
    key of rank `s` is the interval analysis of the mask (ModRegion.h) over
    the box of their positions, evaluated at run time from the chunk
    sizes: a block no remaining rank on its way needs is not sent (causal:
    a block goes only to the ranks after its own; a sliding window: to the
    neighbours whose rows its keys reach), and a pair that sees nothing
    runs no kernel. A remark says what the schedule sends.

    Chunks: contiguous (rank `r` holds rows `[o_r, o_r + n_r)`, any sizes,
    `o` their prefix sums; a static sharding gives the sizes, checked at
    run time), or zigzag with `attn.sequence_order = "zigzag"` on the op
    (the sequence cut into `2P` near-equal chunks, first ones one row
    longer; rank `r` holds chunk `r` then chunk `2P - 1 - r`: equal causal
    work on every rank). A grid of static size `N` run on another number
    of ranks, or a chunk of the wrong size, is reported through
    `attn_opt_runtime_error` on every rank (each checks every size, so all
    ranks agree) and computes nothing, never a hang.

    Pointwise attention needs no merge statistics: the blocks' outputs add
    up (each block runs with `alpha = 0`) and the sum is scaled once by
    `Lk^-alpha` of the whole sequence.

    Gradients: an `attn.attention_grad` of a sharded op, with its
    cotangents (and `saved_output` / `saved_lse`) sharded like the
    operands and its gradients of query, key and value going through
    `shard.shard` (what attn-differentiate writes for a sharded `@F`),
    becomes the rank's backward: for softmax without saved statistics the
    forward ring first; then the ring again, where a rank that needs the
    block in hand runs the block's `attn.attention_grad` with the whole
    sequence's output and log-sum-exp as `saved_output` / `saved_lse` (its
    share of the gradient), adds its dQ, and sends the block's dK and dV
    straight back to the block's owner (`attn.exchange` tags 3 and 4: at
    step `t` to `r - t`, receiving from `r + t`), which adds them in ring
    order. A score region's captured tensors' gradients are all-reduced.

    ```mlir
    %do_s = shard.shard %do to %s : tensor<1x8x?x64xf32>
    %dq, %dk, %dv = attn.attention_grad %o, %do_s
        : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>
        -> tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>
    %dq_s = shard.shard %dq to %s : tensor<1x8x?x64xf32>
    ```

    Kernelized attention's gradient reduces the key/value state as the
    forward and the query state `phi(Q)^T du` the other way (the ranks
    after each), and gives both to the rank's `attn.attention_grad` as
    `key_state` / `query_state` (no ring).

    Supported: the softmax and pointwise normalizers, no pattern, `#attn.causal`,
    `#attn.window`, a mask region and a score region (evaluated at global
    positions; their captures replicated on every rank), GQA, a
    log-sum-exp result (softmax), f32. Everything else the op may carry is a
    diagnostic naming it.

    With `replicate`, the annotations are dropped instead and every rank
    computes the whole op from whole inputs: the single-process reference
    (`attn-run --check` under `mpiexec`).
  }];
  let options = [
    Option<"replicate", "replicate", "bool", /*default=*/"false",
           "Drop the sharding annotations (every rank computes the whole op)">
  ];
  let dependentDialects = ["::mlir::attn::AttnDialect",
                           "::mlir::DLTIDialect",
                           "::mlir::mpi::MPIDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // ATTN_DIALECT_ATTN_TRANSFORMS_PASSES_TD
