//===- LowerCommunication.cpp - attn's comm ops to the mpi dialect -----===//
//
// The buffer form of attn.exchange / attn.exchange_wait / attn.allreduce to
// `mpi` (Passes.td, AttnLowerCommunication).
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Codegen/Passes.h"
#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Host/RuntimeErrors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MPI/IR/MPI.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLOWERCOMMUNICATION
#include "attn-opt/Codegen/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

namespace {
/// A buffer as the 1-D contiguous buffer MPI sends from or receives into:
/// collapsed in place when it has the identity layout, else a fresh
/// contiguous copy (`staged`, to be freed by the caller).
struct FlatBuffer {
  Value flat;
  Value staged;
};

FlatBuffer flatten(ImplicitLocOpBuilder &b, Value buffer, bool copyIn) {
  auto type = cast<MemRefType>(buffer.getType());
  Value contiguous = buffer;
  Value staged;
  if (!type.getLayout().isIdentity()) {
    SmallVector<Value> dynamic;
    for (auto [d, size] : llvm::enumerate(type.getShape()))
      if (ShapedType::isDynamic(size))
        dynamic.push_back(memref::DimOp::create(b, buffer, d));
    auto plain = MemRefType::get(type.getShape(), type.getElementType());
    staged = memref::AllocOp::create(b, plain, dynamic);
    if (copyIn)
      memref::CopyOp::create(b, buffer, staged);
    contiguous = staged;
  }
  if (type.getRank() == 1)
    return {contiguous, staged};
  ReassociationIndices all;
  for (int64_t d = 0; d < type.getRank(); ++d)
    all.push_back(d);
  Value flat = memref::CollapseShapeOp::create(
      b, contiguous, ArrayRef<ReassociationIndices>{all});
  return {flat, staged};
}

constexpr StringLiteral kCounter = "attn_opt_bytes_sent_counter";
constexpr StringLiteral kCounterReader = "attn_opt_bytes_sent";

/// The module's byte counter and its reader, created once.
void createCounter(ModuleOp module) {
  if (module.lookupSymbol(kCounter))
    return;
  ImplicitLocOpBuilder b(module.getLoc(), module.getContext());
  b.setInsertionPointToStart(module.getBody());
  auto type = MemRefType::get({}, b.getI64Type());
  memref::GlobalOp::create(
      b, kCounter, b.getStringAttr("private"), type,
      DenseElementsAttr::get(RankedTensorType::get({}, b.getI64Type()),
                             b.getI64IntegerAttr(0).getValue()),
      /*constant=*/false, /*alignment=*/IntegerAttr());
  auto reader = func::FuncOp::create(b, kCounterReader,
                                     b.getFunctionType({}, {b.getI64Type()}));
  b.setInsertionPointToStart(reader.addEntryBlock());
  Value global = memref::GetGlobalOp::create(b, type, kCounter);
  func::ReturnOp::create(
      b, ValueRange{memref::LoadOp::create(b, global, ValueRange{})});
}

/// Adds the bytes of `flat` (a 1-D buffer) to the counter when `sends`.
void countBytes(ImplicitLocOpBuilder &b, Value flat, Value sends) {
  auto type = cast<MemRefType>(flat.getType());
  Value elements = memref::DimOp::create(b, flat, 0);
  Value bytes = arith::MulIOp::create(
      b, arith::IndexCastOp::create(b, b.getI64Type(), elements),
      arith::ConstantIntOp::create(
          b, type.getElementType().getIntOrFloatBitWidth() / 8, 64));
  if (sends)
    bytes = arith::SelectOp::create(b, sends, bytes,
                                    arith::ConstantIntOp::create(b, 0, 64));
  Value global = memref::GetGlobalOp::create(
      b, MemRefType::get({}, b.getI64Type()), kCounter);
  Value old = memref::LoadOp::create(b, global, ValueRange{});
  memref::StoreOp::create(b, arith::AddIOp::create(b, old, bytes), global,
                          ValueRange{});
}

/// Points each mpi.comm_world of the module at the host's communicator:
/// `attn_opt_communicator()` (an MPI handle as an integer; 0 keeps
/// MPI_COMM_WORLD), so a kernel library's caller picks the communicator
/// (PREFIX_set_communicator) and the same code runs on any of them. The
/// integer becomes a !mpi.comm through unrealized casts, which the LLVM
/// lowering's i64 handle (both MPI ABIs) resolves.
void useHostCommunicator(ModuleOp module) {
  SmallVector<mpi::CommWorldOp> worlds;
  module.walk([&](mpi::CommWorldOp op) { worlds.push_back(op); });
  if (worlds.empty())
    return;
  MLIRContext *ctx = module.getContext();
  auto i64 = IntegerType::get(ctx, 64);
  auto callee = module.lookupSymbol<func::FuncOp>(kCommunicatorFunction);
  if (!callee) {
    ImplicitLocOpBuilder mb(module.getLoc(), ctx);
    mb.setInsertionPointToEnd(module.getBody());
    callee = func::FuncOp::create(mb, kCommunicatorFunction,
                                  mb.getFunctionType({}, {i64}));
    callee.setPrivate();
  }
  for (mpi::CommWorldOp world : worlds) {
    ImplicitLocOpBuilder b(world.getLoc(), world);
    b.setInsertionPointAfter(world);
    Value worldHandle =
        UnrealizedConversionCastOp::create(b, i64, world.getResult())
            .getResult(0);
    Value given = func::CallOp::create(b, callee, ValueRange{}).getResult(0);
    Value unset = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, given,
                                        arith::ConstantIntOp::create(b, 0, 64));
    Value handle = arith::SelectOp::create(b, unset, worldHandle, given);
    Value comm = UnrealizedConversionCastOp::create(
                     b, world.getResult().getType(), handle)
                     .getResult(0);
    world.getResult().replaceAllUsesExcept(comm, worldHandle.getDefiningOp());
  }
}

