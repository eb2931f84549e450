//===- CheckAllocations.cpp - Run-time checks of heap allocations ---------===//
//
// attn-guard-allocation-sizes (on memrefs) and attn-check-allocations (on
// the LLVM dialect): generated code reports a failed or impossible
// allocation through the run-time error hook and skips what would use the
// buffer, instead of writing through NULL or past a short buffer. The
// passes' descriptions (Passes.td) say how.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Codegen/Passes.h"
#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Dialect/Attn/Utils/RuntimeChecks.h"
#include "attn-opt/Runtime/Host/RuntimeErrors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

#include "llvm/ADT/SetVector.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGUARDALLOCATIONSIZES
#define GEN_PASS_DEF_ATTNHOISTSTACKBUFFERS
#define GEN_PASS_DEF_ATTNCHECKALLOCATIONS
#include "attn-opt/Codegen/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// attn-guard-allocation-sizes
//===----------------------------------------------------------------------===//

/// The bytes of an element of `type` (rounded up to whole bytes), or 0 if
/// the pass does not know its size.
static int64_t elementBytes(Type type) {
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat())
    return std::max<int64_t>(1, (type.getIntOrFloatBitWidth() + 7) / 8);
  if (auto vector = dyn_cast<VectorType>(type);
      vector && vector.hasStaticShape() &&
      vector.getElementType().isIntOrFloat())
    return std::max<int64_t>(
        1, (vector.getNumElements() *
                vector.getElementType().getIntOrFloatBitWidth() +
            7) /
               8);
  return 0;
}

/// The bytes of one step of `type`'s dynamic sizes: its element size times
/// its static sizes (0 if one is 0 or the element size is unknown;
/// saturated at 2^62).
static int64_t bytesPerStep(MemRefType type) {
  int64_t bytes = elementBytes(type.getElementType());
  if (bytes == 0)
    return 0;
  for (int64_t size : type.getShape()) {
    if (ShapedType::isDynamic(size))
      continue;
    if (size == 0)
      return 0;
    bytes = size > (int64_t(1) << 62) / bytes ? int64_t(1) << 62 : bytes * size;
  }
  return bytes;
}

static void guardAllocation(memref::AllocOp alloc) {
  MemRefType type = alloc.getType();
  if (alloc.getDynamicSizes().empty())
    return;
  int64_t step = bytesPerStep(type);
  if (step == 0)
    return;
  ImplicitLocOpBuilder b(alloc.getLoc(), alloc);
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, v); };
  Value zero = index(0), one = index(1);
  Value limit = index(kMaxTensorBytes);
  // The bytes so far (at most 2^47 while `ok` holds; at least 1 so that it
  // can divide).
  Value bytes = index(step);
  Value ok = arith::ConstantIntOp::create(b, 1, 1);
  for (Value size : alloc.getDynamicSizes()) {
    Value positive =
        arith::CmpIOp::create(b, arith::CmpIPredicate::sge, size, zero);
    Value room = arith::DivUIOp::create(b, limit, bytes);
    Value fits =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ule, size, room);
    ok = arith::AndIOp::create(b, ok, arith::AndIOp::create(b, positive, fits));
    // (When `ok` fails, `bytes` no longer matters.)
    Value next = arith::MulIOp::create(
        b, bytes, arith::SelectOp::create(b, fits, size, one));
    bytes = arith::MaxUIOp::create(b, next, one);
  }
  ValueRange sizes = alloc.getDynamicSizes();
  Value tooLarge =
      arith::XOrIOp::create(b, ok, arith::ConstantIntOp::create(b, 1, 1));
  auto report = scf::IfOp::create(b, tooLarge, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(report.thenBlock());
    // The message: the bytes per step, the first dynamic size and the
    // product of the others (saturated at INT64_MAX).
    Value max = index(std::numeric_limits<int64_t>::max());
    Value rest = one;
    for (Value size : sizes.drop_front()) {
      Value d = arith::MaxSIOp::create(b, size, one);
      Value saturates =
          arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, rest,
                                arith::DivUIOp::create(b, max, d));
      rest = arith::SelectOp::create(b, saturates, max,
                                     arith::MulIOp::create(b, rest, d));
    }
    emitRuntimeError(b, alloc,
                     static_cast<int32_t>(RuntimeError::AllocationTooLarge),
                     index(step), sizes[0], rest);
  }
  SmallVector<Value> guarded;
  Value sentinel = index(-std::max<int64_t>(1, (int64_t(1) << 62) / step));
  for (auto [i, size] : llvm::enumerate(sizes))
    guarded.push_back(
        arith::SelectOp::create(b, ok, size, i == 0 ? sentinel : one));
  alloc.getDynamicSizesMutable().assign(guarded);
}

