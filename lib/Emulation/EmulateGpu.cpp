//===- EmulateGpu.cpp - Run gpu.launch kernels on the CPU -----------------===//
//
// attn-emulate-gpu: each gpu.launch becomes loops over its blocks, each
// block an omp.parallel team of blockDim threads running the kernel body.
// Collective operations (barrier, shuffle, mma.sync) are rebuilt from
// omp.barrier and a per-launch scratch buffer. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Emulation/Passes.h"

#include "attn-opt/Dialect/Attn/Utils/ArithBuilder.h"
#include "attn-opt/Dialect/Attn/Utils/MmaFragment.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEMULATEGPU
#include "attn-opt/Emulation/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {

/// Scratch slots per thread: a warp's 32 x 12 floats hold a dense A
/// (16 x 16) and B (16 x 8) of mma.sync.
constexpr int64_t kSlots = 12;

struct Emulator : KernelArith {
  Value scratch;  // memref<threads x kSlots x f32>
  Value tid;      // linear thread id in the block
  Value nthreads; // threads in the block

  Value barrier() {
    omp::BarrierOp::create(b);
    return Value();
  }

  Value toSlot(Value v) {
    Type t = v.getType();
    if (t.isF32())
      return v;
    if (t.isInteger(32))
      return arith::BitcastOp::create(b, b.getF32Type(), v);
    return arith::ExtFOp::create(b, b.getF32Type(), v);
  }
  Value fromSlot(Value v, Type t) {
    if (t.isF32())
      return v;
    if (t.isInteger(32))
      return arith::BitcastOp::create(b, t, v);
    return arith::TruncFOp::create(b, t, v);
  }
  Value load(Value thread, int64_t slot) {
    return memref::LoadOp::create(b, scratch, ValueRange{thread, idx(slot)});
  }
  void store(Value v, int64_t slot) {
    memref::StoreOp::create(b, v, scratch, ValueRange{tid, idx(slot)});
  }

