//===- AttnDialect.cpp - attn dialect -------------------------------------===//

#include "attn-opt/Dialect/Attn/IR/AttnDialect.h"
#include "attn-opt/Dialect/Attn/IR/AttnOps.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn-opt/Dialect/Attn/IR/AttnDialect.cpp.inc"

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "attn-opt/Dialect/Attn/IR/AttnOps.cpp.inc"
      >();
  registerAttributes();
}
