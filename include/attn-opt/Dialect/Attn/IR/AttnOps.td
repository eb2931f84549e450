//===- AttnOps.td - attn dialect operations ----------------*- tablegen -*-===//
//
// The user-level operations of the attn dialect.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_TD

include "attn-opt/Dialect/Attn/IR/AttnAttrs.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Dialect/MPI/IR/MPITypes.td"

def Attn_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Attn_IdTensor : RankedTensorOf<[I32, I64]>;
def Attn_LengthTensor : 1DTensorOf<[I32]>;
def Attn_MaskTensor : RankedTensorOf<[I1, F32, F16, BF16]>;
/// One f32 per query head (ALiBi slopes, attention sinks).
def Attn_HeadVector : 1DTensorOf<[F32]>;
/// A paged KV cache's page table (`B x max_pages`).
def Attn_PageTable : 2DTensorOf<[I32]>;
/// The log-sum-exp of each query row (`B x Hq x Lq`).
def Attn_LseTensor : RankedTensorOf<[F32]>;

/// A user-level attention op; `interfaceOverrides` names the
/// AttentionOpInterface methods with a default the op defines itself.
class Attn_AttentionLikeOp<string mnemonic, list<Trait> traits = [],
                           list<string> interfaceOverrides = []>
    : Attn_Op<mnemonic, !listconcat([Pure,
        DeclareOpInterfaceMethods<Attn_FlopCountOpInterface>,
        DeclareOpInterfaceMethods<Attn_AttentionOpInterface,
                                  interfaceOverrides>], traits)> {
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

def Attn_AttentionOp : Attn_AttentionLikeOp<"attention",
    [AttrSizedOperandSegments, IsolatedFromAbove,
     DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
                               ["reifyResultShapes"]>],
    ["getDefaultScale"]> {
  let summary = "multi-head attention: scores, normalizer, mask, weighted sum";
  let description = [{
    Computes `O = P V` per batch and query head, where

    - `S[i,j] = scale * <q_i, k_j> (+ bias[i,j])`, `scale` defaulting to
      `1/sqrt(D)` (for kernel attention see `#attn.kernel`),
    - `P` comes from `S` by the `normalizer` (`#attn.softmax`,
      `#attn.pointwise<h, alpha>`, `#attn.kernel<phi>`) restricted to the
      keys the `pattern` allows (all keys when absent),
    - a query row with no allowed key gives zeros,
    - the result is multiplied elementwise by `gate` when present.

    Shapes: query `B x Hq x Lq x D`, key `B x Hkv x Lk x D`, value
    `B x Hkv x Lk x Dv`, result `B x Hq x Lq x Dv`, with `Hq % Hkv == 0`
    (grouped-query attention; query head `h` reads key/value head
    `h / (Hq / Hkv)`; `Hkv = 1` is multi-query attention). With `Lq != Lk`
    queries are aligned to the end of the keys.

    Dynamic sizes: `B`, `Lq` and `Lk` may be `?` (head counts and head dims
    are static); the result is dynamic exactly where the size it takes
    (`B` and `Lq` of the query) is. The verifier checks the sizes it knows;
    sizes that must agree but are not both static (the batch of query, key
    and value; `Lk` of key and value; the shapes of bias, gate and segment
    ids) are checked by the generated code, which calls
    `attn_opt_runtime_error` (attn-opt/Runtime/Host/RuntimeErrors.h) on a violation
    and skips the computation. Patterns that choose blocks at compile time
    (`#attn.random`, `#attn.block`) and the `layout` attribute need static
    lengths; every other pattern is evaluated at run time.

    Varlen batches (one of two forms, for softmax, pointwise and kernel
    attention; every rule above then applies per sequence, with its own
    lengths and the alignment of its queries to the end of its keys):
    - padded: `query_lengths(%lq)` and/or `key_lengths(%lk)`, `i32` tensors
      of `B` entries: sequence `b` has the first `lq[b]` queries (rows past
      it give zeros) and the first `lk[b]` keys (keys past it are never
      visited), `0 <= lq[b] <= Lq`, `0 <= lk[b] <= Lk`; a missing operand
      means the full length;
    - packed (FlashAttention's `cu_seqlens`): `query_offsets(%cq)` and
      `key_offsets(%ck)`, `i32` tensors of `N + 1` entries for `N`
      sequences, both given; query and key have batch 1 and hold the
      sequences one after the other: sequence `s` has query rows
      `[cq[s], cq[s+1])` and key rows `[ck[s], ck[s+1])`. Offsets start at
      0 and do not decrease; the last lies within the rows; rows past it
      give zeros.
    Invalid lengths or offsets are reported at run time like sizes. Varlen
    operands exclude bias and a `layout`; packed batches exclude segments.

    Paged KV cache (vLLM's and FlashInfer's layout): with
    `page_table(%pt : tensor<B x P_max x i32>)`, key and value are pools of
    pages, `num_pages x Hkv x page x D` (and `... x Dv`), the page size
    `page` static; key `j` of sequence `b` is row `j % page` of page
    `pt[b, j / page]`. The key length is `Lk = P_max * page`, and
    `key_lengths` (required) gives each sequence's cache length; page table
    entries past it are never read (they may hold anything). Entries in use
    must lie in `[0, num_pages)` (checked at run time). Not with packed
    offsets or segment ids.

    Optional operands:
    - `bias(%b)`: `B' x H' x Lq x Lk` added to the scores, `B'` in {1, B},
      `H'` in {1, Hq} (broadcast); not with kernel attention;
    - `gate(%g)`: `B x Hq x Lq x Dv`, multiplies the output (gated attention);
    - `segments(%s)`: `B x Lq` integer document ids for `#attn.segments`,
      and `key_segments(%t)` (`B x Lk`) when `Lq != Lk`;
    - `projection(%w)`: the `features x D` FAVOR+ projection, replacing the
      seeded one of `#attn.kernel<favor, ...>`;
    - `mask(%m)`: a mask tensor with the semantics of PyTorch's `attn_mask`,
      shaped `Lq x Lk` or `B' x H' x Lq x Lk` (`B'` in {1, B}, `H'` in
      {1, Hq}, broadcast). Boolean (`i1`): `true` lets the query see the
      key. Float (the op's element type, softmax and pointwise only):
      added to the scores after the scale and the bias; `-inf` entries
      remove the key, so an additive mask of 0 and -inf is the boolean
      mask. The keys a query sees are those the pattern and the mask both
      allow; a query that sees none gives zeros (PyTorch gives NaN). Not
      with varlen operands nor a `layout`. `attn-infer-mask` turns a
      constant mask into a pattern; the CPU kernels classify the blocks of
      a run-time mask at run time (docs/Semantics.md, "Mask tensors").

    Score and mask regions (FlexAttention's `score_mod` and `mask_mod`,
    written as IR): variants the attributes do not name.
    - `mask_mod`: a region with arguments `(%b, %h, %q, %k : index, then
      one per capture)` yielding an `i1`: may query `q` of head `h` of batch
      row `b` see key `k`? The keys a query sees are those the pattern, the
      mask tensor and the region all allow.
    - `score_mod`: arguments `(%s : f32, %b, %h, %q, %k : index, then one
      per capture)` yielding an `f32`: the score that replaces `s`. It is
      applied after the op's own modifiers (scale, bias, ALiBi, soft-cap)
      and before an additive mask tensor and the normalizer (softmax and
      pointwise only).
    - `captures(%t, ... : types)`: tensors the regions read (bias tables,
      document ids, lengths, slopes), ranked, any integer or float element
      type; each region receives them, in order, as its trailing arguments.
    Indices are positions in the current sequence, unaligned: `q` in
    `[0, Lq)` and `k` in `[0, Lk)` (FlexAttention's `q_idx`, `kv_idx`; a
    region spelling causal attention for a query chunk at the end of the
    keys adds `Lk - Lq` itself). A region is a pure function of its
    arguments: it holds only `arith` and `math` operations, `tensor.extract`
    and `tensor.dim` of a capture, and ends in `attn.yield`; it reads no
    value defined outside it (the op is isolated from above). A capture read
    at an index outside its shape reads the nearest element (indices are
    clamped into the shape). The mask region is classified at compile time
    by an interval analysis over each block of queries and keys (full,
    empty or partial, like a pattern; docs/FlexAttention.md); blocks whose
    class depends on captured data are classified at run time by the same
    analysis.

    ```mlir
    // Prefix-LM: the first 64 keys are visible to every query, the rest
    // causally; the score soft-capped through tanh.
    %o = attn.attention %q, %k, %v {normalizer = #attn.softmax}
        : tensor<1x8x512x64xf32>, tensor<1x8x512x64xf32>,
          tensor<1x8x512x64xf32> -> tensor<1x8x512x64xf32>
        mask_mod {
        ^bb0(%b: index, %h: index, %i: index, %j: index):
          %c64 = arith.constant 64 : index
          %prefix = arith.cmpi ult, %j, %c64 : index
          %causal = arith.cmpi ule, %j, %i : index
          %ok = arith.ori %prefix, %causal : i1
          attn.yield %ok : i1
        }
    ```

    Results: the attention `result`, and with a second result type `lse`
    (softmax only): `B x Hq x Lq` f32, the natural log of each query row's
    softmax denominator, `m_i + log(sum_j exp(S[i,j] - m_i))` (with sinks,
    their term included), `-inf` for a row with no allowed key (and no
    sink), as FlashAttention's `softmax_lse`: attention over key chunks
    combines through it.

    Attributes: `normalizer` (required), `pattern`, `scale` (f32),
    `qk_norm_eps` (f32 > 0): when present, each query and key vector is
    layer-normalized over D (`(x - mean) / sqrt(var + eps)`, no affine
    parameters) before the scores, `softcap` (f32 > 0, softmax and
    pointwise): the scores are soft-capped, `cap * tanh(s / cap)`
    (Gemma 2), and `layout`. A score is built in this order (the order of
    docs/design's contract): scale, bias, ALiBi, soft-cap, additive mask.

    `layout` (`#attn.block_layout`, softmax and pointwise normalizers only)
    is the compile-time block layout of the mask, as attn-block-sparse
    computes it: which key blocks of each query block are full (computed
    without evaluating the mask), partial (masked per element) or empty
    (never visited). It does not change the semantics: the verifier checks
    that it is the layout the pattern gives (no pattern: every block full),
    so a hand-written layout cannot change the results. The fused kernels
    (attn-flash, attn-lower-pointwise) take their tiles from it. Segment
    masks are runtime data: their blocks are partial in the layout, and the
    kernels refine them from the segment ids.

    Element types: query, key, value, bias, gate and result share one of
    f32, f16, bf16; arithmetic accumulates in f32.

    FLOP count: `2 * N * (D + Dv)` per batch and query head, `N` the number
    of allowed (query, key) pairs (segment masks count as allowing all), for
    softmax and pointwise normalizers. Kernel attention with no pattern, a
    causal pattern or segments counts its linear form, `2 * (Lq + Lk) * F *
    Dv` (F features), plus `2 * (Lq + Lk) * F * D` for the FAVOR+
    projection; with other patterns `2 * N * (F + Dv)`.

    ```mlir
    %o = attn.attention %q, %k, %v {normalizer = #attn.softmax,
        pattern = #attn.union<[#attn.window<before = 128, after = 128>,
                               #attn.global<[0, 1]>]>}
        : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>,
          tensor<1x8x4096x64xf32> -> tensor<1x8x4096x64xf32>

    %d = attn.attention %q, %k, %v alibi_slopes(%s : tensor<32xf32>)
        sinks(%t : tensor<32xf32>)
        {normalizer = #attn.softmax, pattern = #attn.causal,
         softcap = 50.0 : f32}
        : tensor<4x32x1x128xf32>, tensor<4x8x8192x128xf32>,
          tensor<4x8x8192x128xf32> -> tensor<4x32x1x128xf32>

    %r = attn.attention %q, %k, %v gate(%g : tensor<2x8x128x64xbf16>)
        {normalizer = #attn.pointwise<relu>, qk_norm_eps = 1.0e-05 : f32}
        : tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>,
          tensor<2x2x128x64xbf16> -> tensor<2x8x128x64xbf16>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query,
                       Attn_FloatTensor:$key,
                       Attn_FloatTensor:$value,
                       Optional<Attn_FloatTensor>:$bias,
                       Optional<Attn_FloatTensor>:$gate,
                       Optional<Attn_IdTensor>:$query_segments,
                       Optional<Attn_IdTensor>:$key_segments,
                       Optional<Attn_FloatTensor>:$projection,
                       Optional<Attn_LengthTensor>:$query_lengths,
                       Optional<Attn_LengthTensor>:$key_lengths,
                       Optional<Attn_LengthTensor>:$query_offsets,
                       Optional<Attn_LengthTensor>:$key_offsets,
                       Optional<Attn_MaskTensor>:$mask,
                       Optional<Attn_HeadVector>:$alibi_slopes,
                       Optional<Attn_HeadVector>:$sinks,
                       Optional<Attn_PageTable>:$page_table,
                       Variadic<AnyRankedTensor>:$captures,
                       Attn_NormalizerAttrInterface:$normalizer,
                       OptionalAttr<Attn_MaskPatternAttrInterface>:$pattern,
                       OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<F32Attr>:$qk_norm_eps,
                       OptionalAttr<F32Attr>:$softcap,
                       OptionalAttr<Attn_BlockLayoutAttr>:$layout);
  let results = (outs Attn_FloatTensor:$result,
                      Optional<Attn_LseTensor>:$lse);
  let regions = (region MaxSizedRegion<1>:$mask_mod,
                        MaxSizedRegion<1>:$score_mod);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`gate` `(` $gate^ `:` type($gate) `)`)?
    (`segments` `(` $query_segments^ `:` type($query_segments) `)`)?
    (`key_segments` `(` $key_segments^ `:` type($key_segments) `)`)?
    (`projection` `(` $projection^ `:` type($projection) `)`)?
    (`query_lengths` `(` $query_lengths^ `:` type($query_lengths) `)`)?
    (`key_lengths` `(` $key_lengths^ `:` type($key_lengths) `)`)?
    (`query_offsets` `(` $query_offsets^ `:` type($query_offsets) `)`)?
    (`key_offsets` `(` $key_offsets^ `:` type($key_offsets) `)`)?
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    (`alibi_slopes` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
    (`page_table` `(` $page_table^ `:` type($page_table) `)`)?
    (`captures` `(` $captures^ `:` type($captures) `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `->`
    type($result) (`,` type($lse)^)?
    (`mask_mod` $mask_mod^)? (`score_mod` $score_mod^)?
  }];
  let hasRegionVerifier = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$query, "::mlir::Value":$key,
                   "::mlir::Value":$value,
                   "::mlir::attn::NormalizerAttrInterface":$normalizer,
                   CArg<"::mlir::attn::MaskPatternAttrInterface", "{}">:$pattern)>,
    /// Every operand, attribute and result type from a problem
    /// (AttentionProblem.h); `explicitScale` decides whether `scale` is set.
    OpBuilder<(ins "const ::mlir::attn::AttentionProblem &":$problem)>
  ];
  let extraClassDeclaration = [{
    /// The description of this attention (AttentionProblem.h): every fact
    /// of its operands and attributes, grouped. Needs verified shapes.
    ::mlir::attn::AttentionProblem getProblem();
    /// The features this attention uses (AttentionFeatures.h), what
    /// generators of code check against their capabilities.
    ::mlir::attn::FeatureSet getFeatures() {
      return ::mlir::attn::getFeatures(getProblem());
    }
    /// The same over dimensions `dims` (the verifier's, checked before).
    ::mlir::attn::AttentionProblem
    getProblem(const ::mlir::attn::AttentionDims &dims);
    /// The floating-point captured tensors (their positions among the
    /// captures, in order): those attn.attention_grad's grad_captures
    /// differentiate.
    ::llvm::SmallVector<unsigned> getFloatCaptures();
    /// The segment ids of the keys (`key_segments`, else `segments`).
    ::mlir::Value getEffectiveKeySegments() {
      return getKeySegments() ? getKeySegments() : getQuerySegments();
    }
    /// The shape the pattern is checked against and evaluated over.
    ::mlir::attn::PatternShape getPatternShape();
    /// The mask of this op, built by the mask library (over dynamic
    /// lengths when the op's are dynamic): the pattern, intersected with
    /// the mask region's predicate when there is one.
    ::mlir::attn::mask::Mask getPatternMask();
    /// The mask region compiled for the interval analysis (ModRegion.h);
    /// the op must have one.
    ::mlir::attn::ModProgram getMaskProgram();
    /// The FLOP count (FlopCountOpInterface) for concrete dimensions: the
    /// interface method counts the op's own static shapes (0 when dynamic);
    /// runners pass the run-time sizes.
    double getFlopCount(const ::mlir::attn::AttentionDims &dims);
    /// The block layout of the mask in blocks of `blockQ x blockK`: the
    /// `layout` attribute's when its blocks are those, else computed.
    ::mlir::attn::BlockLayout getBlockLayout(int64_t blockQ, int64_t blockK);
    /// True if the mask operand is boolean (else additive, or absent).
    bool hasBoolMask() {
      return getMask() && cast<::mlir::RankedTensorType>(getMask().getType())
                              .getElementType().isInteger(1);
    }
    /// True if the scores have a modifier of serving models (soft-capping,
    /// ALiBi or attention sinks) or a score or mask region: transforms that
    /// rewrite the scores leave such ops whole.
    bool hasScoreModifiers() {
      return getSoftcap() || getAlibiSlopes() || getSinks() ||
             !getScoreMod().empty() || !getMaskMod().empty();
    }
    /// The result type (the attention's, not the log-sum-exp's).
    ::mlir::RankedTensorType getType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getResult().getType());
    }
    /// True if a varlen operand (lengths or offsets) is present.
    bool isVarlen() {
      return getQueryLengths() || getKeyLengths() || getQueryOffsets();
    }
    /// True if key and value are pages of a paged KV cache.
    bool isPaged() { return static_cast<bool>(getPageTable()); }
    /// The page size of a paged KV cache.
    int64_t getPageSize() {
      return ::llvm::cast<::mlir::RankedTensorType>(getKey().getType())
          .getDimSize(2);
    }
    /// True for a packed varlen batch (offsets).
    bool isPacked() { return static_cast<bool>(getQueryOffsets()); }
    /// The sizes that must agree at run time but are not both static, as
    /// (operand, dim) pairs in operand order (RuntimeErrors.h); each is
    /// checked by the generated code.
    SmallVector<std::pair<std::pair<int64_t, int64_t>,
                          std::pair<int64_t, int64_t>>> getRuntimeSizeChecks();
    /// True if only keys of the query's segment are allowed (see
    /// MaskPatternAttrInterface::isSegmentBound).
    bool isSegmentBound() {
      return getPatternAttr() && getPatternAttr().isSegmentBound();
    }
    /// The restriction kernelized attention keeps in its linear form (none
    /// without a pattern), or std::nullopt if the pattern has none.
    std::optional<::mlir::attn::LinearMaskForm> getLinearForm() {
      // (A mask region restricts keys the linear form cannot see.)
      if (!getMaskMod().empty())
        return std::nullopt;
      if (!getPatternAttr())
        return ::mlir::attn::LinearMaskForm{};
      return getPatternAttr().getLinearForm();
    }
  }];
}

//===----------------------------------------------------------------------===//
// YieldOp
//===----------------------------------------------------------------------===//

def Attn_YieldOp : Attn_Op<"yield",
    [Pure, Terminator, HasParent<"AttentionOp">]> {
  let summary = "yields the value of a score or mask region";
  let description = [{
    Ends a `mask_mod` region (an `i1`: is the key allowed) or a `score_mod`
    region (an `f32`: the modified score) of `attn.attention`.

    ```mlir
    attn.yield %allowed : i1
    ```
  }];
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

def Attn_AttentionGradOp : Attn_Op<"attention_grad",
    [Pure, AttrSizedOperandSegments, AttrSizedResultSegments,
     DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
                               ["reifyResultShapes"]>]> {
  let summary = "gradients of an attn.attention (its vector-Jacobian product)";
  let description = [{
    The backward pass of the `attn.attention` whose output is `forward`:
    given the cotangent `grad_output` (`dO`, the output's shape) and, when
    the forward op has a log-sum-exp result, optionally `grad_lse`
    (`dLSE`), the gradients of the loss with respect to the forward op's
    query, key and value and, when requested by a result, its bias, gate
    and sinks operands.

    The forward op is the description of the attention: every operand and
    attribute (normalizer, scale, pattern, mask tensor, varlen operands,
    segments, score modifiers, layout) is read from it, so the backward
    pass of any attention is the same op and a new forward operand needs no
    new backward description. The forward op is not computed for this op
    when its output and log-sum-exp are given as `saved_output` /
    `saved_lse` (what a training framework saved from the forward call);
    otherwise its results are used. A forward op used only as a
    description is dead once the gradient is lowered.

    The saved statistics define the softmax weights of the gradient:
    `P = exp(S - saved_lse)` and `D = rowsum(dO * saved_output)` (without a
    gate). For the forward's own results that is the gradient of the op;
    for the output and log-sum-exp of a larger attention whose keys the
    forward op holds a block of, it is that block's share of the larger
    attention's gradient (the `dQ` term to add, the block's `dK` and `dV`):
    attn-partition-sequence's backward ring computes the gradient of a
    sharded sequence so.

    ```mlir
    %o, %lse = attn.attention %q, %k, %v {normalizer = #attn.softmax,
        pattern = #attn.causal}
        : tensor<1x8x256x64xf32>, tensor<1x2x256x64xf32>,
          tensor<1x2x256x64xf32> -> tensor<1x8x256x64xf32>,
          tensor<1x8x256xf32>
    %dq, %dk, %dv = attn.attention_grad %o, %do
        : tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32>
        -> tensor<1x8x256x64xf32>, tensor<1x2x256x64xf32>,
           tensor<1x2x256x64xf32>
    ```

    The gradients (docs/Semantics.md, "Gradients", has the formulas), per
    batch and query head with `S` the modified scores and `P` the weights:

    - softmax: `D_i = rowsum(dO_i * O_i)` (before the gate),
      `dP = dO V^T`, `dS = P * (dP - D) + dLSE_i P`; sinks:
      `dsink_h = -sum_i exp(sink_h - LSE_i) (D_i - dLSE_i)`;
    - pointwise `P = Lk^-alpha h(S)`: `dS = Lk^-alpha h'(S) * dP` on the
      allowed scores;
    - then through the score modifiers (soft-capping:
      `dS * (1 - tanh^2(s / cap))`; the bias gets that gradient, summed over
      its broadcast dimensions), the scale, and `dQ = dS K`, `dK = dS^T Q`
      (summed over the query heads of a key/value head), `dV = P^T dO`;
      qk-layernorm through the normalization's Jacobian;
    - the gate: `dgate = dO * O_ungated`, and `dO * gate` flows on.

    Masked scores have zero gradient; a query row with no allowed key gives
    zero gradients (never NaN). The gradient of an additive mask is not
    computed. A paged KV cache is for inference: its forward op has no
    gradient.

    Learned modifier parameters:
    - ALiBi slopes: `dslope_h = -sum_{b,i,j} dS_bhij |i + Lk - Lq - j|`
      (per sequence for varlen batches), `dS` the gradient of the score
      after ALiBi;
    - captured tensors of the `score_mod` region (a learned relative-bias
      table as T5 trains it, slopes read from a tensor): every element the
      region reads at `(b, h, i, j)` takes `dS'_bhij * df/dx`, `dS'` the
      gradient of the region's result and `df/dx` the region's partial
      derivative with respect to that read (forward mode, the same rules
      as the score's), summed over every score that reads it. Reads that
      only decide (comparisons, integer conversions) and every read of the
      `mask_mod` region contribute nothing. The region must have a
      derivative rule for every operation a read value reaches;
    - a FAVOR+ projection `W` (`m x D`, `phi_r(x) = exp(<w_r, x'> -
      |x'|^2 / 2) / sqrt(m)`, `x'` the scaled row): `dW = sum over the
      query and key rows of (dphi * phi) x'^T`.

    ```mlir
    %dq, %dk, %dv, %dtable = attn.attention_grad %o, %do
        : tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32>
        -> tensor<1x8x256x64xf32>, tensor<1x8x256x64xf32>,
           tensor<1x8x256x64xf32> captures(tensor<8x32xf32>)
    ```

    Kernelized attention over a part of a longer sequence
    (attn-partition-sequence's backward: the keys and queries of the other
    ranks), with `y_j = [v_j, 1]`, `du_i = [dO_i, -dO_i . o_i] / (den_i +
    eps)` (the cotangent of the numerator and denominator row `u_i`):
    - `key_state` (`B x Hkv x F x (Dv + 1)`, f32): `S = sum phi(k)^T y`
      over keys outside the op's that every query sees; each row's
      numerator and denominator gain `phi(q_i) S` (the output then
      matches the whole sequence's) and `dphi(q_i)` gains `S du_i`;
    - `query_state` (`B x Hq x F x (Dv + 1)`, f32): `G = sum phi(q)^T du`
      over queries outside the op's that see every key; `dphi(k_j)` gains
      `sum over the group's heads of G y_j` and `dv_j` that of
      `phi(k_j) G[:, :Dv]`.
    Both need the linear-time gradient (no pattern or `#attn.causal`, no
    gate; with `#attn.causal`, Lq = Lk).

    Results: `grad_query`, `grad_key`, `grad_value` with the types of
    query, key and value; `grad_bias`, `grad_gate`, `grad_sinks`,
    `grad_alibi_slopes`, `grad_projection` (each optional, allowed only
    when the forward op has that operand) with its type; `grad_captures`: none, or one per
    floating-point captured tensor of the forward op, in order, each of
    its type. Element type: the gradients are computed in f32 and rounded
    to the operands' element type.
  }];
  let arguments = (ins Attn_FloatTensor:$forward,
                       Attn_FloatTensor:$grad_output,
                       Optional<Attn_LseTensor>:$grad_lse,
                       Optional<Attn_FloatTensor>:$saved_output,
                       Optional<Attn_LseTensor>:$saved_lse,
                       Optional<Attn_FloatTensor>:$key_state,
                       Optional<Attn_FloatTensor>:$query_state);
  let results = (outs Attn_FloatTensor:$grad_query,
                      Attn_FloatTensor:$grad_key,
                      Attn_FloatTensor:$grad_value,
                      Optional<Attn_FloatTensor>:$grad_bias,
                      Optional<Attn_FloatTensor>:$grad_gate,
                      Optional<Attn_HeadVector>:$grad_sinks,
                      Optional<Attn_HeadVector>:$grad_alibi_slopes,
                      Optional<Attn_FloatTensor>:$grad_projection,
                      Variadic<AnyRankedTensor>:$grad_captures);
  let assemblyFormat = [{
    $forward `,` $grad_output
    (`grad_lse` `(` $grad_lse^ `:` type($grad_lse) `)`)?
    (`saved_output` `(` $saved_output^ `:` type($saved_output) `)`)?
    (`saved_lse` `(` $saved_lse^ `:` type($saved_lse) `)`)?
    (`key_state` `(` $key_state^ `:` type($key_state) `)`)?
    (`query_state` `(` $query_state^ `:` type($query_state) `)`)?
    attr-dict `:` type($forward) `,` type($grad_output) `->`
    type($grad_query) `,` type($grad_key) `,` type($grad_value)
    (`bias` `(` type($grad_bias)^ `)`)?
    (`gate` `(` type($grad_gate)^ `)`)?
    (`sinks` `(` type($grad_sinks)^ `)`)?
    (`alibi_slopes` `(` type($grad_alibi_slopes)^ `)`)?
    (`projection` `(` type($grad_projection)^ `)`)?
    (`captures` `(` type($grad_captures)^ `)`)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The attn.attention this op differentiates (verified to exist).
    ::mlir::attn::AttentionOp getForwardOp();
    /// The forward op's operand each result is the gradient of, in the
    /// results' order (query, key, value, then those of the optional
    /// results present, then the floating-point captures).
    ::llvm::SmallVector<::mlir::Value> getDifferentiatedOperands();
    /// The features of the forward op's attention, with `lse` for a
    /// log-sum-exp cotangent (grad_lse) rather than for the forward's
    /// result: what gradient generators check against their capabilities.
    ::mlir::attn::FeatureSet getFeatures();
  }];
}

//===----------------------------------------------------------------------===//
// LowRankAttentionOp
//===----------------------------------------------------------------------===//

def Attn_LowRankAttentionOp : Attn_AttentionLikeOp<"lowrank_attention"> {
  let summary = "Linformer low-rank attention";
  let description = [{
    Linformer (Wang et al. 2020): keys and values are projected along the
    sequence by `key_proj` (`E`, `P x Lk`) and `value_proj` (`F`, `P x Lk`)
    before softmax attention, making the cost linear in `Lk`:

    `K' = E K`, `V' = F V` (per batch and key/value head), then
    `O = softmax(scale * Q K'^T) V'` with `scale` defaulting to `1/sqrt(D)`.

    Shapes as for `attn.attention` (grouped-query heads allowed); the
    projections are shared by all heads. No mask pattern applies.

    FLOP count: `2 * P * Lk * (D + Dv)` per batch and key/value head for the
    projections plus `2 * Lq * P * (D + Dv)` per batch and query head.

    attn-project-lowrank rewrites it into the two projections and
    `attn.attention` over the `P` projected rows (the pipelines run it).

    ```mlir
    %o = attn.lowrank_attention %q, %k, %v, %e, %f
        : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>,
          tensor<1x8x4096x64xf32>, tensor<256x4096xf32>, tensor<256x4096xf32>
          -> tensor<1x8x4096x64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
                       Attn_FloatTensor:$value, Attn_FloatTensor:$key_proj,
                       Attn_FloatTensor:$value_proj,
                       OptionalAttr<F32Attr>:$scale);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $key_proj `,` $value_proj attr-dict `:`
    type($query) `,` type($key) `,` type($value) `,` type($key_proj) `,`
    type($value_proj) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// LshAttentionOp
//===----------------------------------------------------------------------===//

def Attn_LshAttentionOp : Attn_AttentionLikeOp<"lsh_attention"> {
  let summary = "Reformer locality-sensitive-hashing attention";
  let description = [{
    Reformer (Kitaev et al. 2020) attention over a shared query/key tensor
    `qk` (`B x H x L x D`) and values (`B x H x L x Dv`). For each of
    `num_hashes` rounds `r`:

    1. hash: `bucket(x) = argmax([x R_r, -x R_r])` with the random rotation
       `R_r` (`D x num_buckets/2`, docs/Semantics.md "Random numbers",
       generated from `seed`); ties go to the lowest index;
    2. sort the positions by bucket, stably (equal buckets keep position
       order);
    3. split the sorted order into chunks of `chunk_size`; each query
       attends to the keys of its own chunk and of the previous chunk (chunk
       0's previous chunk is the last one; with a single chunk, only itself),
       with keys normalized to unit length, `k_j = qk_j / sqrt(|qk_j|^2 +
       1e-6)`, scores `scale * <qk_i, k_j>`
       (`scale` defaults to `1/sqrt(D)`), and, when `causal` is set, only
       keys at positions `j <= i`;
    4. a query never attends to its own position unless no other key is
       allowed, in which case it attends only to itself.

    Each round gives an output `o_r(i)` and the log-sum-exp `lse_r(i)` of its
    scores; the result is `sum_r w_r(i) o_r(i)` with
    `w_r = softmax_r(lse_r(i))`.

    `num_hashes >= 1`, `num_buckets` even and at least 2, `chunk_size` at
    least 1 and dividing L. The rotations of all rounds are one compile-time
    constant, so `num_hashes x D x num_buckets / 2 <= 2^24`; the lowerings
    loop over the rounds at run time (compile time and code size do not
    grow with `num_hashes`).

    FLOP count per batch, head and round: `2 * L * D * num_buckets / 2` for
    hashing plus `2 * L * W * (D + Dv)`, W the keys per query (`2 *
    chunk_size`, or `chunk_size` with a single chunk).

    ```mlir
    %o = attn.lsh_attention %qk, %v {num_hashes = 2 : i64, num_buckets = 64 : i64,
                                     chunk_size = 64 : i64, seed = 1 : i64}
        : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>
          -> tensor<1x8x4096x64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$qk, Attn_FloatTensor:$value,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$num_hashes,
                       ConfinedAttr<I64Attr, [IntMinValue<2>]>:$num_buckets,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$chunk_size,
                       DefaultValuedAttr<I64Attr, "0">:$seed,
                       UnitAttr:$causal,
                       OptionalAttr<F32Attr>:$scale);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $qk `,` $value attr-dict `:` type($qk) `,` type($value) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// RelativeAttentionOp
//===----------------------------------------------------------------------===//

def Attn_RelativeAttentionOp : Attn_AttentionLikeOp<"relative_attention",
                                                    [AttrSizedOperandSegments]> {
  let summary = "Transformer-XL attention with memory and relative positions";
  let description = [{
    Transformer-XL (Dai et al. 2019). The memory (`memory(%mk, %mv)`,
    `B x H x M x D` and `B x H x M x Dv`, cached from the previous segment)
    is prepended to the keys and values, giving `Lk = M + L` keys; query `i`
    sits at key position `M + i` and sees keys `j <= M + i` (causal). Scores:

    `S[i,j] = scale * ((q_i + u) . k_j + (q_i + v) . r_{M+i-j})`

    with `u = content_bias` (`H x D`), `v = position_bias` (`H x D`) and
    `r = pos_emb` (`H x Lk x D`, row `d` the embedding of distance `d`).
    Then softmax over the allowed keys and `O = P V`. `scale` defaults to
    `1/sqrt(D)`. Without memory, M = 0.

    FLOP count: `2 * N * (2 D + Dv)` per batch and head, N the allowed pairs.

    attn-flash makes it one fused CPU kernel (the flash frame: causal
    blocks skipped, the position term computed per tile next to the content
    term, with no `L x (M + L)` tensor); the GPU pipeline and the reference
    lowering materialize the position scores.

    ```mlir
    %o = attn.relative_attention %q, %k, %v, %r, %u, %vb
        memory(%mk, %mv : tensor<1x8x512x64xf32>, tensor<1x8x512x64xf32>)
        : tensor<1x8x512x64xf32>, tensor<1x8x512x64xf32>,
          tensor<1x8x512x64xf32>, tensor<8x1024x64xf32>, tensor<8x64xf32>,
          tensor<8x64xf32> -> tensor<1x8x512x64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
                       Attn_FloatTensor:$value, Attn_FloatTensor:$pos_emb,
                       Attn_FloatTensor:$content_bias,
                       Attn_FloatTensor:$position_bias,
                       Optional<Attn_FloatTensor>:$memory_key,
                       Optional<Attn_FloatTensor>:$memory_value,
                       OptionalAttr<F32Attr>:$scale);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $pos_emb `,` $content_bias `,`
    $position_bias
    (`memory` `(` $memory_key^ `,` $memory_value `:` type($memory_key) `,`
      type($memory_value) `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value) `,`
    type($pos_emb) `,` type($content_bias) `,` type($position_bias) `->`
    type($result)
  }];
  let extraClassDeclaration = [{
    /// The memory length M (0 without memory).
    int64_t getMemoryLength();
  }];
}


//===----------------------------------------------------------------------===//
// Internal ops: the explicit steps of attention
//===----------------------------------------------------------------------===//
//
// Produced by attn-decompose and attn-reassociate, and valid input too. All
// of them compute in f32; tensors that are intermediate results (scores,
// weights, features, states) are f32. Batch and lengths may be dynamic (head
// counts and dims are static); the ops assume their dynamic sizes agree (the
// attn.attention they come from checked them at run time).

def Attn_F32Tensor : RankedTensorOf<[F32]>;

class Attn_InternalOp<string mnemonic, list<Trait> traits = []>
    : Attn_Op<mnemonic, !listconcat([Pure,
        DeclareOpInterfaceMethods<Attn_FlopCountOpInterface>], traits)> {
  let hasVerifier = 1;
}

def Attn_LayerNormOp : Attn_InternalOp<"layer_norm"> {
  let summary = "layer normalization of the last dimension (qk-layernorm)";
  let description = [{
    `y = (x - mean(x)) / sqrt(var(x) + epsilon)` over the last dimension of a
    `B x H x L x D` tensor (population variance, no affine parameters), in
    f32. The qk-layernorm step of `attn.attention` after attn-decompose.

    FLOP count: `5` per element.

    ```mlir
    %n = attn.layer_norm %q {epsilon = 1.0e-05 : f32}
        : tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, F32Attr:$epsilon);
  let results = (outs Attn_F32Tensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
}

def Attn_FeatureMapOp : Attn_InternalOp<"feature_map"> {
  let summary = "the feature map phi of kernelized attention";
  let description = [{
    Applies the feature map of `kernel` (an `#attn.kernel` attribute; its
    `eps` is ignored) to each row of a `B x H x L x D` tensor, after
    multiplying the rows by `input_scale` (default 1): `elu_plus_one` and
    `relu` elementwise (`F = D`), `favor` as
    `exp(W x - |x|^2/2) / sqrt(m)` with the seeded projection or the
    `projection` operand (`F = m`). Result `B x H x L x F`, f32.

    FLOP count: `D` per element for elementwise maps; `2 m D + m + 2 D` per
    row for FAVOR+.

    ```mlir
    %phi = attn.feature_map %q {kernel = #attn.kernel<favor, features = 256, seed = 1>,
                                input_scale = 0.35355339 : f32}
        : tensor<1x8x1024x64xf32> -> tensor<1x8x1024x256xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input,
                       Optional<Attn_FloatTensor>:$projection,
                       Attn_KernelAttr:$kernel,
                       OptionalAttr<F32Attr>:$input_scale);
  let results = (outs Attn_F32Tensor:$result);
  let assemblyFormat = [{
    $input (`projection` `(` $projection^ `:` type($projection) `)`)?
    attr-dict `:` type($input) `->` type($result)
  }];
}

def Attn_ScoresOp : Attn_InternalOp<"scores"> {
  let summary = "attention scores `scale * Q K^T (+ bias)`";
  let description = [{
    `S[b,h,i,j] = scale * <q[b,h,i], k[b,h/G,j]> (+ bias[b',h',i,j])` with
    query `B x Hq x Lq x D`, key `B x Hkv x Lk x D` (G = Hq / Hkv) and the
    optional bias broadcast as in `attn.attention`. `scale` defaults to 1.
    Result `B x Hq x Lq x Lk`, f32.

    FLOP count: `2 Lq Lk D` per batch and query head.

    ```mlir
    %s = attn.scores %q, %k {scale = 0.125 : f32}
        : tensor<1x8x512x64xf32>, tensor<1x2x512x64xf32> -> tensor<1x8x512x512xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
                       Optional<Attn_FloatTensor>:$bias,
                       OptionalAttr<F32Attr>:$scale);
  let results = (outs Attn_F32Tensor:$result);
  let assemblyFormat = [{
    $query `,` $key (`bias` `(` $bias^ `:` type($bias) `)`)? attr-dict `:`
    type($query) `,` type($key) `->` type($result)
  }];
}

def Attn_NormalizeOp : Attn_InternalOp<"normalize", [AttrSizedOperandSegments]> {
  let summary = "masked normalization of scores into weights";
  let description = [{
    Turns scores `B x Hq x Lq x Lk` into weights of the same shape under the
    `normalizer`, the optional `pattern` (and segment ids) and the optional
    mask tensor (boolean or additive, as `attn.attention`'s), exactly as
    `attn.attention` defines them: masked weights are 0, fully masked rows
    are 0; for `#attn.kernel` the scores are the feature products and are
    divided by their masked row sum plus eps.

    FLOP count: 5 per score for softmax, 3 for pointwise and kernel.

    ```mlir
    %p = attn.normalize %s {normalizer = #attn.softmax, pattern = #attn.causal}
        : tensor<1x8x512x512xf32> -> tensor<1x8x512x512xf32>
    ```
  }];
  let arguments = (ins Attn_F32Tensor:$scores,
                       Optional<Attn_IdTensor>:$query_segments,
                       Optional<Attn_IdTensor>:$key_segments,
                       Optional<Attn_MaskTensor>:$mask,
                       Attn_NormalizerAttrInterface:$normalizer,
                       OptionalAttr<Attn_MaskPatternAttrInterface>:$pattern);
  let results = (outs Attn_F32Tensor:$result);
  let assemblyFormat = [{
    $scores
    (`segments` `(` $query_segments^ `:` type($query_segments) `)`)?
    (`key_segments` `(` $key_segments^ `:` type($key_segments) `)`)?
    (`mask` `(` $mask^ `:` type($mask) `)`)?
    attr-dict `:` type($scores) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The mask of this op, built by the mask library.
    ::mlir::attn::mask::Mask getPatternMask();
  }];
}

def Attn_ApplyOp : Attn_InternalOp<"apply"> {
  let summary = "weighted sum of values `P V (* gate)`";
  let description = [{
    `O[b,h,i] = sum_j P[b,h,i,j] v[b,h/G,j]`, then multiplied elementwise by
    the optional gate, rounded to the result's element type. Weights
    `B x Hq x Lq x Lk` (f32), value `B x Hkv x Lk x Dv`, result
    `B x Hq x Lq x Dv`.

    FLOP count: `2 Lq Lk Dv` per batch and query head.

    ```mlir
    %o = attn.apply %p, %v
        : tensor<1x8x512x512xf32>, tensor<1x2x512x64xf32> -> tensor<1x8x512x64xf32>
    ```
  }];
  let arguments = (ins Attn_F32Tensor:$weights, Attn_FloatTensor:$value,
                       Optional<Attn_FloatTensor>:$gate);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $weights `,` $value (`gate` `(` $gate^ `:` type($gate) `)`)? attr-dict
    `:` type($weights) `,` type($value) `->` type($result)
  }];
}

def Attn_KVStateOp : Attn_InternalOp<"kv_state"> {
  let summary = "the key/value state `phi(K)^T V` and key sum of linear attention";
  let description = [{
    For each batch and key/value head: `state[f,e] = sum_j phik[j,f] v[j,e]`
    (`F x Dv`) and `key_sum[f] = sum_j phik[j,f]`, over key features
    `B x Hkv x Lk x F` and values `B x Hkv x Lk x Dv`. One state serves all
    the query heads of a grouped-query group. f32.

    FLOP count: `2 Lk F Dv + Lk F` per batch and key/value head.

    ```mlir
    %state, %ksum = attn.kv_state %phik, %v
        : tensor<1x2x4096x64xf32>, tensor<1x2x4096x64xf32>
        -> tensor<1x2x64x64xf32>, tensor<1x2x64xf32>
    ```
  }];
  let arguments = (ins Attn_F32Tensor:$key_features, Attn_FloatTensor:$value);
  let results = (outs Attn_F32Tensor:$state, Attn_F32Tensor:$key_sum);
  let assemblyFormat = [{
    $key_features `,` $value attr-dict `:` type($key_features) `,`
    type($value) `->` type($state) `,` type($key_sum)
  }];
}

def Attn_StateApplyOp : Attn_InternalOp<"state_apply"> {
  let summary = "the query side of linear attention `phi(Q) S / (phi(Q) z + eps)`";
  let description = [{
    `O[b,h,i,e] = (sum_f phiq[i,f] state[h/G,f,e]) /
    (sum_f phiq[i,f] key_sum[h/G,f] + eps)`, 0 where the denominator is 0,
    then multiplied by the optional gate. Query features
    `B x Hq x Lq x F`, state `B x Hkv x F x Dv`, key sum `B x Hkv x F`,
    result `B x Hq x Lq x Dv`.

    FLOP count: `2 Lq F (Dv + 1) + Lq Dv` per batch and query head.

    ```mlir
    %o = attn.state_apply %phiq, %state, %ksum {eps = 0.0 : f32}
        : tensor<1x8x4096x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64xf32>
        -> tensor<1x8x4096x64xf32>
    ```
  }];
  let arguments = (ins Attn_F32Tensor:$query_features, Attn_F32Tensor:$state,
                       Attn_F32Tensor:$key_sum, Optional<Attn_FloatTensor>:$gate,
                       DefaultValuedAttr<F32Attr, "0.0f">:$eps);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $query_features `,` $state `,` $key_sum
    (`gate` `(` $gate^ `:` type($gate) `)`)? attr-dict `:`
    type($query_features) `,` type($state) `,` type($key_sum) `->`
    type($result)
  }];
}

def Attn_ChunkedLinearOp : Attn_InternalOp<"chunked_linear",
                                           [AttrSizedOperandSegments]> {
  let summary = "linear attention in chunked prefix form (causal, segments)";
  let description = [{
    Kernelized attention over features `phiq` (`B x Hq x L x F`), `phik`
    (`B x Hkv x L x F`) and values (`B x Hkv x L x Dv`) with a causal and/or
    segment mask, computed chunk by chunk:

    - within a chunk of `chunk_size` positions, the small quadratic form
      `(phiq phik^T . mask) V` and its row sums;
    - across chunks, a running state `S = sum phik_j v_j^T` (`F x Dv`) and key
      sum `z` of the preceding keys, so the output is
      `(intra + phiq S) / (intra_sum + phiq z + eps)` (0 where that is 0).

    Without `causal`, a second sweep from the end adds the following chunks
    (used for segment masks). With segment ids, the running state restarts
    where the id changes; this is exact when the ids are non-decreasing
    along the sequence (packed documents), which the generated code checks
    at run time, falling back to the quadratic form otherwise. The last
    chunk may be shorter. The semantics are those of `attn.attention` with
    `#attn.kernel` and the pattern `#attn.causal` and/or `#attn.segments`.

    With `unnormalized` the output is the masked sum itself,
    `intra + phiq S` (no denominator, `eps` unused): the gradient of
    kernelized attention is four such sums (convert-attn-grad-to-linalg),
    whose "features" are cotangents and values rather than feature maps.

    With `reverse` (and `causal`) the sums run the other way, over the
    following positions: query i sees keys j >= i (of its segment), the
    op on the reversed sequences, reversed back. The gradient's suffix sums
    are such ops: attn-linear-kernels reads the rows from the end (no
    reversed copies); the other lowerings reverse the operands and the
    result.

    ```mlir
    // dV_j = sum_{i >= j} (phik_j . phiq_i) dN_i
    %dv = attn.chunked_linear %phik, %phiq, %dn
        {chunk_size = 64 : i64, causal, reverse, unnormalized}
        : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>,
          tensor<1x8x4096x64xf32> -> tensor<1x8x4096x64xf32>
    ```

    `B` and `L` may be dynamic (a length shorter than `chunk_size` is one
    ragged chunk); the queries' and keys' `L` must then be equal at run time,
    which attn-reassociate guarantees by choosing this form under
    `scf.if Lq == Lk` (like every internal op, it assumes its dynamic sizes
    agree: the `attn.attention` it came from checked them).

    FLOP count: `2 L (c (F + Dv) + 3 F Dv)` per batch and query head for
    chunk size c (doubled inter-chunk work without causal).

    ```mlir
    %o = attn.chunked_linear %phiq, %phik, %v {chunk_size = 64 : i64, causal}
        : tensor<1x8x4096x64xf32>, tensor<1x8x4096x64xf32>,
          tensor<1x8x4096x64xf32> -> tensor<1x8x4096x64xf32>
    ```
  }];
  let arguments = (ins Attn_F32Tensor:$query_features,
                       Attn_F32Tensor:$key_features,
                       Attn_FloatTensor:$value,
                       Optional<Attn_IdTensor>:$segments,
                       Optional<Attn_FloatTensor>:$gate,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$chunk_size,
                       UnitAttr:$causal,
                       DefaultValuedAttr<F32Attr, "0.0f">:$eps,
                       UnitAttr:$unnormalized,
                       UnitAttr:$reverse);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $query_features `,` $key_features `,` $value
    (`segments` `(` $segments^ `:` type($segments) `)`)?
    (`gate` `(` $gate^ `:` type($gate) `)`)? attr-dict `:`
    type($query_features) `,` type($key_features) `,` type($value) `->`
    type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Communication between the ranks of sequence-parallel attention
//===----------------------------------------------------------------------===//

/// The operations attn-partition-sequence builds its schedules from. Each
/// has a tensor form (before bufferization: results are tensors, written
/// into the `into` operand's buffer) and a buffer form (after: memref
/// operands, no tensor result); attn-lower-communication turns the buffer
/// form into the `mpi` dialect once deallocation has run (the `mpi` ops
/// declare no memory effects, which bufferization and deallocation need).
class Attn_CommOp<string mnemonic, list<Trait> traits = []>
    : Attn_Op<mnemonic, !listconcat([
        DeclareOpInterfaceMethods<MemoryEffectsOpInterface>], traits)> {
  let hasVerifier = 1;
}

def Attn_ExchangeOp : Attn_CommOp<"exchange"> {
  let summary = "start one step of a ring: send a block, receive another";
  let description = [{
    Starts sending `send` to rank `dest` and receiving a block of the shape
    of `into` from rank `source` over communicator `comm`, both with tag
    `tag`, without waiting (`MPI_Isend`, `MPI_Irecv`). A negative `dest` or
    `source` (`-1`) sends or receives nothing (`into` is then empty
    or left as it is). The received block is defined once
    `attn.exchange_wait` has waited on both requests; until then `send`
    must stay unchanged (the wait reads it) and `into` unread.

    Element types: f32, f64 and integers (what `mpi` maps to MPI types);
    `send` and `into` have one element type.

    ```mlir
    %in, %sr, %rr = attn.exchange %k into %buf to %next from %prev tag %t
        comm %c : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
    %k2 = attn.exchange_wait %in sent %k requests %sr, %rr
        : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
    ```
  }];
  let arguments = (ins AnyShaped:$send, AnyShaped:$into, I32:$dest,
                       I32:$source, I32:$tag, MPI_Comm:$comm);
  let results = (outs Optional<AnyRankedTensor>:$incoming,
                      MPI_Request:$send_request, MPI_Request:$recv_request);
  let assemblyFormat = [{
    $send `into` $into `to` $dest `from` $source `tag` $tag `comm` $comm
    attr-dict `:` type($send) `,` type($into) (`->` type($incoming)^)?
  }];
}

def Attn_ExchangeWaitOp : Attn_CommOp<"exchange_wait"> {
  let summary = "wait for both requests of an attn.exchange";
  let description = [{
    Waits until the block `incoming` (the `into` of an `attn.exchange`) has
    arrived and `sent` has left; returns the received block.
  }];
  let arguments = (ins AnyShaped:$incoming, AnyShaped:$sent,
                       MPI_Request:$send_request, MPI_Request:$recv_request);
  let results = (outs Optional<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    $incoming `sent` $sent `requests` $send_request `,` $recv_request
    attr-dict `:` type($incoming) `,` type($sent) (`->` type($result)^)?
  }];
}

def Attn_AllReduceOp : Attn_CommOp<"allreduce"> {
  let summary = "element-wise sum over every rank of a communicator";
  let description = [{
    Sums `input` over the ranks of `comm` (`MPI_Allreduce`, `MPI_SUM`) into
    `into` (same shape and element type); every rank gets the sum.

    ```mlir
    %sizes = attn.allreduce %mine into %buf comm %c
        : tensor<?xi64>, tensor<?xi64> -> tensor<?xi64>
    ```
  }];
  let arguments = (ins AnyShaped:$input, AnyShaped:$into, MPI_Comm:$comm);
  let results = (outs Optional<AnyRankedTensor>:$result);
  let assemblyFormat = [{
    $input `into` $into `comm` $comm attr-dict `:` type($input) `,`
    type($into) (`->` type($result)^)?
  }];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_TD