  /// gpu.shuffle: `valid` when this lane is below `width` and the source
  /// lane is in [0, width) (and in the block); otherwise the lane keeps its
  /// own value (the op leaves it unspecified).
  LogicalResult shuffle(gpu::ShuffleOp op) {
    Type t = op.getValue().getType();
    if (!t.isF32() && !t.isInteger(32))
      return op.emitOpError("attn-emulate-gpu: only 32-bit shuffles");
    store(toSlot(op.getValue()), 0);
    barrier();
    Value lane = arith::RemUIOp::create(b, tid, idx(32));
    Value warpBase = arith::SubIOp::create(b, tid, lane);
    auto toIndex = [&](Value v) {
      return arith::IndexCastOp::create(b, b.getIndexType(), v).getResult();
    };
    Value off = toIndex(op.getOffset());
    Value width = toIndex(op.getWidth());
    Value src;
    switch (op.getMode()) {
    case gpu::ShuffleMode::XOR:
      src = arith::XOrIOp::create(b, lane, off);
      break;
    case gpu::ShuffleMode::DOWN:
      src = add(lane, off);
      break;
    case gpu::ShuffleMode::UP:
      src = arith::SubIOp::create(b, lane, off);
      break;
    case gpu::ShuffleMode::IDX:
      src = off;
      break;
    }
    auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
      return arith::CmpIOp::create(b, p, x, y).getResult();
    };
    Value valid = arith::AndIOp::create(
        b, cmp(arith::CmpIPredicate::slt, lane, width),
        arith::AndIOp::create(
            b, cmp(arith::CmpIPredicate::sge, src, idx(0)),
            arith::AndIOp::create(
                b, cmp(arith::CmpIPredicate::slt, src, width),
                cmp(arith::CmpIPredicate::slt, add(warpBase, src), nthreads))));
    Value srcSafe = arith::SelectOp::create(b, valid, src, lane);
    Value v = fromSlot(load(add(warpBase, srcSafe), 0), t);
    barrier();
    op.getShuffleResult().replaceAllUsesWith(v);
    op.getValid().replaceAllUsesWith(valid);
    op.erase();
    return success();
  }

  /// Element `slot` of matrix `m`'s fragment, for a constant `slot`.
  Value fragmentElement(Value m, int64_t slot, int64_t cols) {
    return vector::ExtractOp::create(
        b, m, ArrayRef<int64_t>{slot / cols, slot % cols});
  }

  LogicalResult mma(nvgpu::MmaSyncOp op) {
    auto aType = cast<VectorType>(op.getMatrixA().getType());
    auto bType = cast<VectorType>(op.getMatrixB().getType());
    auto cType = cast<VectorType>(op.getMatrixC().getType());
    Type in = aType.getElementType();
    SmallVector<int64_t> shape;
    for (APInt v : op.getMmaShape().getAsValueRange<IntegerAttr>())
      shape.push_back(v.getSExtValue());
    if (shape != SmallVector<int64_t>{16, 8, 16} ||
        !(in.isF16() || in.isBF16()) ||
        aType.getShape() != ArrayRef<int64_t>{4, 2} ||
        bType.getShape() != ArrayRef<int64_t>{2, 2} ||
        cType.getShape() != ArrayRef<int64_t>{2, 2} ||
        !cType.getElementType().isF32())
      return op.emitOpError("attn-emulate-gpu: only m16n8k16 with f16/bf16 "
                            "inputs and f32 accumulators");
    // mma.sync needs the whole warp.
    Value warpEnd = add(
        arith::SubIOp::create(b, tid, arith::RemUIOp::create(b, tid, idx(32))),
        idx(32));
    cf::AssertOp::create(
        b,
        arith::CmpIOp::create(b, arith::CmpIPredicate::sle, warpEnd, nthreads),
        "attn-emulate-gpu: nvgpu.mma.sync in a partial warp");
    // Each lane writes its A and B elements into the warp's dense A (16 x
    // 16) and B (16 x 8, K x N) in the scratch buffer, at the coordinates
    // of MLIR's fragment layout (the warp's 32 x kSlots floats hold both).
    Value lane = arith::RemUIOp::create(b, tid, idx(32));
    Value warpBase = arith::SubIOp::create(b, tid, lane);
    auto element = [&](Value offset) {
      // Flat offset in the warp's share of the scratch buffer.
      Value flat = add(mul(warpBase, idx(kSlots)), offset);
      return std::make_pair(arith::DivUIOp::create(b, flat, idx(kSlots)),
                            arith::RemUIOp::create(b, flat, idx(kSlots)));
    };
    auto put = [&](Value v, Value offset) {
      auto [t, s] = element(offset);
      memref::StoreOp::create(b, v, scratch, ValueRange{t, s});
    };
    auto get = [&](Value offset) {
      auto [t, s] = element(offset);
      return memref::LoadOp::create(b, scratch, ValueRange{t, s});
    };
    constexpr int64_t kBOffset = 16 * 16;
    for (int64_t s = 0; s < mmaSlots(MmaOperand::A); ++s) {
      auto [row, col] = mmaCoordinate(b, MmaOperand::A, lane, s);
      put(toSlot(fragmentElement(op.getMatrixA(), s, 2)),
          add(mul(row, idx(16)), col));
    }
    for (int64_t s = 0; s < mmaSlots(MmaOperand::B); ++s) {
      auto [row, col] = mmaCoordinate(b, MmaOperand::B, lane, s);
      put(toSlot(fragmentElement(op.getMatrixB(), s, 2)),
          add(idx(kBOffset), add(mul(row, idx(8)), col)));
    }
    barrier();
    // This lane's outputs: C fragment slots 0..3.
    SmallVector<Value> acc;
    SmallVector<std::pair<Value, Value>> coords;
    for (int64_t s = 0; s < mmaSlots(MmaOperand::C); ++s) {
      acc.push_back(fragmentElement(op.getMatrixC(), s, 2));
      coords.push_back(mmaCoordinate(b, MmaOperand::C, lane, s));
    }
    auto loop = scf::ForOp::create(
        b, idx(0), idx(16), idx(1), acc,
        [&](OpBuilder &, Location, Value k, ValueRange sums) {
          SmallVector<Value> next;
          for (auto [s, rc] : llvm::enumerate(coords)) {
            Value x = get(add(mul(rc.first, idx(16)), k));
            Value y = get(add(idx(kBOffset), add(mul(k, idx(8)), rc.second)));
            next.push_back(math::FmaOp::create(b, x, y, sums[s]));
          }
          scf::YieldOp::create(b, next);
        });
    barrier();
    Value out = arith::ConstantOp::create(b, b.getZeroAttr(cType));
    for (int64_t s = 0; s < 4; ++s)
      out = vector::InsertOp::create(b, loop.getResult(s), out,
                                     ArrayRef<int64_t>{s / 2, s % 2});
    op.getRes().replaceAllUsesWith(out);
    op.erase();
    return success();
  }
};

