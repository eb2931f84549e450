//===- LegalizeForNVVM.cpp - attn-legalize-for-nvvm -----------------------===//

#include "attn-opt/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNLEGALIZEFORNVVM
#include "attn-opt/GPU/Passes.h.inc"
} // namespace mlir::attn

using namespace mlir;
using namespace mlir::attn;

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
        Value bits =
            vector::BitCastOp::create(b, VectorType::get({1}, i32), row);
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
    auto resType = LLVM::LLVMStructType::getLiteral(b.getContext(),
                                                    SmallVector<Type>(4, f32));
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
