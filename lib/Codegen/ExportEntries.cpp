//===- ExportEntries.cpp - Entries for the C ABI of kernel libraries ------===//

#include "attn-opt/Codegen/Passes.h"
#include "attn-opt/Dialect/Attn/Utils/RuntimeChecks.h"
#include "attn-opt/Runtime/Host/RuntimeErrors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEXPORTENTRIES
#define GEN_PASS_DEF_ATTNFORWARDENTRYOUTPUTS
#include "attn-opt/Codegen/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

bool mlir::attn::isEntryElementType(Type type) {
  if (type.isF16() || type.isBF16() || type.isF32() || type.isF64())
    return true;
  auto integer = dyn_cast<IntegerType>(type);
  return integer && integer.isSignless() &&
         llvm::is_contained({1u, 8u, 16u, 32u, 64u}, integer.getWidth());
}

/// The (argument, dimension) of `fn` whose size dimension `dim` of `value`
/// has, following what the IR states; (-1, -1) if it cannot tell. Ops
/// built to ask ReifyRankedShapedTypeOpInterface are erased again.
std::pair<int64_t, int64_t>
mlir::attn::traceEntrySize(func::FuncOp fn, Value value, int64_t dim) {
  constexpr std::pair<int64_t, int64_t> unknown = {-1, -1};
  for (int step = 0; step < 64; ++step) {
    if (auto arg = dyn_cast<BlockArgument>(value))
      return arg.getOwner() == &fn.getBody().front()
                 ? std::pair<int64_t, int64_t>(arg.getArgNumber(), dim)
                 : unknown;
    Operation *def = value.getDefiningOp();
    auto result = cast<OpResult>(value);
    if (auto castOp = dyn_cast<tensor::CastOp>(def)) {
      value = castOp.getSource();
      continue;
    }
    // A value sharded along the sequence (attn-partition-sequence): each
    // rank's sizes are its chunk's, as the source's on that rank.
    if (auto shardOp = dyn_cast<shard::ShardOp>(def)) {
      value = shardOp.getSrc();
      continue;
    }
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(def)) {
      value = dps.getTiedOpOperand(result)->get();
      continue;
    }
    auto reify = dyn_cast<ReifyRankedShapedTypeOpInterface>(def);
    if (!reify)
      return unknown;
    // Ask for the sizes, remember the answer, erase what was built.
    struct Recorder : public OpBuilder::Listener {
      SmallVector<Operation *> created;
      void notifyOperationInserted(Operation *op,
                                   OpBuilder::InsertPoint) override {
        created.push_back(op);
      }
    } recorder;
    OpBuilder b(def);
    b.setListener(&recorder);
    ReifiedRankedShapedTypeDims sizes;
    std::optional<std::pair<Value, int64_t>> next;
    if (succeeded(reify.reifyResultShapes(b, sizes)) &&
        result.getResultNumber() < sizes.size()) {
      OpFoldResult size = sizes[result.getResultNumber()][dim];
      if (auto v = dyn_cast<Value>(size))
        if (auto dimOp = v.getDefiningOp<tensor::DimOp>())
          if (std::optional<int64_t> d = dimOp.getConstantIndex())
            next = {dimOp.getSource(), *d};
    }
    for (Operation *op : llvm::reverse(recorder.created))
      op->erase();
    if (!next)
      return unknown;
    value = next->first;
    dim = next->second;
  }
  return unknown;
}

namespace {

/// Accumulates the verdict of the entry's checks.
struct EntryChecks {
  ImplicitLocOpBuilder &b;
  Operation *anchor;
  Value ok;

  Value i64(int64_t v) {
    return arith::ConstantOp::create(b, b.getI64IntegerAttr(v));
  }

  /// Reports `code` with the payload when `bad` holds.
  void check(Value bad, RuntimeError code, int64_t which, Value given,
             Value expected) {
    scf::IfOp::create(b, bad, [&](OpBuilder &, Location) {
      emitRuntimeError(b, anchor, static_cast<int32_t>(code), i64(which), given,
                       expected);
      scf::YieldOp::create(b);
    });
    Value good = arith::XOrIOp::create(
        b, bad, arith::ConstantOp::create(b, b.getBoolAttr(true)));
    ok = ok ? arith::AndIOp::create(b, ok, good).getResult() : good;
  }

