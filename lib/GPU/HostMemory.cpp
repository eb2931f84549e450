//===- HostMemory.cpp - attn-gpu-host-memory ------------------------------===//

#include "attn-opt/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUHOSTMEMORY
#include "attn-opt/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct GpuHostMemoryPass
    : public attn::impl::AttnGpuHostMemoryBase<GpuHostMemoryPass> {
  using Base::Base;

  static bool inKernel(Operation *op) {
    return op->getParentOfType<gpu::LaunchOp>() ||
           op->getParentOfType<gpu::GPUModuleOp>();
  }

  static bool isKernelUse(Operation *user) {
    return inKernel(user) || isa<gpu::LaunchFuncOp>(user);
  }

  /// True if `v` is used by a kernel; `throughView` is set if only a view
  /// of it is.
  static bool usedByKernel(Value v, bool &throughView) {
    throughView = false;
    if (llvm::any_of(v.getUsers(), isKernelUse))
      return true;
    SmallVector<Value> work = {v};
    while (!work.empty()) {
      Value x = work.pop_back_val();
      for (Operation *user : x.getUsers()) {
        if (x != v && isKernelUse(user))
          throughView = true;
        if (isa<ViewLikeOpInterface>(user))
          for (Value r : user->getResults())
            work.push_back(r);
      }
    }
    return throughView;
  }

  static void freeAt(OpBuilder &b, Location loc, Value memref) {
    auto tokenType = gpu::AsyncTokenType::get(b.getContext());
    Value t0 =
        gpu::WaitOp::create(b, loc, tokenType, ValueRange{}).getAsyncToken();
    Value t1 = gpu::DeallocOp::create(b, loc, tokenType, ValueRange{t0}, memref)
                   .getAsyncToken();
    gpu::WaitOp::create(b, loc, Type(), ValueRange{t1});
  }

  static Value sharedAlloc(OpBuilder &b, Location loc, MemRefType type,
                           ValueRange dynamicSizes) {
    return gpu::AllocOp::create(b, loc, type, Type(), ValueRange{},
                                dynamicSizes, ValueRange{},
                                /*hostShared=*/true)
        .getMemref();
  }

  void runOnOperation() override {
    SmallVector<Operation *> allocs, deallocs, constants, viewed;
    getOperation()->walk([&](Operation *op) {
      if (inKernel(op))
        return;
      if (isa<memref::AllocOp>(op))
        allocs.push_back(op);
      else if (isa<memref::DeallocOp>(op))
        deallocs.push_back(op);
      else if (isa<memref::GetGlobalOp, memref::AllocaOp>(op)) {
        bool throughView = false;
        if (!usedByKernel(op->getResult(0), throughView))
          return;
        if (throughView)
          viewed.push_back(op);
        else
          constants.push_back(op);
      }
    });
    for (Operation *op : viewed) {
      op->emitOpError() << getArgument()
                        << ": a GPU kernel reads a view of this host buffer; "
                           "only direct uses can be given a device copy";
      return signalPassFailure();
    }
    // Host values kernels read through a copy: only static, identity-layout
    // buffers, and only constant globals (a mutable global's copy would
    // stop being the global).
    for (Operation *op : constants) {
      auto type = cast<MemRefType>(op->getResult(0).getType());
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
          type.getMemorySpace()) {
        op->emitOpError() << getArgument()
                          << ": a GPU kernel reads this host buffer, which "
                             "is not a static, identity-layout memref in the "
                             "default memory space";
        return signalPassFailure();
      }
      if (auto g = dyn_cast<memref::GetGlobalOp>(op)) {
        auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
            g, g.getNameAttr());
        if (!global || !global.getConstant()) {
          op->emitOpError()
              << getArgument() << ": a GPU kernel reads a mutable host global";
          return signalPassFailure();
        }
      }
    }
    OpBuilder b(&getContext());
    for (Operation *op : allocs) {
      auto alloc = cast<memref::AllocOp>(op);
      b.setInsertionPoint(op);
      Value shared = sharedAlloc(b, op->getLoc(), alloc.getType(),
                                 alloc.getDynamicSizes());
      alloc.replaceAllUsesWith(shared);
      op->erase();
    }
    for (Operation *op : deallocs) {
      b.setInsertionPoint(op);
      freeAt(b, op->getLoc(), cast<memref::DeallocOp>(op).getMemref());
      op->erase();
    }
    // Globals and stack buffers that kernels read: a host-shared copy for
    // the rest of the block.
    for (Operation *op : constants) {
      Value v = op->getResult(0);
      auto type = cast<MemRefType>(v.getType());
      b.setInsertionPointAfter(op);
      Value copy =
          sharedAlloc(b, op->getLoc(),
                      MemRefType::get(type.getShape(), type.getElementType()),
                      ValueRange{});
      if (!isa<memref::AllocaOp>(op))
        memref::CopyOp::create(b, op->getLoc(), v, copy);
      // Only the kernels' uses move to the copy, so nothing that outlives
      // the block sees the copy (freed at its end).
      v.replaceUsesWithIf(
          copy, [](OpOperand &use) { return isKernelUse(use.getOwner()); });
      b.setInsertionPoint(op->getBlock()->getTerminator());
      freeAt(b, op->getLoc(), copy);
    }
  }
};
} // namespace
