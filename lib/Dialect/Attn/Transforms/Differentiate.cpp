//===- Differentiate.cpp - Backward functions of attention functions ------===//
//
// attn-differentiate: `@F_grad` next to each function `@F` that returns the
// output of its attn.attention, ending in the op's attn.attention_grad. See
// the pass description.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Dialect/Attn/Transforms/Passes.h"
#include "attn-opt/Dialect/Attn/Utils/AttnUtils.h"
#include "attn-opt/Dialect/Attn/Utils/TensorBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
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
      // (Through the result's shard.shard of a sharded sequence.)
      if (auto shardOp = v.getDefiningOp<shard::ShardOp>())
        v = shardOp.getSrc();
      output |= v == op.getResult();
      lse |= op.getLse() && v == op.getLse();
    }
  if (!output)
    return fn.emitError() << "attn-differentiate: @" << fn.getName()
                          << " does not return the output of its "
                             "attn.attention (in its body's block)";
  return std::pair<AttentionOp, bool>{op, lse};
}

/// The one Linformer attention of `fn` (attn.lowrank_attention) that `fn`
/// returns, null when there is none or `fn` has an attn.attention too; a
/// diagnostic when `fn` has several or does not return it.
FailureOr<LowRankAttentionOp> lowRankOf(func::FuncOp fn) {
  SmallVector<LowRankAttentionOp> ops;
  fn.walk([&](LowRankAttentionOp op) { ops.push_back(op); });
  if (ops.empty())
    return LowRankAttentionOp();
  bool dense = false;
  fn.walk([&](AttentionOp) { dense = true; });
  if (ops.size() > 1 || dense)
    return fn.emitError() << "attn-differentiate: @" << fn.getName()
                          << " has several attention ops; it differentiates "
                             "a function with one";
  auto ret = dyn_cast<func::ReturnOp>(fn.getBody().back().getTerminator());
  LowRankAttentionOp op = ops.front();
  if (!ret || op->getParentOp() != fn ||
      !llvm::is_contained(ret.getOperands(), op.getResult()))
    return fn.emitError() << "attn-differentiate: @" << fn.getName()
                          << " does not return the output of its "
                             "attn.lowrank_attention (in its body's block)";
  return op;
}