  /// The sizes of `buffer` (argument or result `index`, `code` says which)
  /// against `type`: the dynamic ones not negative, the static ones equal.
  void sizes(Value buffer, RankedTensorType type, int64_t index,
             RuntimeError code) {
    for (int64_t d = 0; d < type.getRank(); ++d) {
      Value size = memref::DimOp::create(b, buffer, d);
      int64_t which = packArgumentDim(index, d);
      if (type.isDynamicDim(d)) {
        Value zero = arith::ConstantIndexOp::create(b, 0);
        check(arith::CmpIOp::create(b, arith::CmpIPredicate::slt, size, zero),
              code, which, size, i64(-1));
        continue;
      }
      Value expected = arith::ConstantIndexOp::create(b, type.getDimSize(d));
      check(arith::CmpIOp::create(b, arith::CmpIPredicate::ne, size, expected),
            code, which, size, expected);
    }
  }
};

/// A memref with every dimension dynamic, of `type`'s rank and element
/// type: the caller's buffer.
MemRefType bufferType(RankedTensorType type) {
  return MemRefType::get(
      SmallVector<int64_t>(type.getRank(), ShapedType::kDynamic),
      type.getElementType());
}

/// Appends to `into` the types of `types`, the arguments or results of `fn`
/// (`what` says which); fails with an error at one an entry cannot take.
LogicalResult collectEntryTypes(func::FuncOp fn, TypeRange types,
                                SmallVectorImpl<RankedTensorType> &into,
                                StringRef what) {
  for (auto [i, t] : llvm::enumerate(types)) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor || !isEntryElementType(tensor.getElementType()))
      return fn.emitOpError()
             << what << " " << i << " has type " << t
             << "; a kernel library's entries take ranked tensors of f16, "
                "bf16, f32, f64, i1, i8, i16, i32 or i64";
    into.push_back(tensor);
  }
  return success();
}

/// The argument and result types of `fn`, if an entry can take them and
/// `fn` has a single-block body; else fails with an error.
LogicalResult entrySignature(func::FuncOp fn,
                             SmallVectorImpl<RankedTensorType> &args,
                             SmallVectorImpl<RankedTensorType> &results) {
  FunctionType fnType = fn.getFunctionType();
  if (failed(collectEntryTypes(fn, fnType.getInputs(), args, "argument")) ||
      failed(collectEntryTypes(fn, fnType.getResults(), results, "result")))
    return failure();
  if (!fn.getBody().hasOneBlock())
    return fn.emitOpError()
           << "has " << fn.getBody().getBlocks().size()
           << " blocks; a kernel library's entries need a single-block body";
  return success();
}

/// Creates the entry of `fn` before it, `<fn>__entry`, with its body block:
/// it takes the caller's buffer of each argument and result.
func::FuncOp createEntry(func::FuncOp fn, ArrayRef<RankedTensorType> args,
                         ArrayRef<RankedTensorType> results) {
  MLIRContext *ctx = fn.getContext();
  SmallVector<Type> bufferTypes;
  for (RankedTensorType t : args)
    bufferTypes.push_back(bufferType(t));
  for (RankedTensorType t : results)
    bufferTypes.push_back(bufferType(t));
  OpBuilder top(fn);
  auto entry =
      func::FuncOp::create(top, fn.getLoc(), (fn.getName() + "__entry").str(),
                           FunctionType::get(ctx, bufferTypes, {}));
  entry->setAttr("llvm.emit_c_interface", UnitAttr::get(ctx));
  entry->setAttr("attn.entry", StringAttr::get(ctx, fn.getName()));
  entry.addEntryBlock();
  return entry;
}

