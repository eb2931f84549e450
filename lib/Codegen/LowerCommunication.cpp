//===- LowerCommunication.cpp - attn's comm ops to the mpi dialect -----===//
//
// The buffer form of attn.exchange / attn.exchange_wait / attn.allreduce to
// `mpi` (Passes.td, AttnLowerCommunication).
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Codegen/Passes.h"
#include "attn-opt/Dialect/Attn/IR/AttnOps.h"
#include "attn-opt/Runtime/Host/RuntimeErrors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/DLTI/DLTI.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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

/// Whether the module's `mpi` lowering targets Open MPI (its dlti.map's
/// "MPI:Implementation"; MPICH otherwise, as the upstream lowering).
bool targetsOpenMpi(ModuleOp module) {
  auto map = module->getAttrOfType<MapAttr>("dlti.map");
  if (!map)
    return false;
  for (DataLayoutEntryInterface entry : map.getEntries()) {
    auto key = llvm::dyn_cast_if_present<StringAttr>(entry.getKey());
    if (key && key.getValue() == "MPI:Implementation")
      if (auto value = dyn_cast<StringAttr>(entry.getValue()))
        return value.getValue() == "OpenMPI";
  }
  return false;
}

/// MPI_Isend, MPI_Irecv and MPI_Wait as calls of the module's MPI ABI
/// (MLIR 22's `mpi` lowering has no nonblocking operations): MPICH's
/// handles are ints (MPI_FLOAT = 0x4c00040a, MPI_BYTE = 0x4c00010d,
/// MPI_STATUS_IGNORE = (MPI_Status *)1), Open MPI's are pointers
/// (&ompi_mpi_float, &ompi_mpi_byte, NULL). A communicator arrives as the
/// i64 handle of attn_opt_communicator().
class NonblockingCalls {
public:
  explicit NonblockingCalls(ModuleOp module)
      : module(module), openMpi(targetsOpenMpi(module)),
        ptr(LLVM::LLVMPointerType::get(module.getContext())),
        i32(IntegerType::get(module.getContext(), 32)),
        i64(IntegerType::get(module.getContext(), 64)) {}

  /// The request slots of one exchange (send, receive).
  Value requests(ImplicitLocOpBuilder &b) {
    return memref::AllocOp::create(b,
                                   MemRefType::get({2}, openMpi ? i64 : i32));
  }
  /// MPI_Isend / MPI_Irecv of the 1-D buffer `flat` into request slot
  /// `slot` of `reqs`.
  void start(ImplicitLocOpBuilder &b, bool isSend, Value flat, Value peer,
             Value tag, Value comm, Value reqs, int64_t slot) {
    auto type = cast<MemRefType>(flat.getType());
    Value count = memref::DimOp::create(b, flat, 0);
    Value datatype;
    if (type.getElementType().isF32()) {
      datatype = handle(b, "ompi_mpi_float", 0x4c00040a);
    } else {
      datatype = handle(b, "ompi_mpi_byte", 0x4c00010d);
      count = arith::MulIOp::create(
          b, count,
          arith::ConstantIndexOp::create(
              b, type.getElementType().getIntOrFloatBitWidth() / 8));
    }
    func::FuncOp fn =
        declare(isSend ? "MPI_Isend" : "MPI_Irecv",
                {ptr, i32, handleType(), i32, i32, handleType(), ptr});
    func::CallOp::create(b, fn,
                         ValueRange{address(b, flat),
                                    arith::IndexCastOp::create(b, i32, count),
                                    datatype, peer, tag, commHandle(b, comm),
                                    slotAddress(b, reqs, slot)});
  }
  /// MPI_Wait on request slot `slot` of `reqs`.
  void wait(ImplicitLocOpBuilder &b, Value reqs, int64_t slot) {
    func::FuncOp fn = declare("MPI_Wait", {ptr, ptr});
    Value status = arith::ConstantIntOp::create(b, openMpi ? 0 : 1, 64);
    Value ignore = LLVM::IntToPtrOp::create(b, ptr, status);
    func::CallOp::create(b, fn, ValueRange{slotAddress(b, reqs, slot), ignore});
  }

private:
  Type handleType() const { return openMpi ? Type(ptr) : Type(i32); }

