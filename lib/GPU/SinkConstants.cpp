//===- SinkConstants.cpp - attn-gpu-sink-constants ------------------------===//

#include "attn-opt/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUSINKCONSTANTS
#include "attn-opt/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

/// The most bytes of a constant global copied into a kernel module.
constexpr int64_t kMaxSunkGlobalBytes = 64 * 1024;

/// Whether `g` is small enough to live in the kernel module.
static bool fitsKernelModule(memref::GlobalOp g) {
  MemRefType type = g.getType();
  if (!type.hasStaticShape() || !type.getElementType().isIntOrFloat())
    return false;
  int64_t bits = type.getElementTypeBitWidth();
  return type.getNumElements() <=
         kMaxSunkGlobalBytes * 8 / std::max<int64_t>(bits, 1);
}

namespace {
struct GpuSinkConstantsPass
    : public attn::impl::AttnGpuSinkConstantsBase<GpuSinkConstantsPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation()->walk([](gpu::LaunchOp launch) {
      Region &body = launch.getBody();
      SetVector<Value> above;
      getUsedValuesDefinedAbove(body, above);
      OpBuilder b = OpBuilder::atBlockBegin(&body.front());
      for (Value v : above) {
        Operation *def = v.getDefiningOp();
        // Constants, and constant globals (tables): outlining then copies
        // the global into the kernel module, so kernels read it from device
        // memory with no per-call copy.
        // Large ones (a FAVOR+ projection of 65536 features) stay on the
        // host, passed as kernel arguments (attn-gpu-host-memory copies them
        // once into managed memory): in the kernel module they would become
        // PTX text that ptxas takes seconds per megabyte to read.
        auto global = dyn_cast_or_null<memref::GetGlobalOp>(def);
        bool constantGlobal = false;
        if (global)
          if (auto g = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
                  global, global.getNameAttr()))
            constantGlobal = g.getConstant() && fitsKernelModule(g);
        if (!def || !(def->hasTrait<OpTrait::ConstantLike>() || constantGlobal))
          continue;
        Value copy = b.clone(*def)->getResult(0);
        v.replaceUsesWithIf(copy, [&](OpOperand &use) {
          return body.isAncestor(use.getOwner()->getParentRegion());
        });
      }
    });
  }
};
} // namespace
