//===- BufferizeCommunication.cpp - Bufferizing attn's comm ops --------===//
//
// BufferizableOpInterface for attn.exchange, attn.exchange_wait and
// attn.allreduce: the tensor form writes its result into the buffer of its
// `into` (or `incoming`) operand, in place, and becomes the buffer form of
// the same op (memref operands, no tensor result). What is sent is read
// until the wait (attn.exchange_wait takes it), so bufferization keeps its
// buffer unchanged and deallocation keeps it alive while it is in flight.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::bufferization;

namespace {
/// The op writes into operand `inPlace` (its result aliases it) and only
/// reads the others.
template <typename OpTy>
struct CommOpModel
    : public BufferizableOpInterface::ExternalModel<CommOpModel<OpTy>, OpTy> {
  static unsigned inPlaceOperand() {
    // exchange: into (1); exchange_wait: incoming (0); allreduce: into (1).
    return std::is_same_v<OpTy, ExchangeWaitOp> ? 0 : 1;
  }
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    // exchange_wait reads what it received; exchange does not read `into`.
    return std::is_same_v<OpTy, ExchangeWaitOp> ||
           operand.getOperandNumber() != inPlaceOperand();
  }
  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &) const {
    return operand.getOperandNumber() == inPlaceOperand();
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    if (operand.getOperandNumber() != inPlaceOperand())
      return {};
    Value result = op->getResult(0);
    if (!isa<TensorType>(result.getType()))
      return {};
    return {{result, BufferRelation::Equivalent}};
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    SmallVector<Value> operands;
    for (Value v : op->getOperands()) {
      if (!isa<TensorType>(v.getType())) {
        operands.push_back(v);
        continue;
      }
      FailureOr<Value> buffer = getBuffer(rewriter, v, options, state);
      if (failed(buffer))
        return failure();
      operands.push_back(*buffer);
    }
    Value inPlace = operands[inPlaceOperand()];
    rewriter.setInsertionPoint(op);
    SmallVector<Value> replacements;
    if constexpr (std::is_same_v<OpTy, ExchangeOp>) {
      auto newOp = ExchangeOp::create(
          rewriter, op->getLoc(), Type(), op->getResult(1).getType(),
          op->getResult(2).getType(), operands[0], operands[1], operands[2],
          operands[3], operands[4], operands[5]);
      replacements = {inPlace, newOp.getSendRequest(), newOp.getRecvRequest()};
    } else if constexpr (std::is_same_v<OpTy, ExchangeWaitOp>) {
      ExchangeWaitOp::create(rewriter, op->getLoc(), Type(), operands[0],
                             operands[1], operands[2], operands[3]);
      replacements = {inPlace};
    } else {
      AllReduceOp::create(rewriter, op->getLoc(), Type(), operands[0],
                          operands[1], operands[2]);
      replacements = {inPlace};
    }
    replaceOpWithBufferizedValues(rewriter, op, replacements);
    return success();
  }
};
} // namespace

void mlir::attn::registerBufferizableCommunicationModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, AttnDialect *) {
    ExchangeOp::attachInterface<CommOpModel<ExchangeOp>>(*ctx);
    ExchangeWaitOp::attachInterface<CommOpModel<ExchangeWaitOp>>(*ctx);
    AllReduceOp::attachInterface<CommOpModel<AllReduceOp>>(*ctx);
  });
}
