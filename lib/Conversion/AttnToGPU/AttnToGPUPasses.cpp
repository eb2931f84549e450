//===- AttnToGPUPasses.cpp - attn to GPU kernels, host memory, loops ------===//

#include "attn-opt/Conversion/AttnToGPU/GpuKernel.h"
#include "attn-opt/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOGPU
#define GEN_PASS_DEF_ATTNGPUMAPLOOPS
#define GEN_PASS_DEF_ATTNGPUHOSTMEMORY
#define GEN_PASS_DEF_ATTNGPUSINKCONSTANTS
#define GEN_PASS_DEF_ATTNLEGALIZEFORNVVM
#include "attn-opt/Conversion/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// convert-attn-to-gpu
//===----------------------------------------------------------------------===//

namespace {
struct ConvertAttnToGPUPass
    : public attn::impl::ConvertAttnToGPUBase<ConvertAttnToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockK < 0 || blockK % 16 != 0) {
      getOperation()->emitError()
          << getArgument() << ": block-k (" << static_cast<int64_t>(blockK)
          << ") must be a positive multiple of 16 (or 0)";
      return signalPassFailure();
    }
    SmallVector<AttentionOp> ops;
    getOperation()->walk([&](AttentionOp op) {
      if (KernelSpec::applies(op))
        ops.push_back(op);
    });
    for (AttentionOp op : ops) {
      KernelSpec spec = KernelSpec::get(op);
      GpuKernelPlan plan = planGpuKernel(spec, tensorCores, blockK);
      if (plan.sharedBytes > kGpuStaticSharedLimit) {
        op->emitError() << getArgument() << ": K and V blocks of "
                        << plan.blockK << " keys need " << plan.sharedBytes
                        << " bytes of shared memory, more than the "
                        << kGpuStaticSharedLimit
                        << " a kernel may use statically (use a smaller "
                           "block-k)";
        return signalPassFailure();
      }
      BlockLayout layout = op.getBlockLayout(plan.blockQ, plan.blockK);
      InFlightDiagnostic remark = op->emitRemark();
      remark << getArgument() << ": ";
      if (plan.kind == GpuKernelPlan::Kind::Mma)
        remark << "mma.sync kernel";
      else
        remark << "SIMT kernel (" << plan.simtReason << "), "
               << plan.rowThreads << " thread(s) per query row";
      remark << "; tiles of " << plan.blockQ << " queries x " << plan.blockK
             << " keys, " << plan.threads << " threads; visiting "
             << layout.countVisited() << " of " << layout.countBlocks()
             << " key blocks (" << layout.countFull() << " full)";
      IRRewriter rewriter(&getContext());
      rewriter.setInsertionPoint(op);
      ImplicitLocOpBuilder b(op->getLoc(), rewriter);
      Value result = buildGpuKernel(b, spec, plan, layout);
      rewriter.replaceOp(op, result);
    }
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// attn-gpu-map-loops
//===----------------------------------------------------------------------===//

namespace {
struct GpuMapLoopsPass
    : public attn::impl::AttnGpuMapLoopsBase<GpuMapLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (threads < 1 || threads > 1024) {
      getOperation()->emitError()
          << getArgument() << ": threads (" << static_cast<int64_t>(threads)
          << ") must be in [1, 1024]";
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> loops;
    getOperation()->walk([&](scf::ParallelOp op) {
      if (op->getParentOfType<gpu::LaunchOp>() ||
          op->getParentOfType<scf::ParallelOp>() ||
          op->getParentOfType<gpu::GPUModuleOp>() || op.getNumReductions())
        return;
      loops.push_back(op);
    });
    for (scf::ParallelOp op : loops)
      map(op);
  }

