//===- AttnAttrs.h - attn dialect attributes --------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNATTRS_H
#define ATTN_DIALECT_ATTN_IR_ATTNATTRS_H

#include "attn-opt/Analysis/BlockLayout.h"
#include "attn-opt/Analysis/MaskPattern.h"
#include "attn-opt/Dialect/Attn/IR/AttnInterfaces.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "attn-opt/Dialect/Attn/IR/AttnEnums.h.inc"

namespace mlir::attn {
/// Parses a float parameter of an attn attribute.
FailureOr<llvm::APFloat> parseF64Parameter(AsmParser &parser);
/// Prints a float parameter in its shortest round-tripping form.
void printF64Parameter(AsmPrinter &printer, const llvm::APFloat &value);
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
