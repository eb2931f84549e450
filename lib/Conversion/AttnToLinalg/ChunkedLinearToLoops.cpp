//===- ChunkedLinearToLoops.cpp - The chunked prefix form as loops --------===//
//
// attn.chunked_linear to an scf.forall over (batch, key/value head) holding
// a sequential scf.for over chunks that carries the running state:
//
//   for each chunk [o, o + n) (the last may be shorter):
//     A    = Qc Kc^T . mask            (G x n x n, causal and/or segments)
//     num += A Vc + [carry] Qc S       (G x n x Dv)
//     den += A 1  + [carry] Qc z       (G x n)
//     S    = [keep] S + Kc^T Vc        (F x Dv, only keys of the last segment)
//     z    = [keep] z + Kc^T 1
//
// then O = num / (den + eps) (0 where that is 0), gate, rounding. Without
// `causal` a second sweep from the end adds the following chunks. With
// segment ids, [carry] and [keep] compare the ids at the chunk boundaries;
// that is exact for non-decreasing ids, which the code checks first,
// falling back to the quadratic form otherwise.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Conversion/AttnToLinalg/AttentionLowering.h"

#include "attn-opt/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERCHUNKEDLINEAR
#include "attn-opt/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Marks the copy of the op kept as the fallback for unsorted segment ids,
/// which the reference lowering (convert-attn-to-linalg) takes.
constexpr StringLiteral kFallbackAttr = "attn.quadratic_fallback";

struct ChunkedLowering {
  ImplicitLocOpBuilder &b;
  TensorBuilder tb;
  ChunkedLinearOp op;
  int64_t kvHeads, group, features, valueDim, chunk;
  /// Batch and length, static or dynamic.
  OpFoldResult batch, len;
  bool causal;
  Value segments; // B x L ids, or null
  Type idType;

  ChunkedLowering(ImplicitLocOpBuilder &b, ChunkedLinearOp op)
      : b(b), tb(b), op(op) {
    ArrayRef<int64_t> qs = shapeOf(op.getQueryFeatures());
    ArrayRef<int64_t> ks = shapeOf(op.getKeyFeatures());
    batch = tb.size(op.getQueryFeatures(), 0);
    kvHeads = ks[1];
    group = qs[1] / ks[1];
    len = tb.size(op.getQueryFeatures(), 2);
    features = qs[3];
    valueDim = shapeOf(op.getValue())[3];
    chunk = op.getChunkSize();
    if (std::optional<int64_t> l = getConstantIntValue(len))
      chunk = std::max<int64_t>(1, std::min<int64_t>(chunk, *l));
    causal = op.getCausal();
    segments = op.getSegments();
    if (segments)
      idType = cast<RankedTensorType>(segments.getType()).getElementType();
  }

  OpFoldResult fold(int64_t v) { return b.getIndexAttr(v); }

  /// A slice of `src` at `offsets` with `sizes`, dropping the unit
  /// dimensions listed in `dropped`.
  Value slice(Value src, ArrayRef<OpFoldResult> offsets,
              ArrayRef<OpFoldResult> sizes, ArrayRef<int64_t> dropped) {
    SmallVector<int64_t> shape;
    for (auto [i, s] : llvm::enumerate(sizes))
      if (!llvm::is_contained(dropped, static_cast<int64_t>(i)))
        shape.push_back(getConstantIntValue(s).value_or(ShapedType::kDynamic));
    auto type = RankedTensorType::get(
        shape, cast<RankedTensorType>(src.getType()).getElementType());
    SmallVector<OpFoldResult> strides(sizes.size(), fold(1));
    return tensor::ExtractSliceOp::create(b, type, src, offsets, sizes,
                                          strides);
  }

  Value insert(Value src, Value dest, ArrayRef<OpFoldResult> offsets,
               ArrayRef<OpFoldResult> sizes) {
    SmallVector<OpFoldResult> strides(sizes.size(), fold(1));
    return tensor::InsertSliceOp::create(b, src, dest, offsets, sizes, strides);
  }

  /// The identity maps and iterators of an elementwise op on `x`.
  std::pair<AffineMap, std::string> identity(Value x) {
    int64_t rank = shapeOf(x).size();
    return {b.getMultiDimIdentityMap(rank), std::string(rank, 'p')};
  }

