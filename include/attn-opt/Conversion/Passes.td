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

#endif // ATTN_CONVERSION_PASSES_TD
