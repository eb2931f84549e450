//===- AttnToGPU.cpp - convert-attn-to-gpu --------------------------------===//

#include "attn-opt/Conversion/Passes.h"

#include "attn-opt/Conversion/Capabilities.h"

#include "attn-opt/Conversion/AttnToGPU/GpuKernel.h"
#include "attn-opt/Dialect/Attn/Utils/AttnUtils.h"
#include "attn-opt/Dialect/Attn/Utils/RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOGPU
#include "attn-opt/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct ConvertAttnToGPUPass
    : public attn::impl::ConvertAttnToGPUBase<ConvertAttnToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockK < 0 || blockK % 16 != 0) {
      getOperation()->emitError()
          << getArgument() << ": block-k (" << static_cast<int64_t>(blockK)
          << ") must be a positive multiple of 16 (or 0)";
      return signalPassFailure();
    }
    replaceEmptyAttention(getOperation());
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) {
      std::optional<Refusal> refusal =
          getGpuKernelCapability().refusal(op.getFeatures());
      if (!refusal) {
        ops.push_back(op);
        return;
      }
      // Ops of another normalizer are another generator's; the others
      // fall back to the generic lowering, one kernel per linalg op.
      if (getFeatureKind(refusal->feature) != FeatureKind::Normalizer)
        op.emitRemark() << getArgument() << ": " << refusal->text()
                        << " is not supported by the fused kernels; left to "
                           "the reference lowering";
    });
    for (AttentionOp op : ops) {
      KernelSpec spec = KernelSpec::get(op);
      GpuKernelPlan plan = planGpuKernel(spec, tensorCores, blockK);
      if (plan.sharedBytes > kGpuStaticSharedLimit) {
        op->emitError() << getArgument() << ": K and V blocks of "
                        << plan.blockK << " keys need " << plan.sharedBytes
                        << " bytes of shared memory, more than the "
                        << kGpuStaticSharedLimit
                        << " a kernel may use statically (use a smaller "
                           "block-k)";
        return signalPassFailure();
      }
      std::optional<BlockLayout> layout;
      if (spec.hasStaticLayout())
        layout = op.getBlockLayout(plan.blockQ, plan.blockK);
      InFlightDiagnostic remark = op->emitRemark();
      remark << getArgument() << ": ";
      if (plan.kind == GpuKernelPlan::Kind::Mma)
        remark << "mma.sync kernel";
      else
        remark << "SIMT kernel (" << plan.simtReason << "), " << plan.rowThreads
               << " thread(s) per query row";
      remark << "; tiles of " << plan.blockQ << " queries x " << plan.blockK
             << " keys, " << plan.threads << " threads; ";
      if (layout)
        remark << "visiting " << layout->countVisited() << " of "
               << layout->countBlocks() << " key blocks ("
               << layout->countFull() << " full)";
      else
        remark << "key blocks classified at run time ("
               << spec.runtimeLayoutReason() << ")";
      IRRewriter rewriter(&getContext());
      rewriter.setInsertionPoint(op);
      ImplicitLocOpBuilder b(op->getLoc(), rewriter);
      spec.runtimeOk = emitRuntimeChecks(b, op);
      SmallVector<Value> results =
          buildGpuKernel(b, spec, plan, layout ? &*layout : nullptr);
      rewriter.replaceOp(op, results);
    }
  }
};
} // namespace