/// Builds the body of the entry of `fn` (its block `body`, built with `b`):
/// the checks of the sizes the caller passes, then the computation on the
/// caller's buffers.
class EntryBody {
public:
  EntryBody(func::FuncOp fn, func::FuncOp entry,
            ArrayRef<RankedTensorType> args, ArrayRef<RankedTensorType> results,
            ImplicitLocOpBuilder &b)
      : fn(fn), entry(entry), args(args), results(results), b(b),
        body(&entry.getBody().front()), numArgs(args.size()),
        ret(cast<func::ReturnOp>(fn.getBody().front().getTerminator())) {}

  /// Adds to `checks` the checks made before computing: every size of the
  /// caller's buffers against the types, and the dynamic result sizes that
  /// equal an argument's.
  void checkSizesBefore(EntryChecks &checks);
  /// The function's body on the caller's buffers: its ops cloned, the result
  /// sizes not checked before checked, the results written.
  void compute();

private:
  func::FuncOp fn, entry;
  ArrayRef<RankedTensorType> args, results;
  ImplicitLocOpBuilder &b;
  Block *body;
  int64_t numArgs;
  func::ReturnOp ret;
  /// Per result and dimension: whether checkSizesBefore checked its size.
  SmallVector<SmallVector<bool>> checkedBefore;

  /// The caller's buffer `index` cast to the function's type `t` (valid
  /// once the static sizes are checked).
  Value castBuffer(int64_t index, RankedTensorType t);
  /// Writes `values`, the results, into the caller's buffers.
  void write(ArrayRef<Value> values);
};

void EntryBody::checkSizesBefore(EntryChecks &checks) {
  for (auto [i, t] : llvm::enumerate(args))
    checks.sizes(body->getArgument(i), t, i, RuntimeError::ArgumentSize);
  for (auto [i, t] : llvm::enumerate(results))
    checks.sizes(body->getArgument(numArgs + i), t, i,
                 RuntimeError::ResultSize);
  // A dynamic result size that equals an argument's (as the IR says) is
  // checked before computing; the others after. With every size checked
  // before, the result is written unconditionally, and
  // attn-forward-entry-outputs can compute it in the caller's buffer.
  for (auto [i, t] : llvm::enumerate(results)) {
    checkedBefore.emplace_back(t.getRank(), false);
    for (int64_t d = 0; d < t.getRank(); ++d) {
      if (!t.isDynamicDim(d))
        continue;
      auto [arg, argDim] = traceEntrySize(fn, ret.getOperand(i), d);
      if (arg < 0)
        continue;
      Value given = memref::DimOp::create(b, body->getArgument(numArgs + i), d);
      Value computed = memref::DimOp::create(b, body->getArgument(arg), argDim);
      checks.check(
          arith::CmpIOp::create(b, arith::CmpIPredicate::ne, given, computed),
          RuntimeError::ResultSize, packArgumentDim(i, d), given, computed);
      checkedBefore.back()[d] = true;
    }
  }
}

Value EntryBody::castBuffer(int64_t index, RankedTensorType t) {
  auto type = MemRefType::get(t.getShape(), t.getElementType());
  return memref::CastOp::create(b, type, body->getArgument(index));
}

void EntryBody::write(ArrayRef<Value> values) {
  for (auto [i, t] : llvm::enumerate(results)) {
    auto op = bufferization::MaterializeInDestinationOp::create(
        b, values[i], castBuffer(numArgs + i, t));
    op.setRestrict(true);
    op.setWritable(true);
  }
}