namespace {
struct GuardAllocationSizesPass
    : public attn::impl::AttnGuardAllocationSizesBase<
          GuardAllocationSizesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocOp> allocs;
    getOperation().walk([&](memref::AllocOp a) { allocs.push_back(a); });
    for (memref::AllocOp a : allocs)
      guardAllocation(a);
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// attn-hoist-stack-buffers
//===----------------------------------------------------------------------===//

namespace {
struct AttnHoistStackBuffersPass
    : public attn::impl::AttnHoistStackBuffersBase<AttnHoistStackBuffersPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocaOp> allocas;
    getOperation().walk([&](memref::AllocaOp a) {
      if (a->getNumOperands() == 0 && a.getType().hasStaticShape())
        allocas.push_back(a);
    });
    for (memref::AllocaOp a : allocas) {
      // The scope that releases it: the first function or parallel region
      // above it (scf loops are allocation scopes by their trait, but
      // their lowering to branches releases nothing per iteration), unless
      // a memref.alloca_scope below the first loop does.
      Operation *scope = nullptr;
      bool inLoop = false;
      for (Operation *p = a->getParentOp(); p; p = p->getParentOp()) {
        bool loop =
            isa<scf::ForOp, scf::WhileOp, scf::ParallelOp, omp::LoopNestOp>(p);
        if (!inLoop && isa<memref::AllocaScopeOp>(p))
          break;
        inLoop |= loop;
        if (!loop && p->hasTrait<OpTrait::AutomaticAllocationScope>()) {
          scope = p;
          break;
        }
      }
      if (!scope || scope->getNumRegions() == 0 || scope->getRegion(0).empty())
        continue;
      Region *home = a->getParentRegion();
      bool local = llvm::all_of(a->getUsers(), [&](Operation *user) {
        return home->isAncestor(user->getParentRegion());
      });
      if (!inLoop || !local)
        continue;
      a->moveBefore(&scope->getRegion(0).front(),
                    scope->getRegion(0).front().begin());
    }
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// attn-check-allocations
//===----------------------------------------------------------------------===//

/// The size operand of `call` if it allocates heap memory, else null.
static Value allocationSize(LLVM::CallOp call) {
  std::optional<StringRef> callee = call.getCallee();
  if (!callee || call.getNumResults() != 1)
    return {};
  if ((*callee == "malloc" || *callee == "_mlir_memref_to_llvm_alloc") &&
      call.getNumOperands() == 1)
    return call.getOperand(0);
  if (*callee == "aligned_alloc" && call.getNumOperands() == 2)
    return call.getOperand(1);
  // The NVVM pipeline's host code: gpu.alloc (size, stream, host-shared).
  if (*callee == "mgpuMemAlloc" && call.getNumOperands() == 3)
    return call.getOperand(0);
  return {};
}

namespace {
struct CheckAllocationsPass
    : public attn::impl::AttnCheckAllocationsBase<CheckAllocationsPass> {
  using AttnCheckAllocationsBase::AttnCheckAllocationsBase;
  void runOnOperation() override;

private:
  /// The functions of the module that check allocations, themselves or in
  /// the functions they call.
  llvm::SetVector<LLVM::LLVMFuncOp> mayFail;

  LLVM::LLVMFuncOp declare(StringRef name, Type result, ArrayRef<Type> args);
  /// Collects the calls of `fn` to check: its allocations and its calls of
  /// functions that may fail.
  void collectChecked(LLVM::LLVMFuncOp fn,
                      SmallVectorImpl<LLVM::CallOp> &allocations,
                      SmallVectorImpl<LLVM::CallOp> &calls);
  /// Inserts the checks into `fn` (none if it neither allocates nor calls a
  /// function that may fail); fails at an allocation or a call it cannot
  /// check.
  LogicalResult checkFunction(LLVM::LLVMFuncOp fn);
};
} // namespace

LLVM::LLVMFuncOp CheckAllocationsPass::declare(StringRef name, Type result,
                                               ArrayRef<Type> args) {
  ModuleOp module = getOperation();
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return fn;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), name,
                                  LLVM::LLVMFunctionType::get(result, args));
}

