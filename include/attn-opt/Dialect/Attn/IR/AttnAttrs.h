//===- AttnAttrs.h - attn dialect attributes --------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNATTRS_H
#define ATTN_DIALECT_ATTN_IR_ATTNATTRS_H

#include "attn-opt/Dialect/Attn/IR/AttnInterfaces.h"
#include "attn-opt/Mask/BlockLayout.h"
#include "attn-opt/Mask/MaskPattern.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "attn-opt/Dialect/Attn/IR/AttnEnums.h.inc"

namespace mlir::attn {
/// The most random features `#attn.kernel<favor, features = m>` may ask for.
constexpr int64_t kMaxFavorFeatures = 65536;
/// The most entries (features x head dim) of a FAVOR+ projection drawn at
/// compile time (a constant of 64 MiB in f32); a larger one is passed as the
/// `projection` operand.
constexpr int64_t kMaxFavorProjection = int64_t(1) << 24;

/// Parses a float parameter of an attn attribute.
FailureOr<llvm::APFloat> parseF64Parameter(AsmParser &parser);
/// Prints a float parameter in its shortest round-tripping form.
void printF64Parameter(AsmPrinter &printer, const llvm::APFloat &value);
/// Parses the `<[p0, p1, ...]>` of a composed pattern (union, intersect,
/// per_head), nested at most mask::kMaxPatternDepth deep (a deeper input
/// gets one diagnostic, not a stack overflow).
FailureOr<SmallVector<MaskPatternAttrInterface>>
parseComposedPattern(AsmParser &parser);
/// Prints `<[p0, p1, ...]>`.
void printComposedPattern(AsmPrinter &printer,
                          ArrayRef<MaskPatternAttrInterface> patterns);
/// The nesting depth of `pattern`: 1 for a leaf.
int64_t patternDepth(MaskPatternAttrInterface pattern);
/// Parses a bracketed, possibly empty list of integers.
FailureOr<SmallVector<int64_t>> parseIntListParameter(AsmParser &parser);
/// Parses `true` or `false`.
FailureOr<bool> parseBoolParameter(AsmParser &parser);
} // namespace mlir::attn

#define GET_ATTRDEF_CLASSES
#include "attn-opt/Dialect/Attn/IR/AttnAttrs.h.inc"

namespace mlir::attn {
/// Builds the mask of `pattern` (null: no pattern) over `shape`.
mask::Mask buildMask(MaskPatternAttrInterface pattern,
                     const PatternShape &shape);
} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_IR_ATTNATTRS_H
