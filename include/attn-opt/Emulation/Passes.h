//===- Passes.h - The GPU emulator ------------------------------*- C++ -*-===//
//
// attn-emulate-gpu runs GPU kernels on the CPU (one OpenMP thread per GPU
// thread), and attn-emulate-gpu-pipeline is attn-lower-to-nvvm-pipeline with
// the kernels emulated instead of compiled to PTX: the whole GPU path,
// checked numerically on machines without a GPU. A test aid: registered in
// attn-opt and used by attn-run, never part of the production libraries or
// the plugin.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_EMULATION_PASSES_H
#define ATTN_EMULATION_PASSES_H

#include "attn-opt/Pipelines/Pipelines.h"

#include "mlir/Pass/Pass.h"

namespace mlir::attn {

#define GEN_PASS_DECL
#include "attn-opt/Emulation/Passes.h.inc"

/// The GPU pipeline's kernels (buildGpuKernelsPipeline with `options`), each
/// launch emulated on the CPU, lowered to the LLVM dialect for the host.
void buildEmulateGpuPipeline(OpPassManager &pm,
                             const GpuKernelsOptions &options);

/// Registers attn-emulate-gpu and attn-emulate-gpu-pipeline.
void registerAttnEmulation();

} // namespace mlir::attn

#endif // ATTN_EMULATION_PASSES_H