  /// `x + y`, updating `x` in place (destination-passing).
  Value add(Value x, Value y) {
    auto [id, iters] = identity(x);
    return tb.generic({y}, {id}, x, id, iters,
                      [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                        return tb.add(bb, a[1], a[0]);
                      });
  }

  /// `x * [flag]` for an i1 scalar `flag`, in place.
  Value keepIf(Value x, Value flag) {
    auto [id, iters] = identity(x);
    return tb.generic(
        {}, {}, x, id, iters, [&](ImplicitLocOpBuilder &bb, ValueRange a) {
          return arith::SelectOp::create(bb, flag, a[0], tb.f32Const(0))
              .getResult();
        });
  }

  /// Segment id at position `pos` (index) of the current batch row.
  Value idAt(Value segRow, Value pos) {
    return tensor::ExtractOp::create(b, segRow, ValueRange{pos});
  }

  /// The state carried by a sweep.
  struct Carry {
    Value num, den, state, keySum, id;
  };

  /// Processes the chunk at `offset` (index) of size `n` (static, or the
  /// dynamic size of a ragged last chunk). `forward`: the state holds
  /// preceding keys and the intra-chunk part is added; otherwise the state
  /// holds following keys.
  Carry step(Value q, Value k, Value v, Value segRow, Value offset,
             OpFoldResult n, bool forward, Carry c) {
    OpFoldResult off = offset;
    OpFoldResult g = fold(group), f = fold(features), dv = fold(valueDim);
    Value qc = slice(q, {fold(0), off, fold(0)}, {g, n, f}, {});
    Value kc = slice(k, {off, fold(0)}, {n, f}, {});
    Value vc = slice(v, {off, fold(0)}, {n, dv}, {});
    Value segC = segments ? slice(segRow, {off}, {n}, {}) : Value();

    Value numC = tb.filled({g, n, dv}, 0.0);
    Value denC = tb.filled({g, n}, 0.0);
    if (forward) {
      // A[g,i,j] = sum_f q[g,i,f] k[j,f], masked; loops (g, i, f, j).
      Value kcT = tb.transpose(kc, {1, 0});
      Value a = tb.contract(qc, tb.map(4, {0, 1, 2}), kcT, tb.map(4, {2, 3}),
                            {g, n, n}, tb.map(4, {0, 1, 3}), "pprp");
      SmallVector<Value> ins = {a};
      SmallVector<AffineMap> maps = {tb.map(3, {0, 1, 2})};
      if (segments) {
        ins.append({segC, segC});
        maps.append({tb.map(3, {1}), tb.map(3, {2})});
      }
      a = tb.generic(
          ins, maps, tb.empty({g, n, n}), tb.map(3, {0, 1, 2}), "ppp",
          [&](ImplicitLocOpBuilder &bb, ValueRange x) {
            Value ok;
            if (causal)
              ok = arith::CmpIOp::create(bb, arith::CmpIPredicate::ule,
                                         linalg::IndexOp::create(bb, 2),
                                         linalg::IndexOp::create(bb, 1));
            if (segments) {
              Value same = arith::CmpIOp::create(bb, arith::CmpIPredicate::eq,
                                                 x[1], x[2]);
              ok = ok ? arith::AndIOp::create(bb, ok, same).getResult() : same;
            }
            return arith::SelectOp::create(bb, ok, x[0], tb.f32Const(0))
                .getResult();
          });
      // num = A V (loops g, i, j, e), den = A 1.
      numC = tb.weightedSum(a, tb.map(4, {0, 1, 2}), vc, tb.map(4, {2, 3}),
                            {g, n, dv}, tb.map(4, {0, 1, 3}), "pprp");
      denC = tb.reduceLast(a, 0.0, [&](ImplicitLocOpBuilder &bb, ValueRange x) {
        return tb.add(bb, x[1], x[0]);
      });
    }
    // Inter-chunk: q S and q z, for queries in the state's segment.
    Value interNum =
        tb.contract(qc, tb.map(4, {0, 1, 2}), c.state, tb.map(4, {2, 3}),
                    {g, n, dv}, tb.map(4, {0, 1, 3}), "pprp");
    Value interDen =
        tb.contract(qc, tb.map(3, {0, 1, 2}), c.keySum, tb.map(3, {2}), {g, n},
                    tb.map(3, {0, 1}), "ppr");
    if (segments) {
      auto gateBySegment = [&](Value x) {
        int64_t rank = shapeOf(x).size();
        SmallVector<int64_t> all;
        for (int64_t d = 0; d < rank; ++d)
          all.push_back(d);
        return tb.generic(
            {x, segC}, {tb.map(rank, all), tb.map(rank, {1})},
            tb.empty(tb.sizes(x)), tb.map(rank, all), std::string(rank, 'p'),
            [&](ImplicitLocOpBuilder &bb, ValueRange a) {
              Value same = arith::CmpIOp::create(bb, arith::CmpIPredicate::eq,
                                                 a[1], c.id);
              return arith::SelectOp::create(bb, same, a[0], tb.f32Const(0))
                  .getResult();
            });
      };
      interNum = gateBySegment(interNum);
      interDen = gateBySegment(interDen);
    }
    numC = add(numC, interNum);
    denC = add(denC, interDen);
    Carry next = c;
    Value numSlice = slice(c.num, {fold(0), off, fold(0)}, {g, n, dv}, {});
    Value denSlice = slice(c.den, {fold(0), off}, {g, n}, {});
    next.num =
        insert(add(numSlice, numC), c.num, {fold(0), off, fold(0)}, {g, n, dv});
    next.den = insert(add(denSlice, denC), c.den, {fold(0), off}, {g, n});

    // State update with this chunk's keys (of the segment that continues).
    Value kSel = kc;
    if (segments) {
      Value edge = forward
                       ? arith::SubIOp::create(
                             b, arith::AddIOp::create(b, offset, tb.indexOf(n)),
                             tb.index(1))
                       : offset;
      Value edgeId = idAt(segRow, edge);
      kSel = tb.generic(
          {kc, segC}, {tb.map(2, {0, 1}), tb.map(2, {0})}, tb.empty({n, f}),
          tb.map(2, {0, 1}), "pp", [&](ImplicitLocOpBuilder &bb, ValueRange a) {
            Value same = arith::CmpIOp::create(bb, arith::CmpIPredicate::eq,
                                               a[1], edgeId);
            return arith::SelectOp::create(bb, same, a[0], tb.f32Const(0))
                .getResult();
          });
      Value keep =
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, edgeId, c.id);
      next.state = keepIf(c.state, keep);
      next.keySum = keepIf(c.keySum, keep);
      next.id = edgeId;
    }
    // S += Kc^T Vc (loops j, f, e), z += Kc^T 1 (loops j, f).
    Value dState =
        tb.weightedSum(kSel, tb.map(3, {0, 1}), vc, tb.map(3, {0, 2}),
                       {features, valueDim}, tb.map(3, {1, 2}), "rpp");
    Value dSum = tb.generic({kSel}, {tb.map(2, {0, 1})},
                            tb.filled({features}, 0.0), tb.map(2, {1}), "rp",
                            [&](ImplicitLocOpBuilder &bb, ValueRange a) {
                              return tb.add(bb, a[1], a[0]);
                            });
    next.state = add(next.state, dState);
    next.keySum = add(next.keySum, dSum);
    return next;
  }

  /// One sweep over all chunks, forward or backward.
  Carry sweep(Value q, Value k, Value v, Value segRow, bool forward, Carry c) {
    Value lenV = tb.indexOf(len);
    std::optional<int64_t> staticLen = getConstantIntValue(len);
    OpFoldResult full, rest;
    if (staticLen) {
      full = fold(*staticLen / chunk);
      rest = fold(*staticLen % chunk);
    } else {
      full = arith::DivUIOp::create(b, lenV, tb.index(chunk)).getResult();
      rest = arith::RemUIOp::create(b, lenV, tb.index(chunk)).getResult();
    }
    auto carryValues = [](const Carry &x) {
      SmallVector<Value> vals = {x.num, x.den, x.state, x.keySum};
      if (x.id)
        vals.push_back(x.id);
      return vals;
    };
    auto fromValues = [&](ValueRange vals) {
      Carry x{vals[0], vals[1], vals[2], vals[3], Value()};
      if (segments)
        x.id = vals[4];
      return x;
    };
    // The ragged chunk comes last going forward, first going backward; with
    // a dynamic length it may be empty, and is skipped then.
    auto ragged = [&](Carry x) {
      Value at = arith::MulIOp::create(b, tb.indexOf(full), tb.index(chunk));
      if (std::optional<int64_t> r = getConstantIntValue(rest)) {
        if (*r == 0)
          return x;
        return step(q, k, v, segRow, at, rest, forward, x);
      }
      Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ne,
                                        tb.indexOf(rest), tb.index(0));
      auto ifOp = scf::IfOp::create(
          b, any,
          [&](OpBuilder &, Location) {
            scf::YieldOp::create(
                b, carryValues(step(q, k, v, segRow, at, rest, forward, x)));
          },
          [&](OpBuilder &, Location) {
            scf::YieldOp::create(b, carryValues(x));
          });
      return fromValues(ifOp.getResults());
    };
    if (!forward)
      c = ragged(c);
    if (getConstantIntValue(full) != 0) {
      Value fullV = tb.indexOf(full);
      auto loop = scf::ForOp::create(
          b, tb.index(0), fullV, tb.index(1), carryValues(c),
          [&](OpBuilder &nested, Location loc, Value iv, ValueRange args) {
            ImplicitLocOpBuilder ib(loc, nested);
            ChunkedLowering inner(ib, op);
            Value index = iv;
            if (!forward)
              index = arith::SubIOp::create(
                  ib, arith::SubIOp::create(ib, fullV, inner.tb.index(1)), iv);
            Value offset =
                arith::MulIOp::create(ib, index, inner.tb.index(chunk));
            Carry next = inner.step(q, k, v, segRow, offset, fold(chunk),
                                    forward, fromValues(args));
            scf::YieldOp::create(ib, carryValues(next));
          });
      c = fromValues(loop.getResults());
    }
    if (forward)
      c = ragged(c);
    return c;
  }

  /// The chunked computation: num (5-D) and den (5-D minus Dv).
  std::pair<Value, Value> chunkedSums() {
    Value q5 = splitHeads(tb, op.getQueryFeatures(), kvHeads);
    OpFoldResult h = fold(kvHeads), g = fold(group), f = fold(features),
                 dv = fold(valueDim);
    Value numInit = tb.filled({batch, h, g, len, dv}, 0.0);
    Value denInit = tb.filled({batch, h, g, len}, 0.0);
    SmallVector<OpFoldResult> ubs = {batch, h};
    auto forall = scf::ForallOp::create(b, ubs, ValueRange{numInit, denInit},
                                        std::nullopt);
    Block *body = forall.getBody();
    Value bi = body->getArgument(0), hi = body->getArgument(1);
    Value numAll = body->getArgument(2), denAll = body->getArgument(3);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(body);
    OpFoldResult one = fold(1);
    Value q = slice(q5, {bi, hi, fold(0), fold(0), fold(0)},
                    {one, one, g, len, f}, {0, 1});
    Value k = slice(op.getKeyFeatures(), {bi, hi, fold(0), fold(0)},
                    {one, one, len, f}, {0, 1});
    Value v = slice(op.getValue(), {bi, hi, fold(0), fold(0)},
                    {one, one, len, dv}, {0, 1});
    Value segRow;
    if (segments)
      segRow = slice(segments, {bi, fold(0)}, {one, len}, {0});
    Carry c;
    c.num = slice(numAll, {bi, hi, fold(0), fold(0), fold(0)},
                  {one, one, g, len, dv}, {0, 1});
    c.den =
        slice(denAll, {bi, hi, fold(0), fold(0)}, {one, one, g, len}, {0, 1});
    auto freshState = [&](Carry &x) {
      x.state = tb.filled({f, dv}, 0.0);
      x.keySum = tb.filled({f}, 0.0);
      if (segments)
        x.id = idAt(segRow, tb.index(0));
    };
    freshState(c);
    c = sweep(q, k, v, segRow, /*forward=*/true, c);
    if (!causal) {
      freshState(c);
      if (segments)
        c.id = idAt(segRow,
                    arith::SubIOp::create(b, tb.indexOf(len), tb.index(1)));
      c = sweep(q, k, v, segRow, /*forward=*/false, c);
    }
    b.setInsertionPointToStart(forall.getTerminator().getBody());
    SmallVector<OpFoldResult> strides5(5, fold(1)), strides4(4, fold(1));
    tensor::ParallelInsertSliceOp::create(
        b, c.num, numAll,
        SmallVector<OpFoldResult>{bi, hi, fold(0), fold(0), fold(0)},
        SmallVector<OpFoldResult>{one, one, g, len, dv}, strides5);
    tensor::ParallelInsertSliceOp::create(
        b, c.den, denAll, SmallVector<OpFoldResult>{bi, hi, fold(0), fold(0)},
        SmallVector<OpFoldResult>{one, one, g, len}, strides4);
    return {forall.getResult(0), forall.getResult(1)};
  }

  /// O = num / (den + eps) (num when unnormalized), gate, rounding, heads
  /// merged.
  Value finish(Value num, Value den) {
    Value o = op.getUnnormalized()
                  ? num
                  : divideRows(tb, num, den, op.getEps().convertToDouble());
    o = applyGate(tb, o, op.getGate(), kvHeads);
    return finishHeads(tb, o,
                       cast<RankedTensorType>(op.getType()).getElementType());
  }

  /// i1: every row of segment ids is non-decreasing.
  Value idsSorted() {
    if (getConstantIntValue(len).value_or(2) < 2)
      return arith::ConstantOp::create(b, b.getBoolAttr(true));
    // An empty slice when the (dynamic) length is below 2: sorted.
    Value lenV = tb.indexOf(len);
    OpFoldResult pairs =
        arith::MaxSIOp::create(b, arith::SubIOp::create(b, lenV, tb.index(1)),
                               tb.index(0))
            .getResult();
    if (std::optional<int64_t> l = getConstantIntValue(len))
      pairs = fold(*l - 1);
    Value prev = slice(segments, {fold(0), fold(0)}, {batch, pairs}, {});
    Value next = slice(segments, {fold(0), fold(1)}, {batch, pairs}, {});
    Value ok = tb.generic(
        {prev, next}, {tb.map(2, {0, 1}), tb.map(2, {0, 1})},
        tb.filled(ArrayRef<OpFoldResult>{}, 1, b.getI1Type()), tb.map(2, {}),
        "rr", [&](ImplicitLocOpBuilder &bb, ValueRange a) -> Value {
          Value le =
              arith::CmpIOp::create(bb, arith::CmpIPredicate::sle, a[0], a[1]);
          return arith::AndIOp::create(bb, a[2], le);
        });
    return tensor::ExtractOp::create(b, ok, ValueRange{});
  }

  Value lower() {
    if (!segments) {
      auto [num, den] = chunkedSums();
      return finish(num, den);
    }
    // Exact only for non-decreasing ids: check, else the quadratic form.
    Value sorted = idsSorted();
    auto ifOp = scf::IfOp::create(
        b, sorted,
        [&](OpBuilder &nested, Location loc) {
          ImplicitLocOpBuilder ib(loc, nested);
          ChunkedLowering inner(ib, op);
          auto [num, den] = inner.chunkedSums();
          scf::YieldOp::create(ib, inner.finish(num, den));
        },
        [&](OpBuilder &nested, Location loc) {
          ImplicitLocOpBuilder ib(loc, nested);
          scf::YieldOp::create(ib, quadraticFallback(ib));
        });
    return ifOp.getResult(0);
  }

  /// The quadratic form, through the reference lowering of the op.
  Value quadraticFallback(ImplicitLocOpBuilder &ib) {
    auto clone = cast<ChunkedLinearOp>(ib.clone(*op));
    clone->setAttr(kFallbackAttr, ib.getUnitAttr());
    return clone.getResult();
  }
};

struct LowerChunkedLinearPass
    : public attn::impl::AttnLowerChunkedLinearBase<LowerChunkedLinearPass> {
  void runOnOperation() override {
    SmallVector<ChunkedLinearOp> ops;
    getOperation()->walk([&](ChunkedLinearOp op) {
      if (!op->hasAttr(kFallbackAttr))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (ChunkedLinearOp op : ops) {
      rewriter.setInsertionPoint(op);
      ImplicitLocOpBuilder b(op.getLoc(), rewriter);
      if (op.getReverse()) {
        TensorBuilder tb(b);
        ChunkedLinearOp forward;
        rewriter.replaceOp(op, expandReversedChunkedLinear(tb, op, forward));
        // (The forward op's lowering before it, before the reversal of
        // its result.)
        op = forward;
        b.setInsertionPoint(op);
      }
      ChunkedLowering lowering(b, op);
      rewriter.replaceOp(op, lowering.lower());
    }
  }
};

} // namespace
