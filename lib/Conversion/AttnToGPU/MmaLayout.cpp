//===- MmaLayout.cpp - Fragment layout of mma.sync m16n8k16 ---------------===//

#include "attn-opt/Conversion/AttnToGPU/MmaLayout.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::attn;

MmaIndex mlir::attn::mmaCoordinate(MmaOperand operand, int64_t lane,
                                   int64_t slot) {
  int64_t g = lane / 4, t = lane % 4, r = slot / 2, e = slot % 2;
  switch (operand) {
  case MmaOperand::A:
    return {g + 8 * (r % 2), 2 * t + e + 8 * (r / 2)};
  case MmaOperand::B:
    return {2 * t + e + 8 * r, g};
  case MmaOperand::C:
    return {g + 8 * r, 2 * t + e};
  }
  return {0, 0};
}

MmaHolder mlir::attn::mmaHolder(MmaOperand operand, int64_t row,
                                int64_t col) {
  switch (operand) {
  case MmaOperand::A:
    return {(row % 8) * 4 + (col % 8) / 2,
            2 * (row / 8 + 2 * (col / 8)) + col % 2};
  case MmaOperand::B:
    return {col * 4 + (row % 8) / 2, 2 * (row / 8) + row % 2};
  case MmaOperand::C:
    return {(row % 8) * 4 + col / 2, 2 * (row / 8) + col % 2};
  }
  return {0, 0};
}

namespace {
struct IndexOps {
  ImplicitLocOpBuilder &b;
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value mul(Value x, int64_t y) { return arith::MulIOp::create(b, x, c(y)); }
  Value div(Value x, int64_t y) { return arith::DivUIOp::create(b, x, c(y)); }
  Value rem(Value x, int64_t y) { return arith::RemUIOp::create(b, x, c(y)); }
};
} // namespace

MmaCoord mlir::attn::mmaCoordinate(MmaOperand operand, Value lane,
                                   int64_t slot, ImplicitLocOpBuilder &b) {
  IndexOps o{b};
  Value g = o.div(lane, 4), t2 = o.mul(o.rem(lane, 4), 2);
  int64_t r = slot / 2, e = slot % 2;
  switch (operand) {
  case MmaOperand::A:
    return {o.add(g, o.c(8 * (r % 2))), o.add(t2, o.c(e + 8 * (r / 2)))};
  case MmaOperand::B:
    return {o.add(t2, o.c(e + 8 * r)), g};
  case MmaOperand::C:
    return {o.add(g, o.c(8 * r)), o.add(t2, o.c(e))};
  }
  return {g, t2};
}

MmaSource mlir::attn::mmaSource(MmaOperand operand, Value row, Value col,
                                ImplicitLocOpBuilder &b) {
  IndexOps o{b};
  switch (operand) {
  case MmaOperand::A:
    return {o.add(o.mul(o.rem(row, 8), 4), o.div(o.rem(col, 8), 2)),
            o.add(o.mul(o.add(o.div(row, 8), o.mul(o.div(col, 8), 2)), 2),
                  o.rem(col, 2))};
  case MmaOperand::B:
    return {o.add(o.mul(col, 4), o.div(o.rem(row, 8), 2)),
            o.add(o.mul(o.div(row, 8), 2), o.rem(row, 2))};
  case MmaOperand::C:
    return {o.add(o.mul(o.rem(row, 8), 4), o.div(col, 2)),
            o.add(o.mul(o.div(row, 8), 2), o.rem(col, 2))};
  }
  return {row, col};
}