  /// Rewrites `op` as blocks x threads over its linearized iterations.
  void map(scf::ParallelOp op) {
    ImplicitLocOpBuilder b(op.getLoc(), op);
    auto idx = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, v);
    };
    // Trip counts and the total.
    SmallVector<Value> counts;
    Value total = idx(1);
    for (auto [lb, ub, step] :
         llvm::zip(op.getLowerBound(), op.getUpperBound(), op.getStep())) {
      Value span = arith::SubIOp::create(b, ub, lb);
      Value n = arith::MaxSIOp::create(
          b, arith::CeilDivSIOp::create(b, span, step), idx(0));
      counts.push_back(n);
      total = arith::MulIOp::create(b, total, n);
    }
    Value blocks = arith::CeilDivSIOp::create(b, total, idx(threads));
    MLIRContext *ctx = &getContext();
    // No launch for an empty iteration space (a grid of 0 is invalid).
    Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt, total,
                                      idx(0));
    auto nonEmpty = scf::IfOp::create(b, any, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&nonEmpty.getThenRegion().front());
    AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
    auto outer = scf::ParallelOp::create(b, ValueRange{idx(0)},
                                         ValueRange{blocks}, ValueRange{idx(1)});
    (void)gpu::setMappingAttr(outer, {gpu::ParallelLoopDimMappingAttr::get(
                                         ctx, gpu::Processor::BlockX, id, id)});
    b.setInsertionPointToStart(outer.getBody());
    auto inner = scf::ParallelOp::create(b, ValueRange{idx(0)},
                                         ValueRange{idx(threads)},
                                         ValueRange{idx(1)});
    (void)gpu::setMappingAttr(inner, {gpu::ParallelLoopDimMappingAttr::get(
                                         ctx, gpu::Processor::ThreadX, id, id)});
    b.setInsertionPointToStart(inner.getBody());
    Value linear = arith::AddIOp::create(
        b, arith::MulIOp::create(b, outer.getInductionVars()[0], idx(threads)),
        inner.getInductionVars()[0]);
    Value inside = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, linear,
                                         total);
    auto guard = scf::IfOp::create(b, inside, /*withElseRegion=*/false);
    b.setInsertionPointToStart(&guard.getThenRegion().front());
    // Delinearize, innermost dimension fastest (consecutive threads touch
    // consecutive elements).
    IRMapping mapping;
    Value rest = linear;
    int64_t rank = counts.size();
    SmallVector<Value> ivs(rank);
    for (int64_t d = rank - 1; d >= 0; --d) {
      Value i = d == 0 ? rest : arith::RemUIOp::create(b, rest, counts[d]);
      if (d > 0)
        rest = arith::DivUIOp::create(b, rest, counts[d]);
      ivs[d] = arith::AddIOp::create(
          b, op.getLowerBound()[d],
          arith::MulIOp::create(b, i, op.getStep()[d]));
    }
    for (int64_t d = 0; d < rank; ++d)
      mapping.map(op.getInductionVars()[d], ivs[d]);
    for (Operation &inner : op.getBody()->without_terminator())
      b.clone(inner, mapping);
    op.erase();
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// attn-gpu-sink-constants
//===----------------------------------------------------------------------===//

