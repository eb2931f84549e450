//===- TileSizesTest.cpp - The one source of the kernels' blocks ----------===//
//
// The blocks of the CPU forward kernel, the CPU backward and the GPU
// kernels come from TileSizes.h alone; these are the choices the docs'
// tables (docs/Kernels.md, docs/GPU.md) state.
//
//===----------------------------------------------------------------------===//

#include "attn-opt/Support/TileSizes.h"

#include "gtest/gtest.h"

using namespace mlir::attn;

TEST(TileSizes, Forward) {
  TargetModel avx512 = *TargetModel::get(16);
  TileSizes t = TileSizes::select(avx512, 64);
  EXPECT_EQ(t.queryVectors, 4);
  EXPECT_EQ(t.keysPerStep, 4);
  EXPECT_EQ(t.valueGroup, 4);
  EXPECT_EQ(t.keyBlock, 64);
  EXPECT_EQ(t.queryTile(avx512), 64);
  TargetModel avx2 = *TargetModel::get(8);
  t = TileSizes::select(avx2, 64);
  EXPECT_EQ(t.queryVectors, 2);
  EXPECT_EQ(t.keyBlock, 128);
  EXPECT_EQ(t.queryTile(avx2), 16);
}

TEST(TileSizes, Backward) {
  TargetModel avx512 = *TargetModel::get(16);
  TileSizes t = TileSizes::backward(avx512);
  EXPECT_EQ(t.queryTile(avx512), 64);
  EXPECT_EQ(t.keyBlock, 64);
  TargetModel avx2 = *TargetModel::get(8);
  t = TileSizes::backward(avx2);
  EXPECT_EQ(t.queryTile(avx2), 16);
  EXPECT_EQ(t.keyBlock, 64);
}

TEST(TileSizes, Gpu) {
  // mma.sync: K and V rows of (D + 8 + Dv + 8) halves within 48 KiB.
  GpuTileSizes m = GpuTileSizes::mma(64, 64);
  EXPECT_EQ(m.blockQ, 64);
  EXPECT_EQ(m.blockK, 64);
  EXPECT_EQ(GpuTileSizes::mma(256, 256).blockK, 32);
  // SIMT: a query row per `rowThreads` threads; blocks within 40 KiB.
  GpuTileSizes s = GpuTileSizes::simt(128, 2, 1024);
  EXPECT_EQ(s.blockQ, 64);
  EXPECT_EQ(s.blockK, 32);
  EXPECT_EQ(GpuTileSizes::simt(128, 1, 64 * 4 + 64 * 4).blockK, 64);
  EXPECT_EQ(GpuTileSizes::simt(128, 1, 1 << 20).blockK, 16);
}
