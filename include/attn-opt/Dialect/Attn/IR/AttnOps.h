//===- AttnOps.h - attn dialect operations ----------------------*- C++ -*-===//

#ifndef ATTN_DIALECT_ATTN_IR_ATTNOPS_H
#define ATTN_DIALECT_ATTN_IR_ATTNOPS_H

#include "attn-opt/Dialect/Attn/IR/AttentionFeatures.h"
#include "attn-opt/Dialect/Attn/IR/AttentionProblem.h"
#include "attn-opt/Dialect/Attn/IR/AttnAttrs.h"
#include "attn-opt/Dialect/Attn/IR/AttnDialect.h"
#include "attn-opt/Dialect/Attn/IR/AttnInterfaces.h"
#include "attn-opt/Dialect/Attn/IR/ModRegion.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

namespace mlir::attn {
/// The most bytes one tensor of an attn op may need (2^47, the user address
/// space of x86-64 and AArch64).
constexpr int64_t kMaxTensorBytes = int64_t(1) << 47;

namespace detail {
/// The bytes of the static part of `type` (dynamic sizes count 1), or
/// nullopt when the product overflows int64.
std::optional<int64_t> staticTensorBytes(ShapedType type);
/// Checks every ranked tensor operand and result of `op` against
/// kMaxTensorBytes.
LogicalResult verifyAllocatableTensors(Operation *op);
} // namespace detail

/// The trait of every attn op (Attn_AllocatableTensors in AttnBase.td).
template <typename ConcreteType>
class AllocatableTensors
    : public OpTrait::TraitBase<ConcreteType, AllocatableTensors> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return detail::verifyAllocatableTensors(op);
  }
};
} // namespace mlir::attn

#define GET_OP_CLASSES
#include "attn-opt/Dialect/Attn/IR/AttnOps.h.inc"

#endif // ATTN_DIALECT_ATTN_IR_ATTNOPS_H
