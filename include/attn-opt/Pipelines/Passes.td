//===- Passes.td - attn CPU code generation passes ---------*- tablegen -*-===//

#ifndef ATTN_PIPELINES_PASSES_TD
#define ATTN_PIPELINES_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnParallelizeLinalg : Pass<"attn-parallelize-linalg", "func::FuncOp"> {
  let summary = "Tile the outer parallel loops of linalg ops into scf.forall";
  let description = [{
    The threading step of the generic CPU lowering. Each linalg op on
    tensors is tiled along its leading parallel loops (those before the
    first reduction loop, never the innermost loop) with `scf.forall`: size
    1 for all but the last of them, which is cut into `chunks` pieces. The
    foralls become OpenMP work-sharing loops later in the pipeline; the
    untiled inner loops stay contiguous for LLVM's vectorizer.

    ```mlir
    linalg.generic {iterator_types = ["parallel", "parallel", "parallel",
                                      "parallel", "reduction", "parallel"]}
      ins(%q, %kt : tensor<1x8x1x4096x64xf32>, tensor<1x8x64x4096xf32>) ...
    ```

    becomes an `scf.forall` over `(b, kvHead, g, rowChunk)` holding the
    same generic on a `1x1x1x(4096/chunks)` slice.

    Ops are tiled when they run once per call: in the function body or
    under `scf.if` (such as the guards of the run-time size checks), not in
    loops. A dynamic size of the chunked loop gets the tile size
    `max(1, ceil(n / chunks))`, computed at run time.
  }];
  let options = [
    Option<"chunks", "chunks", "int64_t", /*default=*/"8",
           "pieces the last tiled loop is cut into">,
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AttnMathApproximation : Pass<"attn-math-approximation"> {
  let summary = "Replace math ops by polynomial approximations LLVM vectorizes";
  let description = [{
    Applies MLIR's polynomial approximations (`exp`, `log`, `log1p`, `erf`,
    `tanh`, ...; f32 accuracy within a few ulp) so that the math in
    vectorizable loops becomes plain arithmetic instead of libm calls.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect",
  ];
}

#endif // ATTN_PIPELINES_PASSES_TD
