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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

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

/// The one attention op of kind `OpT` (Linformer's attn.lowrank_attention,
/// Transformer-XL's attn.relative_attention) that `fn` returns, null when
/// there is none; a diagnostic when `fn` has several attention ops or does
/// not return it.
template <typename OpT>
FailureOr<OpT> specialAttentionOf(func::FuncOp fn) {
  SmallVector<OpT> ops;
  fn.walk([&](OpT op) { ops.push_back(op); });
  if (ops.empty())
    return OpT();
  int others = 0;
  fn.walk([&](Operation *op) {
    others += isa<AttentionOp, LowRankAttentionOp, RelativeAttentionOp,
                  LshAttentionOp>(op) &&
              !isa<OpT>(op);
  });
  if (ops.size() > 1 || others)
    return fn.emitError() << "attn-differentiate: @" << fn.getName()
                          << " has several attention ops; it differentiates "
                             "a function with one";
  auto ret = dyn_cast<func::ReturnOp>(fn.getBody().back().getTerminator());
  OpT op = ops.front();
  if (!ret || op->getParentOp() != fn ||
      !llvm::is_contained(ret.getOperands(), op.getResult()))
    return fn.emitError() << "attn-differentiate: @" << fn.getName()
                          << " does not return the output of its "
                          << OpT::getOperationName()
                          << " (in its body's block)";
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
      // Its one attention: Linformer's, Transformer-XL's, or an
      // attn.attention.
      FailureOr<LowRankAttentionOp> lowRank =
          specialAttentionOf<LowRankAttentionOp>(fn);
      if (failed(lowRank))
        return signalPassFailure();
      FailureOr<RelativeAttentionOp> relative =
          specialAttentionOf<RelativeAttentionOp>(fn);
      if (failed(relative))
        return signalPassFailure();
      FailureOr<LshAttentionOp> lsh = specialAttentionOf<LshAttentionOp>(fn);
      if (failed(lsh))
        return signalPassFailure();
      if (*lsh) {
        (*lsh).emitOpError()
            << "has no gradient yet (attn-differentiate takes attn.attention, "
               "attn.lowrank_attention and attn.relative_attention): @"
            << fn.getName() << " is not differentiated";
        return signalPassFailure();
      }
      FailureOr<std::pair<AttentionOp, bool>> found =
          std::pair<AttentionOp, bool>{};
      if (!*lowRank && !*relative) {
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
      else if (*relative)
        addRelativeGradient(symbols, fn, *relative, name);
      else
        addGradient(symbols, fn, found->first, found->second, name);
    }
  }

  /// `@name`, a copy of `fn` next to it, with `forward`'s copy and the
  /// output's cotangent appended as the last argument.
  template <typename OpT>
  std::tuple<func::FuncOp, OpT, Value>
  cloneForGradient(SymbolTable &symbols, func::FuncOp fn, OpT forward,
                   StringRef name) {
    IRMapping map;
    func::FuncOp grad = fn.clone(map);
    grad.setName(name);
    symbols.insert(grad, std::next(Block::iterator(fn)));
    auto op = cast<OpT>(map.lookup(forward.getOperation()));
    Value dOut = grad.getBody().back().addArgument(op.getType(), op.getLoc());
    return {grad, op, dOut};
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
    auto [grad, op, dOut] = cloneForGradient(symbols, fn, forward, name);
    Block &body = grad.getBody().back();
    Location loc = op.getLoc();
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

  /// Adds `@name`, the backward function of `fn` whose output is
  /// Transformer-XL attention `forward`, in memory linear in the sequence:
  /// a loop over blocks of `kRelativeBlock` query rows, each block an
  /// attn.attention of its rows (`q + u`) over every key (memory and
  /// segment) with its position scores as the bias (`scale (q + v) .
  /// r_{M+i-j}`, `rows x (M + L)`) and the causal mask at its offset, and
  /// that op's attn.attention_grad (the fused backward, with the bias's
  /// gradient); the position scores' gradient, gathered along the
  /// diagonals, gives the rows' dq term `scale dP R`, dR (`scale dP^T (q +
  /// v)`) and dv; du sums the content term of dq. Returns the gradients
  /// of query, key, value, pos_emb, content_bias and position_bias (the
  /// memory is a stop-gradient, as Transformer-XL trains it).
  void addRelativeGradient(SymbolTable &symbols, func::FuncOp fn,
                           RelativeAttentionOp forward, StringRef name) {
    auto [grad, op, dOut] = cloneForGradient(symbols, fn, forward, name);
    Block &body = grad.getBody().back();
    Location loc = op.getLoc();
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    ImplicitLocOpBuilder b(loc, ret);
    TensorBuilder tb(b);
    Type f32 = b.getF32Type();
    auto shape = [](Value v) {
      return cast<ShapedType>(v.getType()).getShape();
    };
    Value q = toF32Tensor(tb, op.getQuery()), k = toF32Tensor(tb, op.getKey());
    Value v = toF32Tensor(tb, op.getValue());
    Value r = toF32Tensor(tb, op.getPosEmb());
    Value u = toF32Tensor(tb, op.getContentBias());
    Value vb = toF32Tensor(tb, op.getPositionBias());
    Value dO = toF32Tensor(tb, dOut);
    int64_t batch = shape(q)[0], heads = shape(q)[1], len = shape(q)[2],
            dim = shape(q)[3], vdim = shape(v)[3];
    int64_t mem = op.getMemoryLength(), keys = mem + len;
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt(static_cast<double>(dim));
    // Every key and value: the memory, then the segment.
    auto withMemory = [&](Value memory, Value x, int64_t width) -> Value {
      if (!memory)
        return x;
      Value all = tb.empty(ArrayRef<int64_t>{batch, heads, keys, width});
      SmallVector<OpFoldResult> zero(4, b.getIndexAttr(0)),
          one(4, b.getIndexAttr(1));
      auto sizes = [&](int64_t rows) {
        return SmallVector<OpFoldResult>{
            b.getIndexAttr(batch), b.getIndexAttr(heads), b.getIndexAttr(rows),
            b.getIndexAttr(width)};
      };
      all = tensor::InsertSliceOp::create(b, toF32Tensor(tb, memory), all, zero,
                                          sizes(mem), one);
      SmallVector<OpFoldResult> at = zero;
      at[2] = b.getIndexAttr(mem);
      return tensor::InsertSliceOp::create(b, x, all, at, sizes(len), one);
    };
    Value kAll = withMemory(op.getMemoryKey(), k, dim);
    Value vAll = withMemory(op.getMemoryValue(), v, vdim);
    // The embeddings per batch row too: the position products are then
    // batched matrix products like the scores' (B x H batches).
    Value rAll =
        tb.generic({r}, {tb.map(4, {1, 2, 3})},
                   tb.empty(ArrayRef<int64_t>{batch, heads, keys, dim}),
                   tb.map(4, {0, 1, 2, 3}), "pppp",
                   [&](ImplicitLocOpBuilder &, ValueRange a) { return a[0]; });

    auto zeros = [&](ArrayRef<int64_t> s) { return tb.filled(s, 0.0); };
    SmallVector<Value> init = {zeros({batch, heads, len, dim}),
                               zeros({batch, heads, keys, dim}),
                               zeros({batch, heads, keys, vdim}),
                               zeros({heads, keys, dim}),
                               zeros({heads, dim}),
                               zeros({heads, dim})};
    int64_t block = std::min<int64_t>(kRelativeBlock, len);
    Value blocks = arith::ConstantIndexOp::create(b, (len + block - 1) / block);
    auto loop =
        scf::ForOp::create(b, arith::ConstantIndexOp::create(b, 0), blocks,
                           arith::ConstantIndexOp::create(b, 1), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      ValueRange acc = loop.getRegionIterArgs();
      relativeStep({b, tb, q, dO, u, vb, rAll, kAll, vAll, batch, heads, len,
                    dim, vdim, mem, keys, block, scale},
                   loop.getInductionVar(), acc);
    }
    // The segment's keys and values (the memory takes no gradient).
    auto segment = [&](Value x, int64_t width) -> Value {
      if (!mem)
        return x;
      return tensor::ExtractSliceOp::create(
          b, RankedTensorType::get({batch, heads, len, width}, f32), x,
          SmallVector<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0),
                                    b.getIndexAttr(mem), b.getIndexAttr(0)},
          SmallVector<OpFoldResult>{b.getIndexAttr(batch),
                                    b.getIndexAttr(heads), b.getIndexAttr(len),
                                    b.getIndexAttr(width)},
          SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
    };
    SmallVector<Value> grads = {loop.getResult(0),
                                segment(loop.getResult(1), dim),
                                segment(loop.getResult(2), vdim),
                                loop.getResult(3),
                                loop.getResult(4),
                                loop.getResult(5)};
    Value like[] = {op.getQuery(),  op.getKey(),         op.getValue(),
                    op.getPosEmb(), op.getContentBias(), op.getPositionBias()};
    for (auto [g, x] : llvm::zip(grads, like))
      g = fromF32Tensor(tb, g, cast<ShapedType>(x.getType()).getElementType());
    func::ReturnOp::create(b, ret.getLoc(), grads);
    ret.erase();
    op->erase();
    grad.setFunctionType(FunctionType::get(
        &getContext(), body.getArgumentTypes(), ValueRange(grads).getTypes()));
    grad.removeArgAttrsAttr();
    grad.removeResAttrsAttr();
  }

  /// Fills `attention`'s mask region: key `k` allowed for query `q` when
  /// `k <= q + offset[0]` (`offset` its one capture, `tensor<1xi64>`).
  static void causalMaskAt(ImplicitLocOpBuilder &b, TensorBuilder &tb,
                           AttentionOp attention, Value offset) {
    Location loc = b.getLoc();
    OpBuilder::InsertionGuard inner(b);
    Type index = b.getIndexType();
    SmallVector<Type> args(4, index);
    args.push_back(offset.getType());
    Block *mask = b.createBlock(&attention.getMaskMod(), {}, args,
                                SmallVector<Location>(args.size(), loc));
    b.setInsertionPointToStart(mask);
    Value off = arith::IndexCastOp::create(
        b, index,
        tensor::ExtractOp::create(b, mask->getArgument(4),
                                  ValueRange{tb.index(0)}));
    Value allowed = arith::CmpIOp::create(
        b, arith::CmpIPredicate::ule, mask->getArgument(3),
        arith::AddIOp::create(b, mask->getArgument(2), off));
    YieldOp::create(b, allowed);
  }

  /// What one block of Transformer-XL's gradient reads.
  struct RelativeInputs {
    ImplicitLocOpBuilder &b;
    TensorBuilder &tb;
    Value q, dO, u, vb, rAll, kAll, vAll;
    int64_t batch, heads, len, dim, vdim, mem, keys, block;
    double scale;
  };

  /// The body of addRelativeGradient's loop: block `iv`'s gradients added
  /// to `acc` (dq, dK, dV, dR, du, dv), yielded.
  void relativeStep(const RelativeInputs &in, Value iv, ValueRange acc) {
    ImplicitLocOpBuilder &b = in.b;
    TensorBuilder &tb = in.tb;
    Value q = in.q, dO = in.dO, u = in.u, vb = in.vb, rAll = in.rAll,
          kAll = in.kAll, vAll = in.vAll;
    int64_t batch = in.batch, heads = in.heads, len = in.len, dim = in.dim,
            vdim = in.vdim, mem = in.mem, keys = in.keys, block = in.block;
    double scale = in.scale;
    Location loc = b.getLoc();
    MLIRContext *ctx = b.getContext();
    Type f32 = b.getF32Type();
    auto shape = [](Value v) {
      return cast<ShapedType>(v.getType()).getShape();
    };
    Value i0 =
        arith::MulIOp::create(b, iv, arith::ConstantIndexOp::create(b, block));
    Value rows = arith::MinSIOp::create(
        b, arith::ConstantIndexOp::create(b, block),
        arith::SubIOp::create(b, arith::ConstantIndexOp::create(b, len), i0));
    auto rowsOf = [&](Value t) {
      ArrayRef<int64_t> s = shape(t);
      return tensor::ExtractSliceOp::create(
                 b, t,
                 SmallVector<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0),
                                           i0, b.getIndexAttr(0)},
                 SmallVector<OpFoldResult>{b.getIndexAttr(s[0]),
                                           b.getIndexAttr(s[1]), rows,
                                           b.getIndexAttr(s[3])},
                 SmallVector<OpFoldResult>(4, b.getIndexAttr(1)))
          .getResult();
    };
    Value qb = rowsOf(q), dOb = rowsOf(dO);
    // q + u and q + v (the biases per head).
    auto plusHead = [&](Value x, Value bias) {
      return tb.generic({x, bias}, {tb.map(4, {0, 1, 2, 3}), tb.map(4, {1, 3})},
                        tb.empty(tb.sizes(x)), tb.map(4, {0, 1, 2, 3}), "pppp",
                        [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                          return tb.add(bb, a[0], a[1]);
                        });
    };
    Value qc = plusHead(qb, u), qr = plusHead(qb, vb);
    TensorBuilder::Sizes rowsBy = tb.sizes(qb);
    auto widthOf = [&](int64_t w) {
      TensorBuilder::Sizes s = rowsBy;
      s[3] = b.getIndexAttr(w);
      return s;
    };
    // The rows' position products (q_i + v) . r_t for every distance t.
    Value pr =
        tb.contract(qr, tb.map(5, {0, 1, 2, 4}), rAll, tb.map(5, {0, 1, 3, 4}),
                    widthOf(keys), tb.map(5, {0, 1, 2, 3}), "ppppr");
    // Key j of query i (global row i0 + i) sits at distance M + i0 + i - j;
    // `from` (j, or t) indexes `src` at the other one, 0 outside.
    Value base =
        arith::AddIOp::create(b, i0, arith::ConstantIndexOp::create(b, mem));
    auto alongDiagonals = [&](Value src, int64_t width, double factor) {
      return tb.generic(
          {}, {}, tb.empty(widthOf(width)), tb.map(4, {0, 1, 2, 3}), "pppp",
          [&](ImplicitLocOpBuilder &bb, ValueRange) -> Value {
            SmallVector<Value> at;
            for (int64_t d = 0; d < 4; ++d)
              at.push_back(linalg::IndexOp::create(bb, d));
            Value pos = arith::AddIOp::create(bb, base, at[2]);
            Value other = arith::SubIOp::create(bb, pos, at[3]);
            Value inside = arith::AndIOp::create(
                bb,
                arith::CmpIOp::create(bb, arith::CmpIPredicate::sge, other,
                                      tb.index(0)),
                arith::CmpIOp::create(bb, arith::CmpIPredicate::slt, other,
                                      tb.index(keys)));
            Value clamped = arith::MaxSIOp::create(
                bb, arith::MinSIOp::create(bb, other, tb.index(keys - 1)),
                tb.index(0));
            at[3] = clamped;
            Value x = tensor::ExtractOp::create(bb, src, at);
            x = arith::MulFOp::create(bb, x, tb.f32Const(factor));
            return arith::SelectOp::create(bb, inside, x, tb.f32Const(0.0));
          });
    };
    Value posScores = alongDiagonals(pr, keys, scale);
    // The block's attention: its rows over every key, the position scores
    // as the bias, the causal mask at the block's offset.
    AttentionProblem p;
    p.query = qc;
    p.key = kAll;
    p.value = vAll;
    p.normalizer = SoftmaxAttr::get(ctx);
    p.scale = scale;
    p.explicitScale = true;
    p.modifiers.bias = posScores;
    Value offset = tensor::FromElementsOp::create(
        b, RankedTensorType::get({1}, b.getI64Type()),
        ValueRange{arith::IndexCastOp::create(b, b.getI64Type(), base)});
    p.regions.captures = {offset};
    p.results.output =
        RankedTensorType::get({batch, heads, ShapedType::kDynamic, vdim}, f32);
    auto attention = AttentionOp::create(b, p);
    causalMaskAt(b, tb, attention, offset);
    auto gradOp = AttentionGradOp::create(
        b, loc, qc.getType(), kAll.getType(), vAll.getType(),
        posScores.getType(), Type(), Type(), Type(), Type(), TypeRange(),
        attention.getResult(), dOb, Value(), Value(), Value(), Value(),
        Value());
    // The position scores' gradient by distance: dP[i, t] = scale
    // dBias[i, M + i0 + i - t].
    Value dPos = alongDiagonals(gradOp.getGradBias(), keys, scale);
    Value dqPos = tb.contract(dPos, tb.map(5, {0, 1, 2, 4}), rAll,
                              tb.map(5, {0, 1, 4, 3}), widthOf(dim),
                              tb.map(5, {0, 1, 2, 3}), "ppppr");
    Value dq = tb.elementwise({gradOp.getGradQuery(), dqPos},
                              [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                                return tb.add(bb, a[0], a[1]);
                              });
    auto plus = [&](Value x, Value y) {
      return tb.elementwise({x, y},
                            [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                              return tb.add(bb, a[0], a[1]);
                            });
    };
    // Summed over the batch and the block's rows, per head.
    auto perHead = [&](Value x, Value into) {
      return tb.generic({x}, {tb.map(4, {0, 1, 2, 3})}, into, tb.map(4, {1, 3}),
                        "rprp", [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                          return tb.add(bb, a[0], a[1]);
                        });
    };
    Value dR = tb.generic({dPos, qr},
                          {tb.map(5, {0, 1, 2, 3}), tb.map(5, {0, 1, 2, 4})},
                          acc[3], tb.map(5, {1, 3, 4}), "rprpp",
                          [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                            return tb.fma(bb, a[0], a[1], a[2]);
                          });
    Value dqAll = tensor::InsertSliceOp::create(
        b, dq, acc[0],
        SmallVector<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0), i0,
                                  b.getIndexAttr(0)},
        rowsBy, SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
    scf::YieldOp::create(b, ValueRange{dqAll, plus(acc[1], gradOp.getGradKey()),
                                       plus(acc[2], gradOp.getGradValue()), dR,
                                       perHead(gradOp.getGradQuery(), acc[4]),
                                       perHead(dqPos, acc[5])});
  }

  /// Query rows per block of Transformer-XL's gradient: its scratch is a
  /// few `rows x (M + L)` tensors per batch row and head.
  static constexpr int64_t kRelativeBlock = 64;

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
