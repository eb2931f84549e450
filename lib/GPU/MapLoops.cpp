//===- MapLoops.cpp - attn-gpu-map-loops ----------------------------------===//

#include "attn-opt/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGPUMAPLOOPS
#include "attn-opt/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
struct GpuMapLoopsPass
    : public attn::impl::AttnGpuMapLoopsBase<GpuMapLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (threads < 1 || threads > 1024) {
      getOperation()->emitError()
          << getArgument() << ": threads (" << static_cast<int64_t>(threads)
          << ") must be in [1, 1024]";
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> loops;
    getOperation()->walk([&](scf::ParallelOp op) {
      if (op->getParentOfType<gpu::LaunchOp>() ||
          op->getParentOfType<scf::ParallelOp>() ||
          op->getParentOfType<gpu::GPUModuleOp>() || op.getNumReductions())
        return;
      loops.push_back(op);
    });
    for (scf::ParallelOp op : loops)
      map(op);
  }

  /// Rewrites `op` as blocks x threads over its linearized iterations.
  void map(scf::ParallelOp op) {
    ImplicitLocOpBuilder b(op.getLoc(), op);
    auto idx = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, v);
    };
    // Trip counts and the total.
    SmallVector<Value> counts;
    Value total = idx(1);
    for (auto [lb, ub, step] :
         llvm::zip(op.getLowerBound(), op.getUpperBound(), op.getStep())) {
      Value span = arith::SubIOp::create(b, ub, lb);
      Value n = arith::MaxSIOp::create(
          b, arith::CeilDivSIOp::create(b, span, step), idx(0));
      counts.push_back(n);
      total = arith::MulIOp::create(b, total, n);
    }
    Value blocks = arith::CeilDivSIOp::create(b, total, idx(threads));
    MLIRContext *ctx = &getContext();
    // No launch for an empty iteration space (a grid of 0 is invalid).
    Value any =
        arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, total, idx(0));
    auto nonEmpty = scf::IfOp::create(b, any, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&nonEmpty.getThenRegion().front());
    AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
    auto outer = scf::ParallelOp::create(
        b, ValueRange{idx(0)}, ValueRange{blocks}, ValueRange{idx(1)});
    (void)gpu::setMappingAttr(outer, {gpu::ParallelLoopDimMappingAttr::get(
                                         ctx, gpu::Processor::BlockX, id, id)});
    b.setInsertionPointToStart(outer.getBody());
    auto inner = scf::ParallelOp::create(
        b, ValueRange{idx(0)}, ValueRange{idx(threads)}, ValueRange{idx(1)});
    (void)gpu::setMappingAttr(inner,
                              {gpu::ParallelLoopDimMappingAttr::get(
                                  ctx, gpu::Processor::ThreadX, id, id)});
    b.setInsertionPointToStart(inner.getBody());
    Value linear = arith::AddIOp::create(
        b, arith::MulIOp::create(b, outer.getInductionVars()[0], idx(threads)),
        inner.getInductionVars()[0]);
    Value inside =
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, linear, total);
    auto guard = scf::IfOp::create(b, inside, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&guard.getThenRegion().front());
    // Delinearize, innermost dimension fastest (consecutive threads touch
    // consecutive elements).
    IRMapping mapping;
    Value rest = linear;
    int64_t rank = counts.size();
    SmallVector<Value> ivs(rank);
    for (int64_t d = rank - 1; d >= 0; --d) {
      Value i = d == 0 ? rest : arith::RemUIOp::create(b, rest, counts[d]);
      if (d > 0)
        rest = arith::DivUIOp::create(b, rest, counts[d]);
      ivs[d] =
          arith::AddIOp::create(b, op.getLowerBound()[d],
                                arith::MulIOp::create(b, i, op.getStep()[d]));
    }
    for (int64_t d = 0; d < rank; ++d)
      mapping.map(op.getInductionVars()[d], ivs[d]);
    for (Operation &inner : op.getBody()->without_terminator())
      b.clone(inner, mapping);
    op.erase();
  }
};
} // namespace
