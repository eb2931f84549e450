//===- AttnDialect.h - attn dialect -----------------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNDIALECT_H
#define ATTN_DIALECT_ATTN_IR_ATTNDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "attn-opt/Dialect/Attn/IR/AttnDialect.h.inc"

#endif // ATTN_DIALECT_ATTN_IR_ATTNDIALECT_H