struct AttnLowerCommunication
    : public attn::impl::AttnLowerCommunicationBase<AttnLowerCommunication> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<ExchangeOp, ExchangeWaitOp, AllReduceOp>(op))
        ops.push_back(op);
    });
    if (!ops.empty())
      createCounter(getOperation());
    useHostCommunicator(getOperation());
    // What each exchange staged: freed (and copied out) at its wait.
    DenseMap<Operation *, std::pair<FlatBuffer, FlatBuffer>> staging;
    for (Operation *op : ops) {
      if (op->getNumResults() && isa<TensorType>(op->getResult(0).getType())) {
        op->emitOpError("must be bufferized before attn-lower-communication");
        return signalPassFailure();
      }
      ImplicitLocOpBuilder b(op->getLoc(), op);
      if (auto exchange = dyn_cast<ExchangeOp>(op)) {
        FlatBuffer send = flatten(b, exchange.getSend(), /*copyIn=*/true);
        FlatBuffer into = flatten(b, exchange.getInto(), /*copyIn=*/false);
        // A negative peer means none. MPICH would take -1 as
        // MPI_PROC_NULL, Open MPI as MPI_ANY_SOURCE: the call is skipped.
        Value zero = arith::ConstantIntOp::create(b, 0, 32);
        Value sends = arith::CmpIOp::create(b, arith::CmpIPredicate::sge,
                                            exchange.getDest(), zero);
        Value receives = arith::CmpIOp::create(b, arith::CmpIPredicate::sge,
                                               exchange.getSource(), zero);
        countBytes(b, send.flat, sends);
        // MLIR 22 lowers only the blocking mpi.send / mpi.recv to MPICH
        // calls: even ranks send first, odd ranks receive first, which
        // breaks the cycle of a ring (a rank sending to itself is never
        // asked: the partitioning exchanges nothing on one rank).
        Value rank = mpi::CommRankOp::create(b, Type(), b.getI32Type(),
                                             exchange.getComm())
                         .getRank();
        Value two = arith::ConstantIntOp::create(b, 2, 32);
        Value even =
            arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                  arith::RemUIOp::create(b, rank, two), zero);
        auto sendOp = [&](OpBuilder &nb, Location loc) {
          scf::IfOp::create(nb, loc, sends, [&](OpBuilder &ib, Location l) {
            mpi::SendOp::create(ib, l, Type(), send.flat, exchange.getTag(),
                                exchange.getDest(), exchange.getComm());
            scf::YieldOp::create(ib, l);
          });
        };
        auto recvOp = [&](OpBuilder &nb, Location loc) {
          scf::IfOp::create(nb, loc, receives, [&](OpBuilder &ib, Location l) {
            mpi::RecvOp::create(ib, l, Type(), into.flat, exchange.getTag(),
                                exchange.getSource(), exchange.getComm());
            scf::YieldOp::create(ib, l);
          });
        };
        scf::IfOp::create(
            b, even,
            [&](OpBuilder &nb, Location loc) {
              sendOp(nb, loc);
              recvOp(nb, loc);
              scf::YieldOp::create(nb, loc);
            },
            [&](OpBuilder &nb, Location loc) {
              recvOp(nb, loc);
              sendOp(nb, loc);
              scf::YieldOp::create(nb, loc);
            });
        staging[op] = {send, into};
        continue;
      }
      if (isa<ExchangeWaitOp>(op))
        continue;
      auto reduce = cast<AllReduceOp>(op);
      FlatBuffer in = flatten(b, reduce.getInput(), /*copyIn=*/true);
      FlatBuffer out = flatten(b, reduce.getInto(), /*copyIn=*/false);
      countBytes(b, in.flat, Value());
      mpi::AllReduceOp::create(
          b, Type(), in.flat, out.flat,
          mpi::MPI_ReductionOpEnumAttr::get(b.getContext(),
                                            mpi::MPI_ReductionOpEnum::MPI_SUM),
          reduce.getComm());
      if (out.staged)
        memref::CopyOp::create(b, out.staged, reduce.getInto());
      for (Value staged : {in.staged, out.staged})
        if (staged)
          memref::DeallocOp::create(b, staged);
    }
    // The waits: free what the exchange staged, copy a staged receive out.
    for (auto &[op, buffers] : staging) {
      auto exchange = cast<ExchangeOp>(op);
      // The wait receives into the exchange's buffer (the requests are
      // mpi requests by now).
      Operation *waitOp = nullptr;
      for (Operation *other : ops)
        if (auto w = dyn_cast<ExchangeWaitOp>(other))
          if (w.getIncoming() == exchange.getInto())
            waitOp = w;
      if (!waitOp) {
        exchange.emitOpError("has no attn.exchange_wait");
        return signalPassFailure();
      }
      ImplicitLocOpBuilder b(waitOp->getLoc(), waitOp);
      auto [send, into] = buffers;
      if (into.staged)
        memref::CopyOp::create(b, into.staged, exchange.getInto());
      for (Value staged : {send.staged, into.staged})
        if (staged)
          memref::DeallocOp::create(b, staged);
    }
    // Waits before the exchanges whose requests they use.
    for (Operation *op : llvm::reverse(ops))
      op->erase();
  }
};
} // namespace