/// The top-level op of `fn` (in a block of its body) that holds `op`.
static Operation *topLevelAncestor(LLVM::LLVMFuncOp fn, Operation *op) {
  while (op->getParentOp() != fn.getOperation())
    op = op->getParentOp();
  return op;
}

namespace {
/// Inserts the checks into one function, phase by phase (see
/// CheckAllocationsPass::checkFunction): the exit taken after an error, the
/// checks after allocations, after calls of functions that may fail, and of
/// the flag of failed allocations after parallel loops.
class FunctionChecker {
public:
  /// Starts the checks of `fn`: adds its (empty) exit block. `report` is the
  /// run-time error hook.
  FunctionChecker(LLVM::LLVMFuncOp fn, LLVM::LLVMFuncOp report,
                  bool releaseOnError);

  /// Fills the exit block: with release-on-error (`markFn` and `releaseFn`
  /// the run-time's mark and release) the buffers allocated since entry are
  /// freed, then the function returns (zeros).
  void buildExit(LLVM::LLVMFuncOp markFn, LLVM::LLVMFuncOp releaseFn);
  /// Checks the result of allocation `call`: at top level a failure reports
  /// and exits; in a parallel iteration it notes the size in the flag and
  /// ends the iteration.
  LogicalResult checkAllocation(LLVM::CallOp call);
  /// Checks, after `call` of a function that may fail, whether it failed
  /// (`failedFn` the run-time's query), and exits if so.
  LogicalResult checkCall(LLVM::CallOp call, LLVM::LLVMFuncOp failedFn);
  /// Reads the flag after each top-level op holding a parallel allocation:
  /// a non-zero size reports and exits.
  void checkFlags();

private:
  LLVM::LLVMFuncOp fn, report;
  bool releaseOnError;
  Type i32, i64;
  LLVM::LLVMPointerType ptr;
  Location loc;
  Region &body;
  OpBuilder b;
  /// The function's exit after an error.
  Block *exit;
  /// The run-time's mark and release (with release-on-error).
  LLVM::LLVMFuncOp markFn, releaseFn;
  /// The flag of failed allocations in parallel iterations: created on first
  /// use, in the entry block.
  Value flag;
  /// The marks taken at the start of parallel iterations.
  llvm::DenseMap<Block *, Value> iterationMarks;
  /// Top-level ops after which the flag is read.
  llvm::SetVector<Operation *> readFlagAfter;

  /// A mark taken at the start of `block`.
  Value markAt(Block *block);
  /// The flag, created on first use.
  Value getFlag();
  /// Splits the block of `op` after it; `failed` is computed at the end of
  /// the first half, which branches to `onFailure` (a new block of the same
  /// region, returned, where the builder then inserts) or on.
  Block *branchAfter(Operation *op, function_ref<Value(OpBuilder &)> failed);
};
} // namespace

FunctionChecker::FunctionChecker(LLVM::LLVMFuncOp fn, LLVM::LLVMFuncOp report,
                                 bool releaseOnError)
    : fn(fn), report(report), releaseOnError(releaseOnError),
      i32(IntegerType::get(fn.getContext(), 32)),
      i64(IntegerType::get(fn.getContext(), 64)),
      ptr(LLVM::LLVMPointerType::get(fn.getContext())), loc(fn.getLoc()),
      body(fn.getBody()), b(fn.getContext()) {
  // The function's exit after an error: return (zeros).
  exit = new Block();
  body.push_back(exit);
  b.setInsertionPointToStart(exit);
}

Value FunctionChecker::markAt(Block *block) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(block);
  return LLVM::CallOp::create(b, loc, markFn, ValueRange{}).getResult();
}

void FunctionChecker::buildExit(LLVM::LLVMFuncOp markFn,
                                LLVM::LLVMFuncOp releaseFn) {
  this->markFn = markFn;
  this->releaseFn = releaseFn;
  if (releaseOnError) {
    Value mark = markAt(&body.front());
    LLVM::CallOp::create(b, loc, releaseFn, ValueRange{mark});
  }
  Type result = fn.getFunctionType().getReturnType();
  if (isa<LLVM::LLVMVoidType>(result))
    LLVM::ReturnOp::create(b, loc, ValueRange{});
  else
    LLVM::ReturnOp::create(
        b, loc, ValueRange{LLVM::ZeroOp::create(b, loc, result).getResult()});
}

