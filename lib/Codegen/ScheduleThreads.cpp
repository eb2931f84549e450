//===- ScheduleThreads.cpp - attn-schedule-threads ------------------------===//

#include "attn-opt/Codegen/Passes.h"

#include "mlir/Dialect/OpenMP/OpenMPDialect.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSCHEDULETHREADS
#include "attn-opt/Codegen/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;

namespace {

struct ScheduleThreadsPass
    : public attn::impl::AttnScheduleThreadsBase<ScheduleThreadsPass> {
  using Base::Base;

  void runOnOperation() override {
    std::optional<omp::ClauseScheduleKind> kind =
        llvm::StringSwitch<std::optional<omp::ClauseScheduleKind>>(scheduleKind)
            .Case("static", omp::ClauseScheduleKind::Static)
            .Case("dynamic", omp::ClauseScheduleKind::Dynamic)
            .Case("guided", omp::ClauseScheduleKind::Guided)
            .Case("runtime", omp::ClauseScheduleKind::Runtime)
            .Default(std::nullopt);
    if (!kind) {
      getOperation()->emitError()
          << getArgument()
          << ": schedule-kind must be guided, dynamic, static or runtime, "
          << "not '" << scheduleKind << "'";
      return signalPassFailure();
    }
    // (static: OpenMP's default for a loop without a schedule.)
    if (*kind == omp::ClauseScheduleKind::Static)
      return;
    auto attr = omp::ClauseScheduleKindAttr::get(&getContext(), *kind);
    getOperation()->walk([&](omp::WsloopOp loop) {
      if (!loop.getScheduleKindAttr())
        loop.setScheduleKindAttr(attr);
    });
  }
};

} // namespace
