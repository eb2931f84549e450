//===- MmaLayout.h - Fragment layout of mma.sync m16n8k16 -------*- C++ -*-===//
//
// Which lane holds which element of the operands of the warp-wide
// `mma.sync.aligned.m16n8k16` with f16/bf16 inputs and f32 accumulators
// (PTX ISA, "Matrix fragments for mma.m16n8k16"). With g = lane / 4 and
// t = lane % 4, slot s of a lane's fragment (row-major in its vector<Rx2>,
// register r = s / 2, element e = s % 2) holds
//
//   A (16 x 16, M x K)  row g + 8 (r % 2),  col 2t + e + 8 (r / 2)
//   B (16 x 8,  K x N)  row 2t + e + 8 r,   col g
//   C (16 x 8,  M x N)  row g + 8 r,        col 2t + e
//
// The GPU kernels build fragments with this layout; attn-emulate-gpu uses
// these functions to execute nvgpu.mma.sync on the CPU. A unit test checks
// them against MLIR's own nvgpu::getLaneIdAndValueIdToOperandCoord.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_CONVERSION_ATTNTOGPU_MMALAYOUT_H
#define ATTN_CONVERSION_ATTNTOGPU_MMALAYOUT_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <cstdint>

namespace mlir::attn {

enum class MmaOperand { A, B, C };

/// (row, col) of slot `slot` of lane `lane`'s fragment of `operand`.
struct MmaIndex {
  int64_t row, col;
};
MmaIndex mmaCoordinate(MmaOperand operand, int64_t lane, int64_t slot);

/// The lane and slot holding element (row, col) of `operand`.
struct MmaHolder {
  int64_t lane, slot;
};
MmaHolder mmaHolder(MmaOperand operand, int64_t row, int64_t col);

/// The same functions as IR (index values; `slot` a constant).
struct MmaCoord {
  Value row, col;
};
MmaCoord mmaCoordinate(MmaOperand operand, Value lane, int64_t slot,
                       ImplicitLocOpBuilder &b);
struct MmaSource {
  Value lane, slot;
};
MmaSource mmaSource(MmaOperand operand, Value row, Value col,
                    ImplicitLocOpBuilder &b);

} // namespace mlir::attn

#endif // ATTN_CONVERSION_ATTNTOGPU_MMALAYOUT_H
