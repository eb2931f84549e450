//===- Differentiate.cpp - Backward functions of attention functions ------===//
//
// attn-differentiate: `@F_grad` next to each function `@F` that returns the
// output of its attn.attention, ending in the op's attn.attention_grad. See
// the pass description.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Dialect/Attn/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDIFFERENTIATE
#include "attn-opt/Dialect/Attn/Transforms/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The one attention of `fn` that `fn` returns, with whether it returns its
/// log-sum-exp too; null (and a diagnostic) when `fn` is not one the pass
/// differentiates, null without one when `fn` has no attention.
FailureOr<std::pair<AttentionOp, bool>> differentiable(func::FuncOp fn) {
  SmallVector<AttentionOp> ops;
  fn.walk([&](AttentionOp op) { ops.push_back(op); });
  if (ops.empty())
    return std::pair<AttentionOp, bool>{};
  if (ops.size() > 1)
    return fn.emitError() << "attn-differentiate: @" << fn.getName() << " has "
                          << ops.size()
                          << " attn.attention ops; it differentiates a "
                             "function with one";
  AttentionOp op = ops.front();
  if (op.isPaged())
    return op.emitOpError()
           << "over a paged KV cache has no gradient (a page_table is for "
              "inference): @"
           << fn.getName() << " is not differentiated";
  auto ret = dyn_cast<func::ReturnOp>(fn.getBody().back().getTerminator());
  bool output = false, lse = false;
  if (ret && op->getParentOp() == fn)
    for (Value v : ret.getOperands()) {
      output |= v == op.getResult();
      lse |= op.getLse() && v == op.getLse();
    }
  if (!output)
    return fn.emitError() << "attn-differentiate: @" << fn.getName()
                          << " does not return the output of its "
                             "attn.attention (in its body's block)";
  return std::pair<AttentionOp, bool>{op, lse};
}

struct AttnDifferentiatePass
    : public attn::impl::AttnDifferentiateBase<AttnDifferentiatePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (func::FuncOp fn : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (fn.isExternal() || fn.isPrivate())
        continue;
      auto found = differentiable(fn);
      if (failed(found))
        return signalPassFailure();
      if (!found->first)
        continue;
      std::string name = (fn.getName() + "_grad").str();
      if (symbols.lookup(name)) {
        fn.emitError() << "attn-differentiate: cannot add @" << name
                       << ": the name is taken";
        return signalPassFailure();
      }
      addGradient(symbols, fn, found->first, found->second, name);
    }
  }

  /// Adds `@name`, the backward function of `fn`.
  void addGradient(SymbolTable &symbols, func::FuncOp fn, AttentionOp forward,
                   bool withLse, StringRef name) {
    IRMapping map;
    func::FuncOp grad = fn.clone(map);
    grad.setName(name);
    symbols.insert(grad, std::next(Block::iterator(fn)));
    auto op = cast<AttentionOp>(map.lookup(forward.getOperation()));
    Block &body = grad.getBody().back();
    Location loc = op.getLoc();
    Value dOut = body.addArgument(op.getResult().getType(), loc);
    Value dLse =
        withLse ? body.addArgument(op.getLse().getType(), loc) : Value();

    auto ret = cast<func::ReturnOp>(body.getTerminator());
    OpBuilder b(ret);
    auto typeOr = [](Value v) { return v ? v.getType() : Type(); };
    auto gradOp = AttentionGradOp::create(
        b, loc, op.getQuery().getType(), op.getKey().getType(),
        op.getValue().getType(), typeOr(op.getBias()), typeOr(op.getGate()),
        typeOr(op.getSinks()), op.getResult(), dOut, dLse, Value(), Value());
    func::ReturnOp::create(b, ret.getLoc(), gradOp.getResults());
    ret.erase();
    grad.setFunctionType(FunctionType::get(
        &getContext(), body.getArgumentTypes(), gradOp.getResultTypes()));
    // The argument and result attributes were @F's.
    grad.removeArgAttrsAttr();
    grad.removeResAttrsAttr();
  }
};

} // namespace