namespace {
struct GpuSinkConstantsPass
    : public attn::impl::AttnGpuSinkConstantsBase<GpuSinkConstantsPass> {
  using Base::Base;
  void runOnOperation() override {
    getOperation()->walk([](gpu::LaunchOp launch) {
      Region &body = launch.getBody();
      SetVector<Value> above;
      getUsedValuesDefinedAbove(body, above);
      OpBuilder b = OpBuilder::atBlockBegin(&body.front());
      for (Value v : above) {
        Operation *def = v.getDefiningOp();
        // Constants, and constant globals (tables): outlining then copies
        // the global into the kernel module, so kernels read it from device
        // memory with no per-call copy.
        auto global = dyn_cast_or_null<memref::GetGlobalOp>(def);
        bool constantGlobal = false;
        if (global)
          if (auto g = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
                  global, global.getNameAttr()))
            constantGlobal = g.getConstant();
        if (!def || !(def->hasTrait<OpTrait::ConstantLike>() || constantGlobal))
          continue;
        Value copy = b.clone(*def)->getResult(0);
        v.replaceUsesWithIf(copy, [&](OpOperand &use) {
          return body.isAncestor(use.getOwner()->getParentRegion());
        });
      }
    });
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// attn-gpu-host-memory
//===----------------------------------------------------------------------===//

namespace {
struct GpuHostMemoryPass
    : public attn::impl::AttnGpuHostMemoryBase<GpuHostMemoryPass> {
  using Base::Base;

  static bool inKernel(Operation *op) {
    return op->getParentOfType<gpu::LaunchOp>() ||
           op->getParentOfType<gpu::GPUModuleOp>();
  }

  static bool isKernelUse(Operation *user) {
    return inKernel(user) || isa<gpu::LaunchFuncOp>(user);
  }

  /// True if `v` is used by a kernel; `throughView` is set if only a view
  /// of it is.
  static bool usedByKernel(Value v, bool &throughView) {
    throughView = false;
    if (llvm::any_of(v.getUsers(), isKernelUse))
      return true;
    SmallVector<Value> work = {v};
    while (!work.empty()) {
      Value x = work.pop_back_val();
      for (Operation *user : x.getUsers()) {
        if (x != v && isKernelUse(user))
          throughView = true;
        if (isa<ViewLikeOpInterface>(user))
          for (Value r : user->getResults())
            work.push_back(r);
      }
    }
    return throughView;
  }

  static void freeAt(OpBuilder &b, Location loc, Value memref) {
    auto tokenType = gpu::AsyncTokenType::get(b.getContext());
    Value t0 = gpu::WaitOp::create(b, loc, tokenType, ValueRange{})
                   .getAsyncToken();
    Value t1 = gpu::DeallocOp::create(b, loc, tokenType, ValueRange{t0}, memref)
                   .getAsyncToken();
    gpu::WaitOp::create(b, loc, Type(), ValueRange{t1});
  }

  static Value sharedAlloc(OpBuilder &b, Location loc, MemRefType type,
                           ValueRange dynamicSizes) {
    return gpu::AllocOp::create(b, loc, type, Type(), ValueRange{},
                                dynamicSizes, ValueRange{},
                                /*hostShared=*/true)
        .getMemref();
  }

  void runOnOperation() override {
    SmallVector<Operation *> allocs, deallocs, constants, viewed;
    getOperation()->walk([&](Operation *op) {
      if (inKernel(op))
        return;
      if (isa<memref::AllocOp>(op))
        allocs.push_back(op);
      else if (isa<memref::DeallocOp>(op))
        deallocs.push_back(op);
      else if (isa<memref::GetGlobalOp, memref::AllocaOp>(op)) {
        bool throughView = false;
        if (!usedByKernel(op->getResult(0), throughView))
          return;
        if (throughView)
          viewed.push_back(op);
        else
          constants.push_back(op);
      }
    });
    for (Operation *op : viewed) {
      op->emitOpError() << getArgument()
                        << ": a GPU kernel reads a view of this host buffer; "
                           "only direct uses can be given a device copy";
      return signalPassFailure();
    }
    // Host values kernels read through a copy: only static, identity-layout
    // buffers, and only constant globals (a mutable global's copy would
    // stop being the global).
    for (Operation *op : constants) {
      auto type = cast<MemRefType>(op->getResult(0).getType());
      if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
          type.getMemorySpace()) {
        op->emitOpError() << getArgument()
                          << ": a GPU kernel reads this host buffer, which "
                             "is not a static, identity-layout memref in the "
                             "default memory space";
        return signalPassFailure();
      }
      if (auto g = dyn_cast<memref::GetGlobalOp>(op)) {
        auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
            g, g.getNameAttr());
        if (!global || !global.getConstant()) {
          op->emitOpError() << getArgument()
                            << ": a GPU kernel reads a mutable host global";
          return signalPassFailure();
        }
      }
    }
    OpBuilder b(&getContext());
    for (Operation *op : allocs) {
      auto alloc = cast<memref::AllocOp>(op);
      b.setInsertionPoint(op);
      Value shared = sharedAlloc(b, op->getLoc(), alloc.getType(),
                                 alloc.getDynamicSizes());
      alloc.replaceAllUsesWith(shared);
      op->erase();
    }
    for (Operation *op : deallocs) {
      b.setInsertionPoint(op);
      freeAt(b, op->getLoc(), cast<memref::DeallocOp>(op).getMemref());
      op->erase();
    }
    // Globals and stack buffers that kernels read: a host-shared copy for
    // the rest of the block.
    for (Operation *op : constants) {
      Value v = op->getResult(0);
      auto type = cast<MemRefType>(v.getType());
      b.setInsertionPointAfter(op);
      Value copy = sharedAlloc(b, op->getLoc(),
                               MemRefType::get(type.getShape(),
                                               type.getElementType()),
                               ValueRange{});
      if (!isa<memref::AllocaOp>(op))
        memref::CopyOp::create(b, op->getLoc(), v, copy);
      // Only the kernels' uses move to the copy, so nothing that outlives
      // the block sees the copy (freed at its end).
      v.replaceUsesWithIf(
          copy, [](OpOperand &use) { return isKernelUse(use.getOwner()); });
      b.setInsertionPoint(op->getBlock()->getTerminator());
      freeAt(b, op->getLoc(), copy);
    }
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// attn-legalize-for-nvvm
//===----------------------------------------------------------------------===//

namespace {
/// bf16 nvgpu.mma.sync m16n8k16 -> nvvm.mma.sync on i32-packed operands.
struct Bf16MmaToNVVM : OpRewritePattern<nvgpu::MmaSyncOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(nvgpu::MmaSyncOp op,
                                PatternRewriter &rewriter) const override {
    auto aType = cast<VectorType>(op.getMatrixA().getType());
    auto cType = cast<VectorType>(op.getMatrixC().getType());
    SmallVector<int64_t> shape = llvm::to_vector(
        llvm::map_range(op.getMmaShape().getAsValueRange<IntegerAttr>(),
                        [](const APInt &v) { return v.getSExtValue(); }));
    if (!aType.getElementType().isBF16() ||
        shape != SmallVector<int64_t>{16, 8, 16} ||
        !cType.getElementType().isF32())
      return rewriter.notifyMatchFailure(op, "not a bf16 m16n8k16 mma");
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Type i32 = b.getI32Type();
    auto packed = [&](Value m) {
      SmallVector<Value> regs;
      auto t = cast<VectorType>(m.getType());
      for (int64_t i = 0; i < t.getDimSize(0); ++i) {
        Value row = vector::ExtractOp::create(b, m, ArrayRef<int64_t>{i});
        Value bits = vector::BitCastOp::create(
            b, VectorType::get({1}, i32), row);
        regs.push_back(
            vector::ExtractOp::create(b, bits, ArrayRef<int64_t>{0}));
      }
      return regs;
    };
    SmallVector<Value> a = packed(op.getMatrixA());
    SmallVector<Value> bb = packed(op.getMatrixB());
    SmallVector<Value> c;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j)
        c.push_back(vector::ExtractOp::create(b, op.getMatrixC(),
                                              ArrayRef<int64_t>{i, j}));
    Type f32 = b.getF32Type();
    auto resType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(4, f32));
    Value res = NVVM::MmaOp::create(
        b, resType, a, bb, c, shape, std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                      NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    Value out = arith::ConstantOp::create(b, b.getZeroAttr(cType));
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        Value e = LLVM::ExtractValueOp::create(b, res, i * 2 + j);
        out = vector::InsertOp::create(b, e, out, ArrayRef<int64_t>{i, j});
      }
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct LegalizeForNVVMPass
    : public attn::impl::AttnLegalizeForNVVMBase<LegalizeForNVVMPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<Bf16MmaToNVVM>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    getOperation()->walk([&](gpu::GPUFuncOp fn) {
      for (unsigned i = 0, e = fn.getNumWorkgroupAttributions(); i < e; ++i)
        if (!fn.getWorkgroupAttributionAttr(i, "llvm.align"))
          fn.setWorkgroupAttributionAttr(
              i, "llvm.align",
              IntegerAttr::get(IntegerType::get(&getContext(), 64), 16));
    });
  }
};
} // namespace
