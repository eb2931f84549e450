//===- AttnAttrs.td - attn dialect attributes --------------*- tablegen -*-===//
//
// Normalizer attributes (how scores become weights) and mask-pattern
// attributes (which scores exist).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
#define ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD

include "attn-opt/Dialect/Attn/IR/AttnBase.td"
include "attn-opt/Dialect/Attn/IR/AttnEnums.td"
include "attn-opt/Dialect/Attn/IR/AttnInterfaces.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

/// A double-precision float, printed in its shortest round-tripping form.
class Attn_F64Parameter<string value, string desc>
    : APFloatParameter<desc> {
  let defaultValue = "::llvm::APFloat(" # value # ")";
  let parser = [{ ::mlir::attn::parseF64Parameter($_parser) }];
  let printer = [{ ::mlir::attn::printF64Parameter($_printer, $_self) }];
}

/// A boolean spelled `true` or `false`.
class Attn_BoolParameter<string desc>
    : DefaultValuedParameter<"bool", "false", desc> {
  let parser = [{ ::mlir::attn::parseBoolParameter($_parser) }];
  let printer = [{ $_printer << ($_self ? "true" : "false") }];
}

/// A bracketed, possibly empty list of integers: `[0, 1]`.
class Attn_IntListParameter<string desc> : ArrayRefParameter<"int64_t", desc> {
  let parser = [{ ::mlir::attn::parseIntListParameter($_parser) }];
  let printer = [{ $_printer << '[' << $_self << ']' }];
}

/// A mask pattern; `overrides` lists the interface methods with a default
/// implementation that the pattern defines itself.
class Attn_MaskPattern<string name, string mnemonic,
                       list<string> overrides = []>
    : Attn_Attr<name, mnemonic, [DeclareAttrInterfaceMethods<
                                     Attn_MaskPatternAttrInterface, overrides>]>;

class Attn_Normalizer<string name, string mnemonic>
    : Attn_Attr<name, mnemonic, [DeclareAttrInterfaceMethods<
                                     Attn_NormalizerAttrInterface>]>;

//===----------------------------------------------------------------------===//
// Normalizers
//===----------------------------------------------------------------------===//

def Attn_SoftmaxAttr : Attn_Normalizer<"Softmax", "softmax"> {
  let summary = "softmax normalization over the allowed keys";
  let description = [{
    `P[i,j] = exp(S[i,j]) / sum_{j' in A(i)} exp(S[i,j'])` for `j` in
    `A(i)`, else 0. A row whose allowed set is empty gives zeros.

    ```mlir
    {normalizer = #attn.softmax}
    ```
  }];
}

