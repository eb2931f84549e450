//===- Passes.h - attn-opt code generation passes ---------------*- C++ -*-===//
//
// The passes that generate and check the CPU code of the pipelines, below
// the attn dialect's own lowerings: threading (attn-parallelize-linalg,
// attn-tile-contractions, attn-schedule-threads), the graph contractions'
// micro-kernel (attn-vectorize-contractions), math approximations, the
// allocation checks (attn-guard-allocation-sizes, attn-check-allocations)
// and the export of kernel-library entries (attn-export-entries,
// attn-forward-entry-outputs). lib/Pipelines assembles them into pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CODEGEN_PASSES_H
#define ATTN_CODEGEN_PASSES_H

#include "mlir/IR/OpDefinition.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewriterBase;
namespace linalg {
class LinalgOp;
} // namespace linalg

namespace func {
class FuncOp;
} // namespace func

namespace attn {
struct TargetModel;

/// True if `op` runs once per call of its function: only `scf.if` (such as
/// the guards of run-time checks) between it and the function, no loop.
/// The passes that introduce threads (attn-parallelize-linalg,
/// attn-tile-contractions) take only such ops, and only those with work to
/// share (see hasEmptyLoop).
bool runsOncePerCall(Operation *op);

/// True if a loop of `op` has a static size of 0 (a zero-sized tensor): the
/// op does nothing, and the threading passes leave it as it is.
bool hasEmptyLoop(linalg::LinalgOp op);

/// Tiles `op` (on tensors) into an `scf.forall` with tile `sizes` (0: not
/// tiled) at its place, replacing it; an error naming `pass` if it cannot.
LogicalResult tileForThreads(RewriterBase &rewriter, linalg::LinalgOp op,
                             ArrayRef<OpFoldResult> sizes, StringRef pass);

/// The rows of the register tile of attn-vectorize-contractions on
/// `target`: as many as keep 2 accumulator vectors per row, the 2 vectors
/// of a B row and a broadcast in registers (6 with 16 registers, 14 with
/// 32), hence attn-tile-contractions' `row-tile` in the pipeline.
int64_t registerRows(const TargetModel &target);

/// Whether a kernel library's entry takes tensors of `type`
/// (attn-export-entries): f16, bf16, f32, f64, i1, i8, i16, i32, i64.
bool isEntryElementType(Type type);

/// The (argument, dimension) of `fn` whose size dimension `dim` of `value`
/// (defined in `fn`'s single block) has, following what the IR states
/// (ReifyRankedShapedTypeOpInterface, destination operands, tensor.cast);
/// (-1, -1) if it cannot tell. Ops built to ask the interface are erased.
std::pair<int64_t, int64_t> traceEntrySize(func::FuncOp fn, Value value,
                                           int64_t dim);

#define GEN_PASS_DECL
#include "attn-opt/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn-opt/Codegen/Passes.h.inc"

} // namespace attn
} // namespace mlir

#endif // ATTN_CODEGEN_PASSES_H
