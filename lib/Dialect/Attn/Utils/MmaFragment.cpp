//===- MmaFragment.cpp - Fragments of mma.sync m16n8k16 -------------------===//

#include "attn-opt/Dialect/Attn/Utils/MmaFragment.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/NVGPU/Utils/MMAUtils.h"

using namespace mlir;
using namespace mlir::attn;

int64_t mlir::attn::mmaSlots(MmaOperand operand) {
  return operand == MmaOperand::A ? 8 : 4;
}

/// MLIR's (lane, slot) -> (row, col) map of `operand`, with B's results
/// swapped into K x N (MLIR describes B as N x K).
static AffineMap fragmentMap(OpBuilder &b, Location loc, MmaOperand operand) {
  Type f16 = b.getF16Type(), f32 = b.getF32Type();
  nvgpu::WarpMatrixInfo info;
  switch (operand) {
  case MmaOperand::A:
    info = {VectorType::get({16, 16}, f16), nvgpu::MatMulOperandRole::A};
    break;
  case MmaOperand::B:
    info = {VectorType::get({8, 16}, f16), nvgpu::MatMulOperandRole::B};
    break;
  case MmaOperand::C:
    info = {VectorType::get({16, 8}, f32), nvgpu::MatMulOperandRole::C};
    break;
  }
  FailureOr<AffineMap> map =
      nvgpu::getLaneIdAndValueIdToOperandCoord(b, loc, info);
  assert(succeeded(map) && "m16n8k16 is a supported mma.sync shape");
  if (operand == MmaOperand::B)
    return AffineMap::get(2, 0, {map->getResult(1), map->getResult(0)},
                          b.getContext());
  return *map;
}

std::pair<int64_t, int64_t> mlir::attn::mmaCoordinate(MLIRContext *context,
                                                      MmaOperand operand,
                                                      int64_t lane,
                                                      int64_t slot) {
  OpBuilder b(context);
  SmallVector<int64_t> rc =
      fragmentMap(b, UnknownLoc::get(context), operand).compose({lane, slot});
  return {rc[0], rc[1]};
}

std::pair<Value, Value> mlir::attn::mmaCoordinate(ImplicitLocOpBuilder &b,
                                                  MmaOperand operand,
                                                  Value lane, int64_t slot) {
  AffineMap map = fragmentMap(b, b.getLoc(), operand);
  std::optional<SmallVector<Value, 8>> rc = affine::expandAffineMap(
      b, b.getLoc(), map,
      ValueRange{lane, arith::ConstantIndexOp::create(b, slot)});
  assert(rc && "the fragment maps have no symbols");
  return {(*rc)[0], (*rc)[1]};
}
