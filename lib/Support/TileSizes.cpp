//===- TileSizes.cpp - The tile sizes of the fused kernels ----------------===//

#include "attn-opt/Support/TileSizes.h"

#include <algorithm>

using namespace mlir::attn;

void TileSizes::setQueryVectors(const TargetModel &target, int64_t vectors,
                                int64_t valueDim) {
  queryVectors = vectors;
  keysPerStep = std::max<int64_t>(1, target.registers / 2 / vectors);
  // The largest value group dividing Dv within the accumulator budget.
  valueGroup = 1;
  for (int64_t g = keysPerStep; g >= 1; --g)
    if (valueDim % g == 0) {
      valueGroup = g;
      break;
    }
}

TileSizes TileSizes::select(const TargetModel &target, int64_t valueDim) {
  TileSizes s;
  // Four query vectors with 32 registers (then 4 keys x 4 vectors of
  // accumulators: 8 loads feed 16 FMAs), two with 16.
  s.setQueryVectors(target, std::max<int64_t>(1, target.registers / 8),
                    valueDim);
  // S^T block: Nb x Mr floats in at most half of L1, a power of two
  // multiple of NJ.
  int64_t mr = s.queryVectors * target.lanes;
  int64_t budget = target.l1Bytes / 2 / (4 * mr);
  s.keyBlock = s.keysPerStep;
  while (s.keyBlock * 2 <= budget && s.keyBlock * 2 <= 128)
    s.keyBlock *= 2;
  return s;
}

TileSizes TileSizes::backward(const TargetModel &target) {
  TileSizes s;
  s.queryVectors = target.lanes >= 16 ? 4 : 2;
  s.keyBlock = 64;
  return s;
}

/// The largest block of keys (64, halved down to 16) whose rows of
/// `rowBytes` fit in `budget` bytes.
static int64_t keyBlockWithin(int64_t rowBytes, int64_t budget) {
  int64_t keys = 64;
  while (keys > 16 && keys * rowBytes > budget)
    keys /= 2;
  return keys;
}

GpuTileSizes GpuTileSizes::mma(int64_t headDim, int64_t valueDim) {
  GpuTileSizes s;
  s.blockQ = 64;
  s.blockK = keyBlockWithin((headDim + 8 + valueDim + 8) * 2, 48 * 1024);
  return s;
}

GpuTileSizes GpuTileSizes::simt(int64_t threads, int64_t rowThreads,
                                int64_t keyRowBytes) {
  GpuTileSizes s;
  s.blockQ = threads / rowThreads;
  s.blockK = keyBlockWithin(keyRowBytes, 40 * 1024);
  return s;
}
