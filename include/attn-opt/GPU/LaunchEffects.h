//===- LaunchEffects.h - Memory effects of gpu.launch_func ------*- C++ -*-===//
//
// MLIR's ownership-based buffer deallocation rejects ops with unknown memory
// effects, and gpu.launch_func declares none. attn-lower-to-nvvm-pipeline
// outlines kernels before deallocation, so it attaches this model: a launch
// reads and writes every memref it is given, and memory in general (so it
// is never dead, even once its operands are LLVM pointers). Launches are
// synchronous in the pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_GPU_LAUNCHEFFECTS_H
#define ATTN_GPU_LAUNCHEFFECTS_H

namespace mlir {
class DialectRegistry;
namespace attn {
void registerLaunchFuncEffects(DialectRegistry &registry);
} // namespace attn
} // namespace mlir

#endif // ATTN_GPU_LAUNCHEFFECTS_H