Value FunctionChecker::getFlag() {
  if (flag)
    return flag;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&body.front());
  Value one = LLVM::ConstantOp::create(b, loc, i64, 1);
  flag = LLVM::AllocaOp::create(b, loc, ptr, i64, one, /*alignment=*/8);
  LLVM::StoreOp::create(b, loc, LLVM::ConstantOp::create(b, loc, i64, 0), flag);
  return flag;
}

Block *FunctionChecker::branchAfter(Operation *op,
                                    function_ref<Value(OpBuilder &)> failed) {
  Block *head = op->getBlock();
  Block *rest = head->splitBlock(std::next(op->getIterator()));
  b.setInsertionPointToEnd(head);
  Value cond = failed(b);
  Block *onFailure = new Block();
  head->getParent()->getBlocks().insertAfter(head->getIterator(), onFailure);
  LLVM::CondBrOp::create(b, op->getLoc(), cond, onFailure, ValueRange{}, rest,
                         ValueRange{},
                         std::make_pair<uint32_t, uint32_t>(1, 1048575));
  b.setInsertionPointToStart(onFailure);
  return onFailure;
}

LogicalResult FunctionChecker::checkAllocation(LLVM::CallOp call) {
  Value size = allocationSize(call);
  Operation *parent = call->getParentOp();
  bool topLevel = parent == fn.getOperation();
  if (!topLevel && !isa<omp::LoopNestOp>(parent))
    return call.emitOpError("attn-check-allocations: cannot check an "
                            "allocation inside ")
           << parent->getName();
  branchAfter(call, [&](OpBuilder &b) -> Value {
    Location l = call.getLoc();
    Value null = LLVM::ZeroOp::create(b, l, ptr);
    Value isNull = LLVM::ICmpOp::create(b, l, LLVM::ICmpPredicate::eq,
                                        call.getResult(), null);
    Value zero = LLVM::ConstantOp::create(b, l, size.getType(), 0);
    Value sized =
        LLVM::ICmpOp::create(b, l, LLVM::ICmpPredicate::ne, size, zero);
    return LLVM::AndOp::create(b, l, isNull, sized);
  });
  Location l = call.getLoc();
  Value size64 = size.getType() == i64
                     ? size
                     : LLVM::ZExtOp::create(b, l, i64, size).getResult();
  if (topLevel) {
    Value code = LLVM::ConstantOp::create(
        b, l, i32, static_cast<int32_t>(RuntimeError::OutOfMemory));
    Value zero = LLVM::ConstantOp::create(b, l, i64, 0);
    LLVM::CallOp::create(b, l, report, ValueRange{code, size64, zero, zero});
    LLVM::BrOp::create(b, l, ValueRange{}, exit);
    return success();
  }
  // In a parallel iteration: free what the iteration holds (with
  // release-on-error), note the size, end the iteration.
  if (releaseOnError) {
    Block *iterationEntry = &parent->getRegion(0).front();
    Value &mark = iterationMarks[iterationEntry];
    if (!mark)
      mark = markAt(iterationEntry);
    LLVM::CallOp::create(b, l, releaseFn, ValueRange{mark});
  }
  Value f = getFlag();
  // (A size of 0 never fails; the flag holds a non-zero size.)
  LLVM::StoreOp::create(b, l, size64, f, /*alignment=*/8,
                        /*isVolatile=*/false, /*isNonTemporal=*/false,
                        /*isInvariantGroup=*/false,
                        LLVM::AtomicOrdering::monotonic);
  omp::YieldOp::create(b, l, ValueRange{});
  readFlagAfter.insert(topLevelAncestor(fn, call));
  return success();
}

LogicalResult FunctionChecker::checkCall(LLVM::CallOp call,
                                         LLVM::LLVMFuncOp failedFn) {
  if (call->getParentOp() != fn.getOperation())
    return call.emitOpError("attn-check-allocations: cannot check a call "
                            "of a function that allocates inside ")
           << call->getParentOp()->getName();
  branchAfter(call, [&](OpBuilder &b) -> Value {
    Location l = call.getLoc();
    Value status =
        LLVM::CallOp::create(b, l, failedFn, ValueRange{}).getResult();
    Value zero = LLVM::ConstantOp::create(b, l, i32, 0);
    return LLVM::ICmpOp::create(b, l, LLVM::ICmpPredicate::ne, status, zero);
  });
  LLVM::BrOp::create(b, call.getLoc(), ValueRange{}, exit);
  return success();
}