struct AttnDifferentiatePass
    : public attn::impl::AttnDifferentiateBase<AttnDifferentiatePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (func::FuncOp fn : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (fn.isExternal() || fn.isPrivate())
        continue;
      // Its one attention: Linformer's, or an attn.attention.
      FailureOr<LowRankAttentionOp> lowRank = lowRankOf(fn);
      if (failed(lowRank))
        return signalPassFailure();
      FailureOr<std::pair<AttentionOp, bool>> found =
          std::pair<AttentionOp, bool>{};
      if (!*lowRank) {
        found = differentiable(fn);
        if (failed(found))
          return signalPassFailure();
        if (!found->first)
          continue;
      }
      std::string name = (fn.getName() + "_grad").str();
      if (symbols.lookup(name)) {
        fn.emitError() << "attn-differentiate: cannot add @" << name
                       << ": the name is taken";
        return signalPassFailure();
      }
      if (*lowRank)
        addLowRankGradient(symbols, fn, *lowRank, name);
      else
        addGradient(symbols, fn, found->first, found->second, name);
    }
  }

  /// Adds `@name`, the backward function of `fn` whose output is Linformer
  /// attention `forward` (`O = softmax(scale Q (E K)^T) (F V)`): the
  /// attention over the projected keys and values as attn-project-lowrank
  /// writes it, its attn.attention_grad (the fused backward: linear in L),
  /// then the projections' chain rule, `dK = E^T dK'`, `dV = F^T dV'`,
  /// `dE = sum dK' K^T`, `dF = sum dV' V^T` (summed over batch, heads and
  /// the head dim). Returns the gradients of query, key, value, key_proj
  /// and value_proj.
  void addLowRankGradient(SymbolTable &symbols, func::FuncOp fn,
                          LowRankAttentionOp forward, StringRef name) {
    IRMapping map;
    func::FuncOp grad = fn.clone(map);
    grad.setName(name);
    symbols.insert(grad, std::next(Block::iterator(fn)));
    auto op = cast<LowRankAttentionOp>(map.lookup(forward.getOperation()));
    Block &body = grad.getBody().back();
    Location loc = op.getLoc();
    Value dOut = body.addArgument(op.getType(), loc);
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    ImplicitLocOpBuilder b(loc, ret);
    TensorBuilder tb(b);
    Value q = op.getQuery(), k = op.getKey(), v = op.getValue();
    Value e = op.getKeyProj(), f = op.getValueProj();
    Value kp = lowRankProjection(tb, e, k), vp = lowRankProjection(tb, f, v);
    auto attention = AttentionOp::create(b, toF32Tensor(tb, q), kp, vp,
                                         SoftmaxAttr::get(&getContext()));
    attention.setScaleAttr(b.getF32FloatAttr(op.getEffectiveScale()));
    auto gradOp = AttentionGradOp::create(
        b, loc, attention.getQuery().getType(), kp.getType(), vp.getType(),
        Type(), Type(), Type(), Type(), Type(), TypeRange(),
        attention.getResult(), toF32Tensor(tb, dOut), Value(), Value(), Value(),
        Value(), Value());
    // dX[b,h,j,c] = sum_p P[p,j] dX'[b,h,p,c] over loops (b, h, j, c, p);
    // dP[p,j] = sum_{b,h,c} dX'[b,h,p,c] X[b,h,j,c] over (p, j, b, h, c).
    auto back = [&](Value proj, Value dx, Value x) {
      ArrayRef<int64_t> xs = shapeOf(x);
      Value dIn =
          tb.contract(proj, tb.map(5, {4, 2}), dx, tb.map(5, {0, 1, 4, 3}), xs,
                      tb.map(5, {0, 1, 2, 3}), "ppppr");
      Value dProj =
          tb.contract(dx, tb.map(5, {2, 3, 0, 4}), x, tb.map(5, {2, 3, 1, 4}),
                      shapeOf(proj), tb.map(5, {0, 1}), "pprrr");
      return std::pair<Value, Value>{dIn, dProj};
    };
    auto [dk, de] = back(e, gradOp.getGradKey(), k);
    auto [dv, df] = back(f, gradOp.getGradValue(), v);
    SmallVector<Value> grads;
    for (auto [g, like] :
         llvm::zip(SmallVector<Value>{gradOp.getGradQuery(), dk, dv, de, df},
                   SmallVector<Value>{q, k, v, e, f}))
      grads.push_back(fromF32Tensor(
          tb, g, cast<ShapedType>(like.getType()).getElementType()));
    func::ReturnOp::create(b, ret.getLoc(), grads);
    ret.erase();
    // The forward op is @F_grad's description no more.
    if (op->use_empty())
      op->erase();
    grad.setFunctionType(FunctionType::get(
        &getContext(), body.getArgumentTypes(), ValueRange(grads).getTypes()));
    grad.removeArgAttrsAttr();
    grad.removeResAttrsAttr();
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
    // A forward sharded along the sequence (attn-partition-sequence): the
    // cotangents come, and the gradients of query, key and value go,
    // sharded like its operands; the forward's own result annotations are
    // dead here.
    auto qShard = op.getQuery().getDefiningOp<shard::ShardOp>();
    auto sharded = [&](Value v) -> Value {
      if (!qShard || !v)
        return v;
      return shard::ShardOp::create(b, loc, v, qShard.getSharding())
          .getResult();
    };
    if (qShard) {
      dOut = sharded(dOut);
      dLse = sharded(dLse);
    }
    // The floating-point captured tensors of a score region (a learned
    // bias table, slopes): their gradients too, unless the pass is told
    // otherwise.
    SmallVector<Type> captures;
    if (captureGradients && !op.getScoreMod().empty())
      for (unsigned c : op.getFloatCaptures())
        captures.push_back(op.getCaptures()[c].getType());
    auto gradOp = AttentionGradOp::create(
        b, loc, op.getQuery().getType(), op.getKey().getType(),
        op.getValue().getType(), typeOr(op.getBias()), typeOr(op.getGate()),
        typeOr(op.getSinks()), typeOr(op.getAlibiSlopes()),
        typeOr(op.getProjection()), captures, op.getResult(), dOut, dLse,
        Value(), Value(), Value(), Value());
    SmallVector<Value> results(gradOp.getResults());
    for (unsigned i = 0; i < 3; ++i)
      results[i] = sharded(results[i]);
    func::ReturnOp::create(b, ret.getLoc(), results);
    ret.erase();
    for (Value result : op->getResults())
      for (Operation *user : llvm::make_early_inc_range(result.getUsers()))
        if (isa<shard::ShardOp>(user) && user->use_empty())
          user->erase();
    grad.setFunctionType(FunctionType::get(
        &getContext(), body.getArgumentTypes(), gradOp.getResultTypes()));
    // The argument and result attributes were @F's.
    grad.removeArgAttrsAttr();
    grad.removeResAttrsAttr();
  }
};

} // namespace
