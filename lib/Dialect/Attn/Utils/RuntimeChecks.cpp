//===- RuntimeChecks.cpp - Run-time checks of dynamic sizes ---------------===//

#include "attn-opt/Dialect/Attn/Utils/RuntimeChecks.h"

#include "attn-opt/Dialect/Attn/Utils/ArithBuilder.h"
#include "attn-opt/Dialect/Attn/Utils/TensorBuilder.h"

#include "attn-opt/Runtime/Host/RuntimeErrors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::attn;

/// The declaration of the error hook in the module of `anchor`.
static func::FuncOp errorHook(Operation *anchor) {
  auto module = isa<ModuleOp>(anchor) ? cast<ModuleOp>(anchor)
                                      : anchor->getParentOfType<ModuleOp>();
  if (auto fn = module.lookupSymbol<func::FuncOp>(kRuntimeErrorFunction))
    return fn;
  OpBuilder mb(module.getBodyRegion());
  Type i32 = mb.getI32Type(), i64 = mb.getI64Type();
  auto fn = func::FuncOp::create(mb, module.getLoc(), kRuntimeErrorFunction,
                                 mb.getFunctionType({i32, i64, i64, i64}, {}));
  fn.setPrivate();
  return fn;
}

/// `v` as i64.
static Value toI64(ImplicitLocOpBuilder &b, Value v) {
  Type i64 = b.getI64Type();
  if (v.getType() == i64)
    return v;
  if (v.getType().isIndex())
    return arith::IndexCastOp::create(b, i64, v);
  return arith::ExtSIOp::create(b, i64, v);
}

void mlir::attn::emitRuntimeError(ImplicitLocOpBuilder &b, Operation *anchor,
                                  int32_t code, Value a, Value bValue,
                                  Value c) {
  func::FuncOp hook = errorHook(anchor);
  Value codeValue = arith::ConstantOp::create(b, b.getI32IntegerAttr(code));
  func::CallOp::create(
      b, hook,
      ValueRange{codeValue, toI64(b, a), toI64(b, bValue), toI64(b, c)});
}

namespace {
/// Accumulates the checks' verdict.
struct Checker : KernelArith {
  Operation *anchor;
  Value ok;

  /// Reports `code` with the payload when `bad` holds; folds it into ok.
  void check(Value bad, int32_t code, Value a, Value bValue, Value c) {
    scf::IfOp::create(b, bad, [&](OpBuilder &, Location) {
      emitRuntimeError(b, anchor, code, a, bValue, c);
      scf::YieldOp::create(b);
    });
    fold(bad);
  }
  void fold(Value bad) {
    Value good = arith::XOrIOp::create(
        b, bad, arith::ConstantOp::create(b, b.getBoolAttr(true)));
    ok = ok ? arith::AndIOp::create(b, ok, good).getResult() : good;
  }

  /// packEntry(operand, i) as an i64 value.
  Value entry(int64_t operand, Value i) {
    Value i64v = arith::IndexCastOp::create(b, b.getI64Type(), i);
    return arith::OrIOp::create(b, i64(packEntry(operand, 0)), i64v);
  }

  /// Every entry of the i32 `lengths` (ODS operand `operand`) lies in
  /// [0, max].
  void lengths(int64_t operand, Value lengths, Value max) {
    Value n = tensor::DimOp::create(b, lengths, 0);
    Value i32Max = arith::IndexCastOp::create(b, b.getI32Type(), max);
    auto loop = scf::ForOp::create(
        b, idx(0), n, idx(1),
        ValueRange{arith::ConstantOp::create(b, b.getBoolAttr(false))},
        [&](OpBuilder &, Location, Value i, ValueRange any) {
          Value len = tensor::ExtractOp::create(b, lengths, ValueRange{i});
          Value bad = arith::OrIOp::create(
              b,
              arith::CmpIOp::create(
                  b, arith::CmpIPredicate::slt, len,
                  arith::ConstantOp::create(b, b.getI32IntegerAttr(0))),
              arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, len, i32Max));
          scf::IfOp::create(b, bad, [&](OpBuilder &, Location) {
            emitRuntimeError(
                b, anchor, static_cast<int32_t>(RuntimeError::LengthOutOfRange),
                entry(operand, i), len, max);
            scf::YieldOp::create(b);
          });
          scf::YieldOp::create(
              b, ValueRange{arith::OrIOp::create(b, any[0], bad)});
        });
    fold(loop.getResult(0));
  }