void EntryBody::compute() {
  IRMapping mapping;
  for (auto [i, t] : llvm::enumerate(args))
    mapping.map(fn.getArgument(i),
                bufferization::ToTensorOp::create(b, t, castBuffer(i, t),
                                                  /*restrict=*/true));
  Block &source = fn.getBody().front();
  for (Operation &op : source.without_terminator())
    b.clone(op, mapping);
  EntryChecks fits{b, entry, Value()};
  SmallVector<Value> values;
  for (auto [i, t] : llvm::enumerate(results)) {
    Value value = mapping.lookupOrDefault(ret.getOperand(i));
    values.push_back(value);
    Value buffer = body->getArgument(numArgs + i);
    for (int64_t d = 0; d < t.getRank(); ++d) {
      if (!t.isDynamicDim(d) || checkedBefore[i][d])
        continue;
      Value computed = tensor::DimOp::create(b, value, d);
      Value given = memref::DimOp::create(b, buffer, d);
      fits.check(
          arith::CmpIOp::create(b, arith::CmpIPredicate::ne, given, computed),
          RuntimeError::ResultSize, packArgumentDim(i, d), given, computed);
    }
  }
  if (!fits.ok) {
    write(values);
    return;
  }
  scf::IfOp::create(b, fits.ok, [&](OpBuilder &, Location) {
    write(values);
    scf::YieldOp::create(b);
  });
}

/// Exports `fn`: creates its entry, `<fn>__entry` (the C ABI: buffers in,
/// checked, then `fn`'s body on them), and makes `fn` private.
LogicalResult exportFunction(func::FuncOp fn) {
  SmallVector<RankedTensorType> args, results;
  if (failed(entrySignature(fn, args, results)))
    return failure();
  func::FuncOp entry = createEntry(fn, args, results);
  ImplicitLocOpBuilder b(fn.getLoc(), fn.getContext());
  b.setInsertionPointToStart(&entry.getBody().front());
  EntryBody entryBody(fn, entry, args, results, b);

  EntryChecks checks{b, entry, Value()};
  entryBody.checkSizesBefore(checks);
  if (checks.ok) {
    scf::IfOp::create(b, checks.ok, [&](OpBuilder &, Location) {
      entryBody.compute();
      scf::YieldOp::create(b);
    });
  } else {
    entryBody.compute();
  }
  func::ReturnOp::create(b);
  fn.setPrivate();
  return success();
}

struct AttnExportEntries
    : public attn::impl::AttnExportEntriesBase<AttnExportEntries> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> exported;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (fn.isPublic() && !fn.isExternal() && !fn->hasAttr("attn.entry"))
        exported.push_back(fn);
    for (func::FuncOp fn : exported)
      if (failed(exportFunction(fn)))
        return signalPassFailure();
  }
};

/// Whether `op` (in `block`'s region tree) is at or after `point`, an op of
/// `block`.
bool isAtOrAfter(Operation *op, Operation *point) {
  Operation *ancestor = point->getBlock()->findAncestorOpInBlock(*op);
  return ancestor && (ancestor == point || point->isBeforeInBlock(ancestor));
}

struct AttnForwardEntryOutputs
    : public attn::impl::AttnForwardEntryOutputsBase<AttnForwardEntryOutputs> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (!fn->hasAttr("attn.entry") || fn.isExternal())
      return;
    SmallVector<memref::CopyOp> copies;
    fn.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
      if (!alloc || alloc->getBlock() != copy->getBlock() ||
          alloc.getType() != copy.getTarget().getType())
        continue;
      auto castOp = copy.getTarget().getDefiningOp<memref::CastOp>();
      if (castOp && !castOp->hasOneUse())
        continue;
      auto arg = dyn_cast<BlockArgument>(castOp ? castOp.getSource()
                                                : copy.getTarget());
      if (!arg || arg.getOwner() != &fn.getBody().front())
        continue;
      bool exclusive = llvm::all_of(arg.getUsers(), [&](Operation *user) {
        return isa<memref::DimOp>(user) || user == castOp || user == copy;
      });
      bool usedAfter = llvm::any_of(alloc->getUsers(), [&](Operation *user) {
        return user != copy && isAtOrAfter(user, copy);
      });
      if (!exclusive || usedAfter)
        continue;
      OpBuilder b(alloc);
      Value buffer = arg;
      if (buffer.getType() != alloc.getType())
        buffer =
            memref::CastOp::create(b, alloc.getLoc(), alloc.getType(), arg);
      copy.erase();
      if (castOp)
        castOp.erase();
      alloc.replaceAllUsesWith(buffer);
      alloc.erase();
    }
  }
};

} // namespace
