//===- Passes.td - attn conversion passes ------------------*- tablegen -*-===//

#ifndef ATTN_CONVERSION_PASSES_TD
#define ATTN_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToLinalg : Pass<"convert-attn-to-linalg"> {
  let summary = "Reference lowering of every attn op to linalg on tensors";
  let description = [{
    Lowers `attn.attention` (every normalizer and mask pattern, bias, gate,
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

#endif // ATTN_CONVERSION_PASSES_TD