  /// The entries of page table `table` (`B x P_max`) that sequences use
  /// (the first ceil(lengths[b] / page), at most P_max) lie in [0, pages).
  void pages(Value table, Value lengths, int64_t page, Value numPages) {
    Value rows = tensor::DimOp::create(b, table, 0);
    Value cols = tensor::DimOp::create(b, table, 1);
    Value pages64 = arith::IndexCastOp::create(b, b.getI64Type(), numPages);
    // A pool without pages (code that gathers reads page 0).
    check(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, pages64, i64(0)),
          static_cast<int32_t>(RuntimeError::PageOutOfRange),
          i64(packEntry(kPageTableOperand, 0)), i64(0), pages64);
    auto outer = scf::ForOp::create(
        b, idx(0), rows, idx(1),
        ValueRange{arith::ConstantOp::create(b, b.getBoolAttr(false))},
        [&](OpBuilder &, Location, Value r, ValueRange anyOuter) {
          Value len = arith::IndexCastOp::create(
              b, b.getIndexType(),
              tensor::ExtractOp::create(b, lengths, ValueRange{r}));
          len = arith::MaxSIOp::create(b, len, idx(0));
          Value used = arith::MinSIOp::create(
              b, arith::CeilDivSIOp::create(b, len, idx(page)), cols);
          auto inner = scf::ForOp::create(
              b, idx(0), used, idx(1), ValueRange{anyOuter[0]},
              [&](OpBuilder &, Location, Value p, ValueRange any) {
                Value e = arith::ExtSIOp::create(
                    b, b.getI64Type(),
                    tensor::ExtractOp::create(b, table, ValueRange{r, p}));
                Value bad = arith::OrIOp::create(
                    b,
                    arith::CmpIOp::create(b, arith::CmpIPredicate::slt, e,
                                          i64(0)),
                    arith::CmpIOp::create(b, arith::CmpIPredicate::sge, e,
                                          pages64));
                scf::IfOp::create(b, bad, [&](OpBuilder &, Location) {
                  Value flat = arith::AddIOp::create(
                      b, arith::MulIOp::create(b, r, cols), p);
                  emitRuntimeError(
                      b, anchor,
                      static_cast<int32_t>(RuntimeError::PageOutOfRange),
                      entry(kPageTableOperand, flat), e, pages64);
                  scf::YieldOp::create(b);
                });
                scf::YieldOp::create(
                    b, ValueRange{arith::OrIOp::create(b, any[0], bad)});
              });
          scf::YieldOp::create(b, inner.getResults());
        });
    fold(outer.getResult(0));
  }

  /// `offsets` (ODS operand `operand`) has entries, starts at 0, does not
  /// decrease and ends within `rows`.
  void offsets(int64_t operand, Value offsets, Value rows) {
    Value n = tensor::DimOp::create(b, offsets, 0);
    Value empty = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, n, idx(0));
    check(empty, static_cast<int32_t>(RuntimeError::OffsetsEmpty),
          i64(packEntry(operand, 0)), i64(0), i64(0));
    // The entries are read only when there are some.
    auto nonEmpty = scf::IfOp::create(
        b, empty,
        [&](OpBuilder &, Location) {
          scf::YieldOp::create(
              b, ValueRange{arith::ConstantOp::create(b, b.getBoolAttr(true))});
        },
        [&](OpBuilder &, Location) {
          Checker inner{KernelArith(b), anchor, Value()};
          inner.entries(operand, offsets, n, rows);
          scf::YieldOp::create(b, ValueRange{inner.ok});
        });
    Value good = nonEmpty.getResult(0);
    ok = ok ? arith::AndIOp::create(b, ok, good).getResult() : good;
  }

  /// The checks of `offsets`' `n` > 0 entries.
  void entries(int64_t operand, Value offsets, Value n, Value rows) {
    Value first = tensor::ExtractOp::create(b, offsets, ValueRange{idx(0)});
    check(arith::CmpIOp::create(
              b, arith::CmpIPredicate::ne, first,
              arith::ConstantOp::create(b, b.getI32IntegerAttr(0))),
          static_cast<int32_t>(RuntimeError::OffsetsStart),
          i64(packEntry(operand, 0)), first, i64(0));
    auto loop = scf::ForOp::create(
        b, idx(1), n, idx(1),
        ValueRange{arith::ConstantOp::create(b, b.getBoolAttr(false))},
        [&](OpBuilder &, Location, Value i, ValueRange any) {
          Value prev = tensor::ExtractOp::create(
              b, offsets, ValueRange{arith::SubIOp::create(b, i, idx(1))});
          Value cur = tensor::ExtractOp::create(b, offsets, ValueRange{i});
          Value bad =
              arith::CmpIOp::create(b, arith::CmpIPredicate::slt, cur, prev);
          scf::IfOp::create(b, bad, [&](OpBuilder &, Location) {
            emitRuntimeError(
                b, anchor,
                static_cast<int32_t>(RuntimeError::OffsetsDecreasing),
                entry(operand, i), cur, prev);
            scf::YieldOp::create(b);
          });
          scf::YieldOp::create(
              b, ValueRange{arith::OrIOp::create(b, any[0], bad)});
        });
    fold(loop.getResult(0));
    Value lastIndex = arith::SubIOp::create(b, n, idx(1));
    Value last = tensor::ExtractOp::create(b, offsets, ValueRange{lastIndex});
    Value rows32 = arith::IndexCastOp::create(b, b.getI32Type(), rows);
    check(arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, last, rows32),
          static_cast<int32_t>(RuntimeError::OffsetsBeyond),
          entry(operand, lastIndex), last, rows);
  }
};
} // namespace

