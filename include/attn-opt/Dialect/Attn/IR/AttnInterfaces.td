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

    Each pattern answers the questions passes ask of it through this
    interface, so no pass switches over pattern kinds: its checks against
    the attention's shape, its node in the mask library
    (`attn-opt/Mask/MaskPattern.h`, which evaluates `(h, i, j)` and
    classifies tiles as full, partial or empty), whether it reads segment
    ids, and whether kernelized attention under it has a linear form. The
    defaults serve leaf patterns; combinators list their operands in
    `getSubPatterns` and the defaults recurse into them.

    A new pattern defines its attribute with `buildMaskNode` (and a mask
    library node kind if none fits) and overrides the methods whose default
    does not hold for it (docs/Architecture.md, "Adding a mask pattern").
  }];
  let methods = [
    InterfaceMethod<[{
        The patterns this one combines (empty for a leaf pattern).
      }],
      "::llvm::ArrayRef<::mlir::attn::MaskPatternAttrInterface>",
      "getSubPatterns", (ins), [{}], [{ return {}; }]>,
    InterfaceMethod<[{
        Checks the pattern against the shape of the attention it masks (for
        example, that global tokens lie inside the key sequence). Reports
        through `emitError` and fails on a violation. The default checks the
        sub-patterns.
      }],
      "::llvm::LogicalResult", "verifyPattern",
      (ins "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError,
           "const ::mlir::attn::PatternShape &":$shape), [{}], [{
        for (::mlir::attn::MaskPatternAttrInterface p : $_attr.getSubPatterns())
          if (::mlir::failed(p.verifyPattern(emitError, shape)))
            return ::mlir::failure();
        return ::mlir::success();
      }]>,
    InterfaceMethod<[{
        The pattern as a node of the mask library, for an attention of
        `shape` against which the pattern has been verified.
      }],
      "::mlir::attn::mask::Node", "buildMaskNode",
      (ins "const ::mlir::attn::PatternShape &":$shape)>,
    InterfaceMethod<[{
        Returns true if the pattern (or one of its parts) is defined by
        blocks chosen for concrete lengths at compile time (`#attn.random`,
        `#attn.block`): it needs static lengths and one length per batch.
      }],
      "bool", "requiresStaticLengths", (ins), [{}], [{
        return ::llvm::any_of($_attr.getSubPatterns(),
            [](::mlir::attn::MaskPatternAttrInterface p) {
              return p.requiresStaticLengths();
            });
      }]>,
    InterfaceMethod<[{
        Returns true if the pattern (or one of its parts) reads the runtime
        segment ids (`#attn.segments`).
      }],
      "bool", "usesSegments", (ins), [{}], [{
        return ::llvm::any_of($_attr.getSubPatterns(),
            [](::mlir::attn::MaskPatternAttrInterface p) {
              return p.usesSegments();
            });
      }]>,
    InterfaceMethod<[{
        Returns true if the pattern only allows keys of the query's own
        segment (`#attn.segments`, or an intersection with it): kernels may
        then skip key blocks whose segment ids cannot meet the query tile's.
      }],
      "bool", "isSegmentBound", (ins), [{}], [{ return false; }]>,
    InterfaceMethod<[{
        The form of the pattern that kernelized attention can follow in its
        linear (reassociated) or chunked prefix form: a causal and/or a
        segment restriction. `std::nullopt` when the weights under the
        pattern do not factor through a prefix state.
      }],
      "std::optional<::mlir::attn::LinearMaskForm>", "getLinearForm", (ins),
      [{}], [{ return std::nullopt; }]>,
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

def Attn_AttentionOpInterface : OpInterface<"AttentionOpInterface"> {
  let cppNamespace = "::mlir::attn";
  let description = [{
    What every user-level attention op shares: its dimensions and the scale
    of its scores (the `scale` attribute when present, else the op's
    default, `1/sqrt(D)` unless the op says otherwise).
  }];
  let methods = [
    InterfaceMethod<"Returns the dimensions of the attention.",
      "::mlir::attn::AttentionDims", "getDims", (ins)>,
    InterfaceMethod<[{
        The scale of the scores when the op has no `scale` attribute.
      }],
      "double", "getDefaultScale", (ins), [{}], [{
        return 1.0 / std::sqrt(static_cast<double>($_op.getDims().headDim));
      }]>,
    InterfaceMethod<[{
        The scale applied to the scores: the `scale` attribute, else the
        default scale.
      }],
      "double", "getEffectiveScale", (ins), [{}], [{
        if (std::optional<::llvm::APFloat> s = $_op.getScale())
          return s->convertToDouble();
        return $_op.getDefaultScale();
      }]>,
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
