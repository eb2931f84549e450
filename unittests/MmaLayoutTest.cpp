//===- MmaLayoutTest.cpp - mma.sync fragment layout vs MLIR's -------------===//
//
// attn-emulate-gpu executes nvgpu.mma.sync with attn::mmaCoordinate; the GPU
// kernels build fragments with the same layout. This checks it, for every
// lane and slot of A, B and C of m16n8k16, against MLIR's own
// nvgpu::getLaneIdAndValueIdToOperandCoord (which the vector-to-gpu mma.sync
// path relies on), and checks that mmaHolder inverts it.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Conversion/AttnToGPU/MmaLayout.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/NVGPU/Utils/MMAUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>

using namespace mlir;
using namespace mlir::attn;

namespace {

struct Case {
  MmaOperand operand;
  nvgpu::MatMulOperandRole role;
  /// The warp-level shape MLIR describes the operand with (B as N x K).
  int64_t rows, cols;
  Type (*element)(MLIRContext *);
  int64_t slots;
  bool transposed; // MLIR's coordinates are (col, row) of ours
};

Type f16(MLIRContext *ctx) { return Float16Type::get(ctx); }
Type f32(MLIRContext *ctx) { return Float32Type::get(ctx); }

class MmaLayoutTest : public ::testing::TestWithParam<Case> {};

TEST_P(MmaLayoutTest, MatchesMLIR) {
  const Case &c = GetParam();
  MLIRContext ctx;
  ctx.loadDialect<nvgpu::NVGPUDialect, vector::VectorDialect,
                  affine::AffineDialect, arith::ArithDialect,
                  NVVM::NVVMDialect>();
  OpBuilder b(&ctx);
  nvgpu::WarpMatrixInfo info{
      VectorType::get({c.rows, c.cols}, c.element(&ctx)), c.role};
  FailureOr<AffineMap> map =
      nvgpu::getLaneIdAndValueIdToOperandCoord(b, b.getUnknownLoc(), info);
  ASSERT_TRUE(succeeded(map));
  std::set<std::pair<int64_t, int64_t>> seen;
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t slot = 0; slot < c.slots; ++slot) {
      SmallVector<int64_t> rc = map->compose({lane, slot});
      int64_t row = c.transposed ? rc[1] : rc[0];
      int64_t col = c.transposed ? rc[0] : rc[1];
      MmaIndex ours = mmaCoordinate(c.operand, lane, slot);
      EXPECT_EQ(ours.row, row) << "lane " << lane << " slot " << slot;
      EXPECT_EQ(ours.col, col) << "lane " << lane << " slot " << slot;
      MmaHolder back = mmaHolder(c.operand, ours.row, ours.col);
      EXPECT_EQ(back.lane, lane);
      EXPECT_EQ(back.slot, slot);
      seen.insert({ours.row, ours.col});
    }
  // Every element of the operand is held exactly once.
  int64_t elements = c.rows * c.cols;
  EXPECT_EQ(static_cast<int64_t>(seen.size()), elements);
}

INSTANTIATE_TEST_SUITE_P(
    M16N8K16, MmaLayoutTest,
    ::testing::Values(
        Case{MmaOperand::A, nvgpu::MatMulOperandRole::A, 16, 16, f16, 8,
             false},
        Case{MmaOperand::B, nvgpu::MatMulOperandRole::B, 8, 16, f16, 4,
             true},
        Case{MmaOperand::C, nvgpu::MatMulOperandRole::C, 16, 8, f32, 4,
             false}));

} // namespace