def Attn_PointwiseAttr : Attn_Normalizer<"Pointwise", "pointwise"> {
  let summary = "pointwise (ReLU-family) attention `L^-alpha * h(s)`";
  let description = [{
    Each weight is a function of its own score (Wortsman et al. 2023, "Replacing
    softmax with ReLU in vision transformers"):
    `P[i,j] = Lk^-alpha * h(S[i,j])` for `j` in `A(i)`, else 0. No row
    reduction is needed, so every query is independent. `alpha` lies in
    [0, 1] and defaults to 1; `h` is one of `relu`, `relu2`, `gelu`,
    `softplus`, `identity`, `relu6`, `sigmoid`, `gelu_tanh`.

    ```mlir
    {normalizer = #attn.pointwise<relu>}
    {normalizer = #attn.pointwise<gelu, alpha = 0.5>}
    ```
  }];
  let parameters = (ins EnumParameter<Attn_PointwiseFn>:$fn,
                        Attn_F64Parameter<"1.0", "length exponent">:$alpha);
  let assemblyFormat = "`<` $fn (`,` `alpha` `=` $alpha^)? `>`";
  let genVerifyDecl = 1;
}

def Attn_KernelAttr : Attn_Normalizer<"Kernel", "kernel"> {
  let summary = "kernelized (linear) attention with a feature map";
  let description = [{
    `P[i,j] = phi(q_i).phi(k_j) / (sum_{j' in A(i)} phi(q_i).phi(k_j') + eps)`
    for `j` in `A(i)`, else 0; a row whose denominator is 0 gives zeros.

    Feature maps: `elu_plus_one` and `relu` act elementwise; `favor` is
    Performer FAVOR+ with `features` positive random features
    `exp(w_r . x - |x|^2/2) / sqrt(features)`. The projection `W`
    (`features x D`) is generated from `seed` (orthogonal rows when
    `orthogonal` is true) as specified in docs/Semantics.md, or comes from the
    op's `projection` operand. `features` must be positive for `favor` and 0
    (omitted) otherwise.

    When the op has a `scale` attribute `s`, queries and keys are multiplied
    by `sqrt(s)` before the feature map (so FAVOR+ estimates `exp(s q.k)`);
    without it they are used as they are.

    ```mlir
    {normalizer = #attn.kernel<elu_plus_one>}
    {normalizer = #attn.kernel<relu, eps = 1.0e-06>}
    {normalizer = #attn.kernel<favor, features = 256, orthogonal = true, seed = 7>}
    ```
  }];
  let parameters = (ins
      EnumParameter<Attn_FeatureMap>:$feature_map,
      DefaultValuedParameter<"int64_t", "0", "number of random features">:$features,
      Attn_BoolParameter<"orthogonal random features">:$orthogonal,
      DefaultValuedParameter<"uint64_t", "0", "seed of the projection">:$seed,
      Attn_F64Parameter<"0.0", "added to the denominator">:$eps);
  let assemblyFormat = [{
    `<` $feature_map (`,` struct($features, $orthogonal, $seed, $eps)^)? `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The number of features phi produces for head dimension `headDim`.
    int64_t getNumFeatures(int64_t headDim) const {
      return getFeatureMap() == FeatureMap::favor ? getFeatures() : headDim;
    }
  }];
}

//===----------------------------------------------------------------------===//
// Mask patterns
//===----------------------------------------------------------------------===//

def Attn_CausalAttr : Attn_MaskPattern<"Causal", "causal", ["getLinearForm"]> {
  let summary = "causal mask: `j <= i`";
  let description = [{
    Query position `i` sees keys `j <= i`. With `Lq != Lk` the queries are
    the last `Lq` positions (`i = i_query + Lk - Lq`).

    ```mlir
    {pattern = #attn.causal}
    ```
  }];
}

def Attn_WindowAttr : Attn_MaskPattern<"Window", "window"> {
  let summary = "sliding window: `i - before <= j <= i + after`";
  let description = [{
    Longformer's local attention. `before` and `after` are non-negative.
    `#attn.window<before = 128, after = 0>` is a causal window.

    ```mlir
    {pattern = #attn.window<before = 128, after = 128>}
    ```
  }];
  let parameters = (ins "int64_t":$before, "int64_t":$after);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Attn_DilatedAttr : Attn_MaskPattern<"Dilated", "dilated"> {
  let summary = "dilated window: `j = i + t*dilation`, `-before <= j-i <= after`";
  let description = [{
    Longformer's dilated sliding window: every `dilation`-th key inside the
    window. `before`, `after` are non-negative, `dilation` at least 1
    (`dilation = 1` is `#attn.window`).

    ```mlir
    {pattern = #attn.dilated<before = 256, after = 256, dilation = 2>}
    ```
  }];
  let parameters = (ins "int64_t":$before, "int64_t":$after,
                        "int64_t":$dilation);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Attn_GlobalAttr : Attn_MaskPattern<"Global", "global", ["verifyPattern"]> {
  let summary = "global tokens: `i in G` or `j in G`";
  let description = [{
    Longformer / BigBird-ITC global attention. The query at a global position
    sees every key, and every query sees the keys at global positions.
    Positions are key positions in `[0, Lk)`; the list is non-empty and has
    no duplicates.

    ```mlir
    {pattern = #attn.global<[0, 1]>}
    ```
  }];
  let parameters = (ins Attn_IntListParameter<"global positions">:$tokens);
  let assemblyFormat = "`<` $tokens `>`";
  let genVerifyDecl = 1;
}

def Attn_StridedAttr : Attn_MaskPattern<"Strided", "strided"> {
  let summary = "strided: `(i - j) mod stride == 0`";
  let description = [{
    The strided head of the Sparse Transformer (Child et al. 2019). Intersect
    with `#attn.causal` for the autoregressive form. `stride` is at least 1.

    ```mlir
    {pattern = #attn.intersect<[#attn.causal, #attn.strided<stride = 64>]>}
    ```
  }];
  let parameters = (ins "int64_t":$stride);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Attn_FixedAttr : Attn_MaskPattern<"Fixed", "fixed"> {
  let summary = "fixed: `floor(j/stride) == floor(i/stride)` or `j mod stride >= stride - c`";
  let description = [{
    The fixed pattern of the Sparse Transformer: each query sees its own block
    of `stride` positions and the last `c` positions of every block (the
    "summary" cells). `1 <= c <= stride`.

    ```mlir
    {pattern = #attn.fixed<stride = 128, c = 16>}
    ```
  }];
  let parameters = (ins "int64_t":$stride, "int64_t":$c);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Attn_RandomAttr : Attn_MaskPattern<"Random", "random",
    ["verifyPattern", "requiresStaticLengths"]> {
  let summary = "BigBird random blocks";
  let description = [{
    Query block `r` (queries `[r*block_size, (r+1)*block_size)`) sees
    `blocks` key blocks chosen by the documented generator (docs/Semantics.md,
    "Random numbers"): a partial Fisher-Yates shuffle of the key blocks
    driven by SplitMix64 seeded from `seed` and `r`. The choice depends only
    on `seed`, `r` and the number of key blocks, never on the platform.
    `blocks` is at least 1 and at most the number of key blocks; `seed`
    defaults to 0.

    ```mlir
    {pattern = #attn.random<blocks = 3, block_size = 64, seed = 42>}
    ```
  }];
  let parameters = (ins "int64_t":$blocks, "int64_t":$block_size,
                        DefaultValuedParameter<"uint64_t", "0">:$seed);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Attn_BlockAttr : Attn_MaskPattern<"Block", "block",
    ["verifyPattern", "requiresStaticLengths"]> {
  let summary = "explicit block-sparse layout";
  let description = [{
    A 0/1 matrix of blocks of `size x size` scores, one string per query
    block: query `q` sees key `k` when character `k / size` of row `q / size`
    is `1`. The layout has `ceil(Lq / size)` rows of `ceil(Lk / size)`
    characters; the last block row and column may be ragged.

    ```mlir
    {pattern = #attn.block<size = 64, layout = ["110", "011", "001"]>}
    ```
  }];
  let parameters = (ins "int64_t":$size,
                        ArrayRefParameter<"::mlir::StringAttr", "rows">:$layout);
  let assemblyFormat = "`<` `size` `=` $size `,` `layout` `=` `[` $layout `]` `>`";
  let genVerifyDecl = 1;
}

def Attn_SegmentsAttr : Attn_MaskPattern<"Segments", "segments",
    ["verifyPattern", "usesSegments", "isSegmentBound", "getLinearForm"]> {
  let summary = "document mask from runtime segment ids";
  let description = [{
    Query `q` sees key `k` only when `query_segments[b, q] ==
    key_segments[b, k]` (packed sequences of several documents). The ids are
    operands of the op (`segments(...)`, and `key_segments(...)` when
    `Lq != Lk`). Usually intersected with another pattern.

    ```mlir
    {pattern = #attn.intersect<[#attn.causal, #attn.segments]>}
    ```
  }];
}

def Attn_UnionAttr : Attn_MaskPattern<"Union", "union", ["getSubPatterns"]> {
  let summary = "union of patterns";
  let description = [{
    A key is allowed if any of the (at least two) patterns allows it.

    ```mlir
    {pattern = #attn.union<[#attn.window<before = 128, after = 128>,
                            #attn.global<[0, 1]>]>}
    ```
  }];
  let parameters = (ins ArrayRefParameter<"::mlir::attn::MaskPatternAttrInterface",
                                          "patterns">:$patterns);
  // `<[p0, p1, ...]>`, parsed by parseComposedPattern (at most
  // mask::kMaxPatternDepth deep).
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Attn_IntersectAttr : Attn_MaskPattern<"Intersect", "intersect",
    ["getSubPatterns", "isSegmentBound", "getLinearForm"]> {
  let summary = "intersection of patterns";
  let description = [{
    A key is allowed if every one of the (at least two) patterns allows it;
    `#attn.intersect<[#attn.causal, p]>` is the causal form of `p`.

    ```mlir
    {pattern = #attn.intersect<[#attn.causal, #attn.segments]>}
    ```
  }];
  let parameters = (ins ArrayRefParameter<"::mlir::attn::MaskPatternAttrInterface",
                                          "patterns">:$patterns);
  // `<[p0, p1, ...]>`, parsed by parseComposedPattern (at most
  // mask::kMaxPatternDepth deep).
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

def Attn_PerHeadAttr : Attn_MaskPattern<"PerHead", "per_head",
    ["getSubPatterns", "verifyPattern"]> {
  let summary = "one pattern per query head";
  let description = [{
    Query head `h` uses pattern `h` of the list, which has exactly one entry
    per query head (`Hq` entries, also under grouped-query attention). As in
    the Sparse Transformer, heads may alternate between patterns.

    ```mlir
    {pattern = #attn.per_head<[#attn.causal, #attn.window<before = 64, after = 0>]>}
    ```
  }];
  let parameters = (ins ArrayRefParameter<"::mlir::attn::MaskPatternAttrInterface",
                                          "patterns">:$patterns);
  // `<[p0, p1, ...]>`, parsed by parseComposedPattern (at most
  // mask::kMaxPatternDepth deep).
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Block layouts
//===----------------------------------------------------------------------===//

def Attn_BlockLayoutAttr : Attn_Attr<"BlockLayout", "block_layout"> {
  let summary = "a compile-time block layout (CSR of full and partial blocks)";
  let description = [{
    The layout of a mask in blocks of `block_q` queries by `block_k` keys,
    `query_blocks x key_blocks` blocks, as computed by the block-layout
    analysis: for each distinct layout `L` and query block `r`, the full key
    blocks are `full_blocks[full_offsets[L (query_blocks + 1) + r] ..
    full_offsets[L (query_blocks + 1) + r + 1])` and the partial ones are
    listed the same way; every other block is empty. `heads[h]` is the layout
    of query head `h`. Blocks ascend within a query block; a block is never
    both full and partial.

    ```mlir
    // Causal, 64 x 64 in blocks of 32: block (0, 0) partial, (1, 0) full,
    // (1, 1) partial.
    #attn.block_layout<block_q = 32, block_k = 32, query_blocks = 2,
        key_blocks = 2, full_offsets = [0, 0, 1], full_blocks = [0],
        partial_offsets = [0, 1, 2], partial_blocks = [0, 1], heads = [0]>
    ```
  }];
  let parameters = (ins "int64_t":$block_q, "int64_t":$block_k,
                        "int64_t":$query_blocks, "int64_t":$key_blocks,
                        Attn_IntListParameter<"full offsets">:$full_offsets,
                        Attn_IntListParameter<"full blocks">:$full_blocks,
                        Attn_IntListParameter<"partial offsets">:$partial_offsets,
                        Attn_IntListParameter<"partial blocks">:$partial_blocks,
                        Attn_IntListParameter<"layout of each head">:$heads);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The attribute of an analysis result.
    static BlockLayoutAttr get(::mlir::MLIRContext *context,
                               const ::mlir::attn::BlockLayout &layout);
    /// The analysis view of the attribute.
    ::mlir::attn::BlockLayout getLayout() const;
  }];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_TD