/// What one emulated launch needs: the kernel body, how its values map,
/// and the launch geometry.
struct LaunchParts {
  Region *body;
  IRMapping map; // kernel arguments (or gpu.launch block arguments)
  ArrayRef<BlockArgument> workgroup, privates;
  gpu::KernelDim3 grid, block;
  std::optional<gpu::KernelDim3> ids, tids, gridArgs, blockArgs;
};

struct EmulateGpuPass : public attn::impl::AttnEmulateGpuBase<EmulateGpuPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> launches;
    module.walk([&](Operation *op) {
      if (isa<gpu::LaunchOp, gpu::LaunchFuncOp>(op) &&
          !op->getParentOfType<gpu::GPUModuleOp>())
        launches.push_back(op);
    });
    for (Operation *op : launches) {
      LogicalResult r = success();
      if (auto l = dyn_cast<gpu::LaunchOp>(op))
        r = emulateLaunch(l);
      else
        r = emulateLaunchFunc(cast<gpu::LaunchFuncOp>(op));
      if (failed(r))
        return signalPassFailure();
    }
    // Kernels now live on the host, with the globals they read.
    SymbolTable symbols(module);
    for (auto m : module.getOps<gpu::GPUModuleOp>())
      for (auto g : m.getOps<memref::GlobalOp>())
        if (!symbols.lookup(g.getSymName()))
          symbols.insert(g.clone());
    for (auto m : llvm::make_early_inc_range(module.getOps<gpu::GPUModuleOp>()))
      m.erase();
    for (auto b : llvm::make_early_inc_range(module.getOps<gpu::BinaryOp>()))
      b.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }

  static func::FuncOp runtimeDecl(ModuleOp module, StringRef name) {
    if (auto f = module.lookupSymbol<func::FuncOp>(name))
      return f;
    OpBuilder b(module.getBodyRegion());
    auto f = func::FuncOp::create(b, module.getLoc(), name,
                                  b.getFunctionType({}, {b.getI32Type()}));
    f.setPrivate();
    return f;
  }
  func::FuncOp threadNumDecl(ModuleOp module) {
    return runtimeDecl(module, "omp_get_thread_num");
  }
  func::FuncOp teamSizeDecl(ModuleOp module) {
    return runtimeDecl(module, "omp_get_num_threads");
  }

  /// The launch forms the emulator does not model.
  template <typename LaunchT>
  static LogicalResult checkSupported(LaunchT op, bool asyncObject) {
    if (op.getAsyncToken() || !op.getAsyncDependencies().empty() || asyncObject)
      return op.emitOpError("attn-emulate-gpu: async launches unsupported");
    if (op.hasClusterSize())
      return op.emitOpError("attn-emulate-gpu: clusters unsupported");
    if (op.getDynamicSharedMemorySize())
      return op.emitOpError(
          "attn-emulate-gpu: dynamic shared memory unsupported");
    return success();
  }

  LogicalResult emulateLaunch(gpu::LaunchOp op) {
    if (failed(checkSupported(op, /*asyncObject=*/false)))
      return failure();
    LaunchParts parts;
    parts.body = &op.getBody();
    parts.workgroup = op.getWorkgroupAttributions();
    parts.privates = op.getPrivateAttributions();
    parts.grid = op.getGridSizeOperandValues();
    parts.block = op.getBlockSizeOperandValues();
    parts.ids = op.getBlockIds();
    parts.tids = op.getThreadIds();
    parts.gridArgs = op.getGridSize();
    parts.blockArgs = op.getBlockSize();
    return emulate(op, parts);
  }

  LogicalResult emulateLaunchFunc(gpu::LaunchFuncOp op) {
    if (failed(checkSupported(op, static_cast<bool>(op.getAsyncObject()))))
      return failure();
    auto fn = SymbolTable::lookupNearestSymbolFrom<gpu::GPUFuncOp>(
        op, op.getKernel());
    if (!fn)
      return op.emitOpError("attn-emulate-gpu: kernel ")
             << op.getKernel() << " not found (or not a gpu.func)";
    LaunchParts parts;
    parts.body = &fn.getBody();
    for (auto [arg, v] : llvm::zip(fn.getArguments(), op.getKernelOperands()))
      parts.map.map(arg, v);
    parts.workgroup = fn.getWorkgroupAttributions();
    parts.privates = fn.getPrivateAttributions();
    parts.grid = op.getGridSizeOperandValues();
    parts.block = op.getBlockSizeOperandValues();
    return emulate(op, parts);
  }

  LogicalResult emulate(Operation *op, LaunchParts &parts) {
    if (!parts.body->hasOneBlock())
      return op->emitOpError(
          "attn-emulate-gpu: kernels with unstructured control flow "
          "unsupported");
    auto module = op->getParentOfType<ModuleOp>();
    func::FuncOp threadNum = threadNumDecl(module);
    ImplicitLocOpBuilder b(op->getLoc(), op);
    auto idx = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, v);
    };
    gpu::KernelDim3 grid = parts.grid, block = parts.block;
    Value nthreads = arith::MulIOp::create(
        b, arith::MulIOp::create(b, block.x, block.y), block.z);
    Value scratch = memref::AllocOp::create(
        b, MemRefType::get({ShapedType::kDynamic, kSlots}, b.getF32Type()),
        ValueRange{nthreads});

    // for z, y, x over the grid.
    SmallVector<Value> bids(3);
    Value gridDims[3] = {grid.z, grid.y, grid.x};
    for (int d = 0; d < 3; ++d) {
      auto loop = scf::ForOp::create(b, idx(0), gridDims[d], idx(1));
      bids[2 - d] = loop.getInductionVar();
      b.setInsertionPointToStart(loop.getBody());
    }
    SmallVector<Value> shared;
    for (BlockArgument a : parts.workgroup) {
      auto t = cast<MemRefType>(a.getType());
      shared.push_back(memref::AllocOp::create(
          b, MemRefType::get(t.getShape(), t.getElementType())));
    }
    Value teamSize = arith::IndexCastOp::create(b, b.getI32Type(), nthreads);
    auto par = omp::ParallelOp::create(b);
    par.getNumThreadsMutable().assign(teamSize);
    Block *body = b.createBlock(&par.getRegion());
    b.setInsertionPointToStart(body);
    Value tnum = arith::IndexCastOp::create(
        b, b.getIndexType(),
        func::CallOp::create(b, threadNum, ValueRange{}).getResult(0));
    // Every GPU thread needs an OpenMP thread: a smaller team (thread
    // limits, nesting) would silently skip some.
    Value team = func::CallOp::create(b, teamSizeDecl(module), ValueRange{})
                     .getResult(0);
    cf::AssertOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, team, teamSize),
        "attn-emulate-gpu: the OpenMP team is smaller than the GPU block");
    Value tx = arith::RemUIOp::create(b, tnum, block.x);
    Value rest = arith::DivUIOp::create(b, tnum, block.x);
    Value ty = arith::RemUIOp::create(b, rest, block.y);
    Value tz = arith::DivUIOp::create(b, rest, block.y);
    Value tids[3] = {tx, ty, tz};
    Value blockDims[3] = {block.x, block.y, block.z};
    Value gridSizes[3] = {grid.x, grid.y, grid.z};

    IRMapping &map = parts.map;
    auto mapDims = [&](std::optional<gpu::KernelDim3> args, Value *vals) {
      if (!args)
        return;
      map.map(args->x, vals[0]);
      map.map(args->y, vals[1]);
      map.map(args->z, vals[2]);
    };
    mapDims(parts.ids, bids.data());
    mapDims(parts.tids, tids);
    mapDims(parts.gridArgs, gridSizes);
    mapDims(parts.blockArgs, blockDims);
    for (auto [a, s] : llvm::zip(parts.workgroup, shared))
      map.map(a, s);
    for (BlockArgument a : parts.privates) {
      auto t = cast<MemRefType>(a.getType());
      map.map(a, memref::AllocaOp::create(
                     b, MemRefType::get(t.getShape(), t.getElementType())));
    }
    SmallVector<Operation *> cloned;
    for (Operation &inner : parts.body->front().without_terminator())
      cloned.push_back(b.clone(inner, map));
    omp::TerminatorOp::create(b);

    // Collective and id operations inside the cloned body.
    Emulator em{KernelArith(b), scratch, tnum, nthreads};
    SmallVector<Operation *> special;
    for (Operation *root : cloned)
      root->walk([&](Operation *inner) {
        if (isa<gpu::GPUDialect, nvgpu::NVGPUDialect>(inner->getDialect()))
          special.push_back(inner);
      });
    for (Operation *inner : special) {
      b.setInsertionPoint(inner);
      b.setLoc(inner->getLoc());
      auto replace = [&](Value v) {
        inner->getResult(0).replaceAllUsesWith(v);
        inner->erase();
      };
      LogicalResult r = success();
      if (isa<gpu::BarrierOp>(inner)) {
        omp::BarrierOp::create(b);
        inner->erase();
      } else if (auto s = dyn_cast<gpu::ShuffleOp>(inner)) {
        r = em.shuffle(s);
      } else if (auto m = dyn_cast<nvgpu::MmaSyncOp>(inner)) {
        r = em.mma(m);
      } else if (isa<gpu::LaneIdOp>(inner)) {
        replace(arith::RemUIOp::create(b, tnum, idx(32)));
      } else if (auto d = dyn_cast<gpu::ThreadIdOp>(inner)) {
        replace(tids[int(d.getDimension())]);
      } else if (auto d = dyn_cast<gpu::BlockIdOp>(inner)) {
        replace(bids[int(d.getDimension())]);
      } else if (auto d = dyn_cast<gpu::BlockDimOp>(inner)) {
        replace(blockDims[int(d.getDimension())]);
      } else if (auto d = dyn_cast<gpu::GridDimOp>(inner)) {
        replace(gridSizes[int(d.getDimension())]);
      } else {
        r = inner->emitOpError("attn-emulate-gpu: unsupported in an "
                               "emulated kernel");
      }
      if (failed(r))
        return failure();
    }

    b.setInsertionPointAfter(par);
    for (Value s : shared)
      memref::DeallocOp::create(b, s);
    b.setInsertionPointAfter(op);
    memref::DeallocOp::create(b, scratch);
    op->erase();
    return success();
  }
};

} // namespace
