//===- MmaFragmentTest.cpp - mma.sync fragments vs the PTX ISA ------------===//
//
// The GPU mma.sync kernel and attn-emulate-gpu take the fragment layout of
// mma.sync m16n8k16 from MLIR (attn::mmaCoordinate over
// nvgpu::getLaneIdAndValueIdToOperandCoord). This checks, for every lane and
// slot, that it is the PTX ISA's layout as the kernel relies on it ("Matrix
// fragments for mma.m16n8k16", g = lane / 4, t = lane % 4, register r =
// slot / 2, element e = slot % 2), in our orientations (B as K x N); that
// every element is held once; and that the accumulators of two n8 tiles
// form the A fragment of one k16 step (the kernel reuses P in registers).
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Dialect/Attn/Utils/MmaFragment.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <set>

using namespace mlir;
using namespace mlir::attn;

namespace {

class MmaFragmentTest : public ::testing::Test {
protected:
  MmaFragmentTest() {
    ctx.loadDialect<nvgpu::NVGPUDialect, vector::VectorDialect,
                    affine::AffineDialect, arith::ArithDialect>();
  }
  std::pair<int64_t, int64_t> at(MmaOperand op, int64_t lane, int64_t slot) {
    return mmaCoordinate(&ctx, op, lane, slot);
  }
  MLIRContext ctx;
};

/// The PTX ISA's coordinates.
std::pair<int64_t, int64_t> ptx(MmaOperand op, int64_t lane, int64_t slot) {
  int64_t g = lane / 4, t = lane % 4, r = slot / 2, e = slot % 2;
  switch (op) {
  case MmaOperand::A:
    return {g + 8 * (r % 2), 2 * t + e + 8 * (r / 2)};
  case MmaOperand::B:
    return {2 * t + e + 8 * r, g};
  case MmaOperand::C:
    return {g + 8 * r, 2 * t + e};
  }
  return {-1, -1};
}

TEST_F(MmaFragmentTest, MatchesThePtxLayout) {
  for (MmaOperand op : {MmaOperand::A, MmaOperand::B, MmaOperand::C}) {
    std::set<std::pair<int64_t, int64_t>> seen;
    for (int64_t lane = 0; lane < 32; ++lane)
      for (int64_t slot = 0; slot < mmaSlots(op); ++slot) {
        auto rc = at(op, lane, slot);
        EXPECT_EQ(rc, ptx(op, lane, slot))
            << "operand " << static_cast<int>(op) << " lane " << lane
            << " slot " << slot;
        seen.insert(rc);
      }
    // Every element of the 16x16 (A) or 16x8 (B, C) operand, once.
    EXPECT_EQ(static_cast<int64_t>(seen.size()), 32 * mmaSlots(op));
  }
}

TEST_F(MmaFragmentTest, AccumulatorsOfTwoTilesAreAnAFragment) {
  // C slot (i, j) of n8 tile h holds the element A slot 2 (2h + i) + j
  // holds, 8 h columns further: the kernel turns S into P in place.
  for (int64_t lane = 0; lane < 32; ++lane)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j) {
          auto c = at(MmaOperand::C, lane, 2 * i + j);
          auto a = at(MmaOperand::A, lane, 2 * (2 * h + i) + j);
          EXPECT_EQ(a.first, c.first);
          EXPECT_EQ(a.second, c.second + 8 * h);
        }
}

} // namespace
