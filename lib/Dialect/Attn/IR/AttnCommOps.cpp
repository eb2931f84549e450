//===- AttnCommOps.cpp - Communication between ranks -------------------===//
//
// The verifiers and memory effects of attn.exchange, attn.exchange_wait and
// attn.allreduce (AttnOps.td): a tensor form (tensor operands, a tensor
// result) and a buffer form (memref operands, no tensor result).
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"

using namespace mlir;
using namespace mlir::attn;

namespace {
/// Whether `t` is an element type the `mpi` lowering maps to an MPI type.
bool isCommunicable(Type t) {
  return t.isF32() || t.isF64() || t.isInteger(8) || t.isInteger(16) ||
         t.isInteger(32) || t.isInteger(64);
}

/// Checks the operands of one form: all tensors with a tensor result of
/// the type of `received`, or all memrefs with none; one element type MPI
/// can send.
LogicalResult verifyForm(Operation *op, ValueRange shaped, Value received,
                         Value optionalResult) {
  bool tensors = isa<RankedTensorType>(shaped.front().getType());
  for (Value v : shaped) {
    if (tensors ? !isa<RankedTensorType>(v.getType())
                : !isa<MemRefType>(v.getType()))
      return op->emitOpError(
          "takes ranked tensors (before bufferization) or memrefs (after), "
          "not both");
    Type element = cast<ShapedType>(v.getType()).getElementType();
    if (!isCommunicable(element))
      return op->emitOpError("cannot send elements of type ")
             << element << " (f32, f64 or integers of 8 to 64 bits)";
    if (element != cast<ShapedType>(shaped.front().getType()).getElementType())
      return op->emitOpError("sends and receives one element type");
  }
  if (tensors != static_cast<bool>(optionalResult))
    return op->emitOpError(tensors ? "has a tensor result in tensor form"
                                   : "has no tensor result in buffer form");
  if (optionalResult && optionalResult.getType() != received.getType())
    return op->emitOpError("result type must be the type of the block it "
                           "receives into");
  return success();
}

/// Tensor form: a write to the default resource (the op communicates, so
/// it is neither removed nor merged). Buffer form: reads of `reads`,
/// writes of `writes`.
void addEffects(
    Operation *op, ArrayRef<OpOperand *> reads, ArrayRef<OpOperand *> writes,
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  if (isa<RankedTensorType>(reads.front()->get().getType())) {
    effects.emplace_back(MemoryEffects::Write::get());
    effects.emplace_back(MemoryEffects::Read::get());
    return;
  }
  for (OpOperand *r : reads)
    effects.emplace_back(MemoryEffects::Read::get(), r);
  for (OpOperand *w : writes)
    effects.emplace_back(MemoryEffects::Write::get(), w);
}
} // namespace

LogicalResult ExchangeOp::verify() {
  if (failed(
          verifyForm(*this, {getSend(), getInto()}, getInto(), getIncoming())))
    return failure();
  auto send = cast<ShapedType>(getSend().getType());
  auto into = cast<ShapedType>(getInto().getType());
  if (send.getRank() != into.getRank())
    return emitOpError("sends and receives blocks of one rank");
  return success();
}

void ExchangeOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addEffects(*this, {&getSendMutable()}, {&getIntoMutable()}, effects);
}

LogicalResult ExchangeWaitOp::verify() {
  if (failed(verifyForm(*this, {getIncoming(), getSent()}, getIncoming(),
                        getResult())))
    return failure();
  if (!getSendRequest().getDefiningOp<ExchangeOp>() ||
      getSendRequest().getDefiningOp() != getRecvRequest().getDefiningOp())
    return emitOpError("waits on the two requests of one attn.exchange");
  return success();
}

void ExchangeWaitOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addEffects(*this, {&getSentMutable(), &getIncomingMutable()},
             {&getIncomingMutable()}, effects);
}

LogicalResult AllReduceOp::verify() {
  if (failed(
          verifyForm(*this, {getInput(), getInto()}, getInto(), getResult())))
    return failure();
  auto in = cast<ShapedType>(getInput().getType());
  auto into = cast<ShapedType>(getInto().getType());
  if (in.getShape() != into.getShape())
    return emitOpError("sums into a buffer of the input's shape");
  return success();
}

void AllReduceOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  addEffects(*this, {&getInputMutable()}, {&getIntoMutable()}, effects);
}
