//===- SeparateBufferReads.cpp - attn-separate-buffer-reads --------------===//
//
// Gives each kernel reading a tensor through a read-only
// bufferization.to_buffer its own to_buffer, right before it, so that
// one-shot bufferization sees the read where it happens (CSE merges them).
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Codegen/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSEPARATEBUFFERREADS
#include "attn-opt/Codegen/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {
struct SeparateBufferReadsPass
    : public attn::impl::AttnSeparateBufferReadsBase<SeparateBufferReadsPass> {
  void runOnOperation() override {
    SmallVector<bufferization::ToBufferOp> reads;
    getOperation().walk([&](bufferization::ToBufferOp op) {
      // (Arguments are never written: reads of them need no care.)
      if (op.getReadOnly() && !isa<BlockArgument>(op.getTensor()) &&
          !op->hasOneUse())
        reads.push_back(op);
    });
    for (bufferization::ToBufferOp op : reads) {
      // The uses by ancestor in the to_buffer's block, in block order.
      Block *block = op->getBlock();
      llvm::MapVector<Operation *, SmallVector<OpOperand *>> byReader;
      for (OpOperand &use : op->getUses())
        if (Operation *reader = block->findAncestorOpInBlock(*use.getOwner()))
          byReader[reader].push_back(&use);
      SmallVector<Operation *> readers;
      for (auto &entry : byReader)
        readers.push_back(entry.first);
      llvm::sort(readers, [](Operation *a, Operation *b) {
        return a->isBeforeInBlock(b);
      });
      // The first reader keeps the op; each later one gets its own.
      for (Operation *reader : llvm::drop_begin(readers)) {
        OpBuilder b(reader);
        Operation *copy = b.clone(*op);
        for (OpOperand *use : byReader[reader])
          use->set(copy->getResult(0));
      }
    }
  }
};
} // namespace
