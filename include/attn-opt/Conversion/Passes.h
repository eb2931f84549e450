//===- Passes.h - attn conversion passes ------------------------*- C++ -*-===//

#ifndef ATTN_CONVERSION_PASSES_H
#define ATTN_CONVERSION_PASSES_H

#include "attn-opt/Conversion/AttnToLinalg/AttnToLinalg.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn-opt/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn-opt/Conversion/Passes.h.inc"

} // namespace mlir::attn

#endif // ATTN_CONVERSION_PASSES_H