  func::FuncOp declare(StringRef name, ArrayRef<Type> args) {
    if (auto fn = module.lookupSymbol<func::FuncOp>(name))
      return fn;
    ImplicitLocOpBuilder mb(module.getLoc(), module.getContext());
    mb.setInsertionPointToEnd(module.getBody());
    auto fn = func::FuncOp::create(mb, name, mb.getFunctionType(args, {i32}));
    fn.setPrivate();
    return fn;
  }

  /// A predefined handle: MPICH's int, or the address of Open MPI's global.
  Value handle(ImplicitLocOpBuilder &b, StringRef openMpiGlobal,
               int32_t mpich) {
    if (!openMpi)
      return arith::ConstantIntOp::create(b, mpich, 32);
    if (!module.lookupSymbol(openMpiGlobal)) {
      ImplicitLocOpBuilder mb(module.getLoc(), module.getContext());
      mb.setInsertionPointToStart(module.getBody());
      LLVM::GlobalOp::create(mb, mb.getI8Type(), /*isConstant=*/false,
                             LLVM::Linkage::External, openMpiGlobal,
                             Attribute());
    }
    return LLVM::AddressOfOp::create(b, ptr, openMpiGlobal);
  }

  Value commHandle(ImplicitLocOpBuilder &b, Value comm) {
    Value h = UnrealizedConversionCastOp::create(b, i64, comm).getResult(0);
    if (openMpi)
      return LLVM::IntToPtrOp::create(b, ptr, h);
    return arith::TruncIOp::create(b, i32, h);
  }

  /// The address of element `offset` of the 1-D identity-layout `flat`.
  Value address(ImplicitLocOpBuilder &b, Value flat, int64_t offset = 0) {
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, flat);
    Value at = arith::IndexCastOp::create(b, i64, base);
    if (offset) {
      int64_t bytes = cast<MemRefType>(flat.getType())
                          .getElementType()
                          .getIntOrFloatBitWidth() /
                      8;
      at = arith::AddIOp::create(
          b, at, arith::ConstantIntOp::create(b, offset * bytes, 64));
    }
    return LLVM::IntToPtrOp::create(b, ptr, at);
  }
  Value slotAddress(ImplicitLocOpBuilder &b, Value reqs, int64_t slot) {
    return address(b, reqs, slot);
  }

  ModuleOp module;
  bool openMpi;
  Type ptr, i32, i64;
};

/// Emits `body` with `b` inside `scf.if %condition`, then goes on after it.
void inThen(ImplicitLocOpBuilder &b, Value condition,
            llvm::function_ref<void()> body) {
  auto ifOp = scf::IfOp::create(b, condition, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  body();
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
    struct Started {
      FlatBuffer send, into;
      Value requests, sends, receives;
    };
    DenseMap<Operation *, Started> staging;
    NonblockingCalls calls(getOperation());
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
        // Started here, waited for at attn.exchange_wait: the transfer
        // runs under the kernel between them.
        Value reqs = calls.requests(b);
        inThen(b, receives, [&] {
          calls.start(b, /*isSend=*/false, into.flat, exchange.getSource(),
                      exchange.getTag(), exchange.getComm(), reqs, 1);
        });
        inThen(b, sends, [&] {
          calls.start(b, /*isSend=*/true, send.flat, exchange.getDest(),
                      exchange.getTag(), exchange.getComm(), reqs, 0);
        });
        staging[op] = {send, into, reqs, sends, receives};
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
      auto &[send, into, reqs, sends, receives] = buffers;
      Value requests = reqs;
      inThen(b, receives, [&] { calls.wait(b, requests, 1); });
      inThen(b, sends, [&] { calls.wait(b, requests, 0); });
      memref::DeallocOp::create(b, reqs);
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