Value mlir::attn::emitRuntimeChecks(ImplicitLocOpBuilder &b, AttentionOp op) {
  auto sizeChecks = op.getRuntimeSizeChecks();
  if (sizeChecks.empty() && !op.isVarlen())
    return Value();
  // Declare the hook now: inside the checks' regions the module is not
  // reachable from the builder.
  (void)errorHook(op);
  Checker c{KernelArith(b), op, Value()};
  for (auto [first, second] : sizeChecks) {
    Value x = op.getODSOperands(first.first).front();
    Value y = op.getODSOperands(second.first).front();
    Value dx = tensor::DimOp::create(b, x, first.second);
    Value dy = tensor::DimOp::create(b, y, second.second);
    c.check(
        arith::CmpIOp::create(b, arith::CmpIPredicate::ne, dx, dy),
        static_cast<int32_t>(RuntimeError::SizeMismatch),
        c.i64(packSizeMismatch(sizeOperandDim(first.first, first.second),
                               sizeOperandDim(second.first, second.second))),
        dx, dy);
  }
  AttentionProblem p = op.getProblem();
  const AttentionSequences &seq = p.sequences;
  if (Value lq = seq.queryLengths)
    c.lengths(kQueryLengthsOperand, lq, tensor::DimOp::create(b, p.query, 2));
  if (Value pt = p.paging.pageTable) {
    // Cache lengths within the table's keys; the pages they use exist.
    Value keys = arith::MulIOp::create(b, tensor::DimOp::create(b, pt, 1),
                                       c.idx(p.paging.pageSize));
    c.lengths(kKeyLengthsOperand, seq.keyLengths, keys);
    c.pages(pt, seq.keyLengths, p.paging.pageSize,
            tensor::DimOp::create(b, p.key, 0));
  } else if (Value lk = seq.keyLengths) {
    c.lengths(kKeyLengthsOperand, lk, tensor::DimOp::create(b, p.key, 2));
  }
  if (Value cq = seq.queryOffsets) {
    c.offsets(kQueryOffsetsOperand, cq, tensor::DimOp::create(b, p.query, 2));
    c.offsets(kKeyOffsetsOperand, seq.keyOffsets,
              tensor::DimOp::create(b, p.key, 2));
  }
  return c.ok;
}

SmallVector<Value>
mlir::attn::buildUnderRuntimeChecks(ImplicitLocOpBuilder &b, AttentionOp op,
                                    function_ref<SmallVector<Value>()> body) {
  Value ok = emitRuntimeChecks(b, op);
  if (!ok)
    return body();
  TensorBuilder tb(b);
  auto guarded = scf::IfOp::create(
      b, ok, [&](OpBuilder &, Location) { scf::YieldOp::create(b, body()); },
      [&](OpBuilder &, Location) {
        // The results of a failed check are unspecified.
        TensorBuilder::Sizes sizes = tb.sizes(op.getQuery());
        sizes[3] = tb.size(op.getValue(), 3);
        SmallVector<Value> empty = {
            tb.empty(sizes, op.getType().getElementType())};
        if (op.getLse())
          empty.push_back(
              tb.empty(ArrayRef(sizes).take_front(3), b.getF32Type()));
        scf::YieldOp::create(b, empty);
      });
  return guarded.getResults();
}

Value mlir::attn::buildUnderRuntimeChecks(ImplicitLocOpBuilder &b,
                                          AttentionOp op,
                                          function_ref<Value()> body) {
  assert(!op.getLse() && "the log-sum-exp result needs the other overload");
  return buildUnderRuntimeChecks(
      b, op, [&]() -> SmallVector<Value> { return {body()}; })[0];
}

Value mlir::attn::emitGradientChecks(ImplicitLocOpBuilder &b,
                                     AttentionGradOp op) {
  AttentionOp fwd = op.getForwardOp();
  Value ok = emitRuntimeChecks(b, fwd);
  Value query = fwd.getQuery();
  auto queryType = cast<RankedTensorType>(query.getType());
  auto sameSizes = [&](Value cotangent, int64_t first) {
    auto type = cast<RankedTensorType>(cotangent.getType());
    // (Batch and rows, dims 0 and 2 of both; heads and dims are static.)
    for (int64_t d : {0, 2}) {
      if (!type.isDynamicDim(d) && !queryType.isDynamicDim(d))
        continue; // the verifier's
      Value x = tensor::DimOp::create(b, cotangent, d);
      Value y = tensor::DimOp::create(b, query, d);
      Value differ = arith::CmpIOp::create(b, arith::CmpIPredicate::ne, x, y);
      scf::IfOp::create(b, differ, [&](OpBuilder &, Location) {
        emitRuntimeError(b, op,
                         static_cast<int32_t>(RuntimeError::GradientSize),
                         arith::ConstantIndexOp::create(b, first + d), x, y);
        scf::YieldOp::create(b);
      });
      Value same = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, y);
      ok = ok ? Value(arith::AndIOp::create(b, ok, same)) : same;
    }
  };
  sameSizes(op.getGradOutput(), 0);
  if (Value dlse = op.getGradLse())
    sameSizes(dlse, 8);
  return ok;
}
