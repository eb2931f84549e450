//===- RuntimeChecks.h - Run-time checks of dynamic sizes -------*- C++ -*-===//
//
// What the verifier cannot check of attn.attention with dynamic sizes or
// varlen operands, checked by the generated code before it computes: the
// sizes that must agree (AttentionOp::getRuntimeSizeChecks), the lengths of
// a padded batch (0 <= length <= the buffer's) and the offsets of a packed
// one (from 0, not decreasing, within the rows). A failed check calls
// `attn_opt_runtime_error(code, a, b, c)`
// (attn-opt/Runtime/Host/RuntimeErrors.h; declared in the module on first use).
// Every lowering of the op (the reference lowering, the CPU and GPU kernels)
// emits them through this one function and skips its computation when they
// fail.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_UTILS_RUNTIMECHECKS_H
#define ATTN_DIALECT_ATTN_UTILS_RUNTIMECHECKS_H

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn {

/// Emits the checks of `op` at `b` and returns an i1 that holds when all
/// pass, or a null value when `op` has nothing to check (static shapes, no
/// varlen operands).
Value emitRuntimeChecks(ImplicitLocOpBuilder &b, AttentionOp op);

/// The checks of attn.attention_grad `op`: its forward op's, and the
/// cotangents' batch and rows against the query's (`grad_output`,
/// `grad_lse`: `RuntimeError::GradientSize`, never a read past their end);
/// an i1, or null when there is nothing to check. (The sizes are read off
/// the query, not the forward op's result: a use of it would keep alive a
/// forward op the gradient does not need.) Every gradient lowering (the
/// reference, linear-time and fused ones) emits them.
Value emitGradientChecks(ImplicitLocOpBuilder &b, AttentionGradOp op);

/// Builds what replaces `op` (its result, from `body`) under `op`'s run-time
/// checks: `body`'s value directly when `op` checks nothing at run time,
/// else the result of an `scf.if` that computes it when the checks pass
/// and yields an uninitialized tensor of the result's sizes when they fail
/// (the hook has reported the error). Transforms that rewrite
/// attn.attention into other ops (attn-decompose, attn-reassociate, the
/// reference lowering) keep the op's run-time contract through it.
Value buildUnderRuntimeChecks(ImplicitLocOpBuilder &b, AttentionOp op,
                              function_ref<Value()> body);
/// The same for `op` with its log-sum-exp result: `body` returns the
/// values of every result of `op`.
SmallVector<Value>
buildUnderRuntimeChecks(ImplicitLocOpBuilder &b, AttentionOp op,
                        function_ref<SmallVector<Value>()> body);

/// Emits a call of the run-time error hook (declared in the module of
/// `anchor`) with `code` and payload (index or integer values, as i64).
void emitRuntimeError(ImplicitLocOpBuilder &b, Operation *anchor, int32_t code,
                      Value a, Value bValue, Value c);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_UTILS_RUNTIMECHECKS_H
