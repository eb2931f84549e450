//===- AttnInterfaces.td - attn dialect interfaces ---------*- tablegen -*-===//
//
// Attribute and operation interfaces shared by the attn dialect.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNINTERFACES_TD
#define ATTN_DIALECT_ATTN_IR_ATTNINTERFACES_TD

include "mlir/IR/OpBase.td"

def Attn_MaskPatternAttrInterface : AttrInterface<"MaskPatternAttrInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    A mask pattern: the set `A(h, i)` of keys query `i` of query head `h` may
    see. Implemented by every pattern attribute (`#attn.causal`,
    `#attn.window`, ...) and by the combinators (`#attn.union`,
    `#attn.intersect`, `#attn.per_head`).

    The attribute itself is syntax; evaluation (is `(h, i, j)` allowed?) and
    tile classification (is a rectangle full, partial or empty?) live in the
    mask library, `attn-opt/Analysis/MaskPattern.h`, which every pass uses.
  }];
  let methods = [
    InterfaceMethod<[{
        Checks the pattern against the shape of the attention it masks (for
        example, that global tokens lie inside the key sequence). Reports
        through `emitError` and fails on a violation.
      }],
      "::llvm::LogicalResult", "verifyPattern",
      (ins "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError,
           "const ::mlir::attn::PatternShape &":$shape)>,
    InterfaceMethod<[{
        Returns true if the pattern (or one of its parts) reads the runtime
        segment ids (`#attn.segments`).
      }],
      "bool", "usesSegments", (ins), [{}], [{ return false; }]>,
  ];
}

def Attn_NormalizerAttrInterface : AttrInterface<"NormalizerAttrInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    How scores become weights: `#attn.softmax`, `#attn.pointwise<...>` or
    `#attn.kernel<...>`.
  }];
  let methods = [
    InterfaceMethod<[{
        Returns true if a weight depends on the whole row of scores (softmax,
        kernel normalization), false if it is a function of its own score
        alone (pointwise), which makes every query independent.
      }],
      "bool", "needsRowReduction", (ins)>,
  ];
}

def Attn_FlopCountOpInterface : OpInterface<"FlopCountOpInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    The number of floating-point operations an op performs, counting one
    fused multiply-add as two and counting only the useful work of the
    algorithm it names (for example, the scores that exist under its mask
    pattern), so that GFLOP/s figures are comparable across lowerings.
    `attn-run --bench` sums it over the ops of the benchmarked function.
  }];
  let methods = [
    InterfaceMethod<"Returns the floating-point operation count.",
      "double", "getFlopCount", (ins)>,
  ];
}

#endif // ATTN_DIALECT_ATTN_IR_ATTNINTERFACES_TD