void FunctionChecker::checkFlags() {
  for (Operation *op : readFlagAfter) {
    Location l = op->getLoc();
    Value size;
    branchAfter(op, [&](OpBuilder &b) -> Value {
      size = LLVM::LoadOp::create(b, l, i64, flag, /*alignment=*/8,
                                  /*isVolatile=*/false,
                                  /*isNonTemporal=*/false,
                                  /*isInvariantLoad=*/false,
                                  /*isInvariantGroup=*/false,
                                  LLVM::AtomicOrdering::monotonic);
      Value zero = LLVM::ConstantOp::create(b, l, i64, 0);
      return LLVM::ICmpOp::create(b, l, LLVM::ICmpPredicate::ne, size, zero);
    });
    Value code = LLVM::ConstantOp::create(
        b, l, i32, static_cast<int32_t>(RuntimeError::OutOfMemory));
    Value zero = LLVM::ConstantOp::create(b, l, i64, 0);
    LLVM::CallOp::create(b, l, report, ValueRange{code, size, zero, zero});
    LLVM::BrOp::create(b, l, ValueRange{}, exit);
  }
}

void CheckAllocationsPass::collectChecked(
    LLVM::LLVMFuncOp fn, SmallVectorImpl<LLVM::CallOp> &allocations,
    SmallVectorImpl<LLVM::CallOp> &calls) {
  fn.walk([&](LLVM::CallOp call) {
    if (allocationSize(call))
      allocations.push_back(call);
    else if (std::optional<StringRef> callee = call.getCallee())
      if (auto target = getOperation().lookupSymbol<LLVM::LLVMFuncOp>(*callee))
        if (mayFail.contains(target))
          calls.push_back(call);
  });
}

LogicalResult CheckAllocationsPass::checkFunction(LLVM::LLVMFuncOp fn) {
  MLIRContext *ctx = &getContext();
  Type i32 = IntegerType::get(ctx, 32), i64 = IntegerType::get(ctx, 64);
  auto voidType = LLVM::LLVMVoidType::get(ctx);
  LLVM::LLVMFuncOp report =
      declare(kRuntimeErrorFunction, voidType, {i32, i64, i64, i64});

  SmallVector<LLVM::CallOp> allocations, calls;
  collectChecked(fn, allocations, calls);
  if (allocations.empty() && calls.empty())
    return success();

  FunctionChecker checker(fn, report, releaseOnError);
  // With release-on-error, the buffers the function still holds are freed
  // on the way out: those allocated since the mark taken on entry.
  LLVM::LLVMFuncOp markFn, releaseFn;
  if (releaseOnError) {
    markFn = declare(kRuntimeMarkFunction, i64, {});
    releaseFn = declare(kRuntimeReleaseFunction, voidType, {i64});
  }
  checker.buildExit(markFn, releaseFn);

  for (LLVM::CallOp call : allocations)
    if (failed(checker.checkAllocation(call)))
      return failure();
  LLVM::LLVMFuncOp failedFn = calls.empty()
                                  ? LLVM::LLVMFuncOp()
                                  : declare(kRuntimeFailedFunction, i32, {});
  for (LLVM::CallOp call : calls)
    if (failed(checker.checkCall(call, failedFn)))
      return failure();
  checker.checkFlags();
  return success();
}

void CheckAllocationsPass::runOnOperation() {
  ModuleOp module = getOperation();
  // The functions that may fail: those that allocate, then their callers.
  SmallVector<LLVM::LLVMFuncOp> functions;
  for (LLVM::LLVMFuncOp fn : module.getOps<LLVM::LLVMFuncOp>()) {
    if (fn.isExternal())
      continue;
    functions.push_back(fn);
    bool allocates = false;
    fn.walk([&](LLVM::CallOp call) {
      if (allocationSize(call))
        allocates = true;
    });
    if (allocates)
      mayFail.insert(fn);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (LLVM::LLVMFuncOp fn : functions) {
      if (mayFail.contains(fn))
        continue;
      WalkResult r = fn.walk([&](LLVM::CallOp call) {
        std::optional<StringRef> callee = call.getCallee();
        auto target =
            callee ? module.lookupSymbol<LLVM::LLVMFuncOp>(*callee) : nullptr;
        return target && mayFail.contains(target) ? WalkResult::interrupt()
                                                  : WalkResult::advance();
      });
      if (r.wasInterrupted()) {
        mayFail.insert(fn);
        changed = true;
      }
    }
  }
  for (LLVM::LLVMFuncOp fn : functions)
    if (failed(checkFunction(fn)))
      return signalPassFailure();
}
