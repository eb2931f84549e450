//===- MmaFragment.h - Fragments of mma.sync m16n8k16 -----------*- C++ -*-===//
//
// Which element of an operand of the warp-wide mma.sync.aligned.m16n8k16
// (f16/bf16 inputs, f32 accumulators) a lane holds in each slot of its
// fragment, from MLIR's own nvgpu::getLaneIdAndValueIdToOperandCoord (the
// PTX ISA's layout), in each operand's own orientation: A is M x K
// (16 x 16, vector<4x2>), B is K x N (16 x 8, vector<2x2>), C is M x N
// (16 x 8, vector<2x2>). Slot `s` is element (s / 2, s % 2) of the vector.
//
// The GPU mma.sync kernel builds its fragments with it, and attn-emulate-gpu
// executes nvgpu.mma.sync with it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_ATTN_UTILS_MMAFRAGMENT_H
#define ATTN_DIALECT_ATTN_UTILS_MMAFRAGMENT_H

#include "mlir/IR/ImplicitLocOpBuilder.h"

#include <cstdint>
#include <utility>

namespace mlir::attn {

enum class MmaOperand { A, B, C };

/// Slots of a lane's fragment of `operand` (8 for A, 4 for B and C).
int64_t mmaSlots(MmaOperand operand);

/// (row, col) of slot `slot` of lane `lane`'s fragment of `operand`.
std::pair<int64_t, int64_t> mmaCoordinate(MLIRContext *context,
                                          MmaOperand operand, int64_t lane,
                                          int64_t slot);

/// The same as index arithmetic on a lane id `lane` (in [0, 32)).
std::pair<Value, Value> mmaCoordinate(ImplicitLocOpBuilder &b,
                                      MmaOperand operand, Value lane,
                                      int64_t slot);

} // namespace mlir::attn

#endif // ATTN_DIALECT_ATTN_UTILS_MMAFRAGMENT_H
